"""The documentation site as the tests see it: built once per test session with the same
command as ``make docs`` (``mkdocs build --strict``), and its Sphinx inventory read back."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import zlib
from pathlib import Path

from mcpbind._api import PUBLIC_MODULES

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["PUBLIC_MODULES", "build", "inventory", "public_names"]


def public_names() -> list[str]:
    """Every ``module.name`` of the declared public API."""
    names = []
    for module in PUBLIC_MODULES:
        names += [f"{module}.{name}" for name in importlib.import_module(module).__all__]
    return names


def build(site_dir: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` into ``site_dir``; the warnings (failures) are on stderr."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def inventory(site_dir: Path) -> dict[str, str]:
    """The site's ``objects.inv`` (Sphinx inventory v2): documented name -> its page URL."""
    data = (site_dir / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):  # four plain-text header lines, then the zlib-compressed body
        header_end = data.index(b"\n", header_end) + 1
    entries = {}
    for line in zlib.decompress(data[header_end:]).decode().splitlines():
        name, _domain, _priority, uri = line.split(" ", 4)[:4]
        entries[name] = uri
    return entries
