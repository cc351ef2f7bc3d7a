"""The README's install works on a fresh machine as written: its commands, run in a checkout with
a new venv (no site packages), give a working ``mcpbind`` that talks to the README's server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def install_commands() -> list[str]:
    """The ``sh`` block marked ``<!-- install test -->``, one command per line."""
    block = re.search(r"<!-- install test -->\n```sh\n(.*?)```", README, re.S)
    assert block is not None, "README.md has no <!-- install test --> block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_install_block_is_the_checkout_install() -> None:
    """No command of it needs an index that does not have mcpbind (pip install 'mcpbind[...]')."""
    commands = install_commands()
    assert commands == [
        "python3 -m venv .venv && . .venv/bin/activate",
        "pip install '.[http]'",
    ]


@pytest.mark.slow
def test_the_readme_install_works_in_a_fresh_venv(tmp_path: Path) -> None:
    """The commands run as written by sh, in a copy of the checkout's sources (so the venv they
    make is a new one), then ``mcpbind call`` on the README's server from the new venv."""
    checkout = tmp_path / "mcpbind"
    checkout.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, checkout / name)
    for folder in ("runtime", "generated", "codegen", "examples"):
        shutil.copytree(
            ROOT / folder, checkout / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    python_dir = str(Path(sys.executable).resolve().parent)
    env["PATH"] = os.pathsep.join([python_dir, *env.get("PATH", "").split(os.pathsep)])
    script = " && ".join(
        [
            *install_commands(),
            'mcpbind call examples/hello_server.py greet --args \'{"name": "MCP"}\'',
        ]
    )
    done = subprocess.run(
        ["sh", "-c", script],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip().splitlines()[-1] == "Hello, MCP!"
    assert (checkout / ".venv" / "bin" / "mcpbind").exists()
