"""Load -> check -> model -> emit, for one version or for every pinned one."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .build import Builder
from .emit import emit_package, emit_root_init
from .merge import merge_models
from .methods import extract_methods
from .model import Model
from .overrides import OverrideTracker


@dataclass(frozen=True)
class Pinned:
    version: str
    path: str
    sha256: str
    examples: dict[str, str]


def read_manifest(path: Path) -> tuple[dict[str, Any], list[Pinned]]:
    raw = json.loads(path.read_text())
    pins = [
        Pinned(v["version"], v["path"], v["sha256"], dict(v.get("examples", {})))
        for v in raw["versions"]
    ]
    return raw, pins


def package_name(version: str) -> str:
    """``2025-11-25`` -> ``v2025_11_25``; ``draft-2026-03-31`` -> ``vdraft_2026_03_31``."""
    return "v" + re.sub(r"\W", "_", version)


def load_schema(path: Path, expected_sha256: str | None = None) -> tuple[dict[str, Any], str]:
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    if expected_sha256 is not None and sha != expected_sha256:
        raise ValueError(f"{path}: sha256 {sha} does not match the pinned {expected_sha256}")
    schema = json.loads(data)
    if not isinstance(schema, dict):
        raise ValueError(f"{path}: not a JSON object")
    return schema, sha


def build_model(
    schema: dict[str, Any],
    version: str,
    source_path: str,
    sha256: str,
    tracker: OverrideTracker | None = None,
) -> Model:
    tracker = tracker or OverrideTracker(version)
    defs = Builder(schema, tracker).build()
    methods = extract_methods(schema, defs, version, tracker)
    tracker.check_all_used()
    return Model(version, (version,), source_path, sha256, defs, methods)


def generate_version(
    schema_path: Path,
    version: str,
    out_dir: Path,
    source_path: str | None = None,
    tracker: OverrideTracker | None = None,
) -> dict[Path, str]:
    """One version's package under ``out_dir``, and ``out_dir``'s own ``__init__.py``, so the
    result imports as written (its helpers are ``mcpbind_types._common``, not copied). Versions
    generated into ``out_dir`` before stay listed in its ``VERSIONS``."""
    schema, sha = load_schema(schema_path)
    source = source_path or f"schema/{version}/schema.json"
    model = build_model(schema, version, source, sha, tracker)
    files = emit_package(model, out_dir / package_name(version))
    versions = {v: s for v, s in generated_versions(out_dir).items() if v != version}
    root = emit_root_init({**versions, version: sha}, out_dir, pinned=False)
    files[out_dir / "__init__.py"] = root
    return files


_VERSION_HEADER = re.compile(r"^# Schema version: (.+)\n(?:#.*\n)*?# sha256: (\w+)$", re.MULTILINE)


def generated_versions(out_dir: Path) -> dict[str, str]:
    """Version -> sha256 of the per-version packages already generated into ``out_dir``."""
    found: dict[str, str] = {}
    for init in sorted(out_dir.glob("v*/__init__.py")):
        m = _VERSION_HEADER.search(init.read_text())
        if m and package_name(m[1]) == init.parent.name:
            found[m[1]] = m[2]
    return found


def generate_all(manifest: Path, schema_root: Path, out_dir: Path) -> dict[Path, str]:
    _, pins = read_manifest(manifest)
    models: list[Model] = []
    files: dict[Path, str] = {}
    for pin in pins:
        schema, sha = load_schema(schema_root / pin.version / "schema.json", pin.sha256)
        model = build_model(schema, pin.version, pin.path, sha)
        models.append(model)
        files.update(emit_package(model, out_dir / package_name(pin.version)))
    unified = merge_models(models)
    files.update(emit_package(unified, out_dir / "unified"))
    files[out_dir / "__init__.py"] = emit_root_init({p.version: p.sha256 for p in pins}, out_dir)
    return files


def write_files(files: dict[Path, str]) -> None:
    for path, text in sorted(files.items()):
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


#: The hand-written modules of the package root, kept beside the generated ones (as lsprotocol
#: keeps ``_hooks.py``): never written, removed or compared by the generator.
HAND_WRITTEN = ("_common.py", "_lazy.py")


def stray_files(files: dict[Path, str], out_dir: Path) -> list[Path]:
    """.py files under ``out_dir`` that the generator does not write and nobody wrote by hand."""
    keep = set(files) | {out_dir / name for name in HAND_WRITTEN}
    return [p for p in sorted(out_dir.rglob("*.py")) if p not in keep]


def diff_files(files: dict[Path, str], out_dir: Path) -> list[str]:
    """Paths that differ from what is on disk, including stray .py files nobody generates."""
    problems = [
        str(p) for p, text in sorted(files.items()) if not p.exists() or p.read_text() != text
    ]
    return problems + [f"{p} (not generated)" for p in stray_files(files, out_dir)]
