"""Fetch the pinned schemas: copy from a local checkout when there is one, else download.

Either way every file's sha256 is checked against the manifest, so a corrupted or moved upstream
file fails loudly instead of silently changing the generated code.
"""

from __future__ import annotations

import hashlib
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from .pipeline import read_manifest


class SchemaMismatch(Exception):
    """A schema or example file does not have the pinned sha256."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as resp:
        data: bytes = resp.read()
    return data


def _place(dest: Path, expected: str, local: Path, url: str, offline: bool) -> str:
    if dest.exists() and _sha(dest.read_bytes()) == expected:
        return "ok"
    if local.exists():
        data, how = local.read_bytes(), f"copied from {local}"
    elif offline:
        raise SchemaMismatch(f"{dest}: missing and --offline given")
    else:
        data, how = _fetch(url), f"downloaded {url}"
    got = _sha(data)
    if got != expected:
        raise SchemaMismatch(f"{dest}: sha256 {got} != pinned {expected} ({how})")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return how


def sync_schemas(
    manifest: Path, dest_root: Path, shared: Path, *, offline: bool = False
) -> Iterator[str]:
    raw, pins = read_manifest(manifest)
    for pin in pins:
        url = raw["raw_url"].format(
            repository=raw["upstream_repository"], commit=raw["upstream_commit"], path=pin.path
        )
        how = _place(
            dest_root / pin.version / "schema.json",
            pin.sha256,
            shared / pin.version / "schema.json",
            url,
            offline,
        )
        yield f"{pin.version}: schema.json {how}"
        if pin.examples:
            ex_dest = dest_root / pin.version / "examples"
            expected = {ex_dest / rel for rel in pin.examples}
            if ex_dest.exists():
                for stray in [p for p in ex_dest.rglob("*") if p.is_file()]:
                    if stray not in expected:
                        stray.unlink()
            hows = set()
            for rel, sha in pin.examples.items():
                ex_url = url.rsplit("/", 1)[0] + "/examples/" + rel
                hows.add(
                    _place(
                        ex_dest / rel, sha, shared / pin.version / "examples" / rel, ex_url, offline
                    ).split(" ")[0]
                )
            yield f"{pin.version}: {len(pin.examples)} examples ({', '.join(sorted(hows))})"
