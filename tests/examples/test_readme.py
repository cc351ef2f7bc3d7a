"""The README's walkthrough keeps working: its code blocks that stand for example files are
those files, verbatim; every Python block compiles; the quick start's server and client run."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"(?:<!-- README test: this block is (\S+) -->\n)?```python\n(.*?)```", re.S)
BLOCKS = [
    (m.group(1), m.group(2), README.count("\n", 0, m.start()) + 1) for m in BLOCK.finditer(README)
]


def test_the_readme_has_the_walkthrough_blocks() -> None:
    named = {name for name, _, _ in BLOCKS if name}
    assert named == {"examples/quickstart_server.py", "examples/quickstart_client.py"}


@pytest.mark.parametrize(
    ("name", "code", "line"), [b for b in BLOCKS if b[0]], ids=lambda v: str(v)
)
def test_a_walkthrough_block_is_its_example_file(name: str, code: str, line: int) -> None:
    assert code == (ROOT / name).read_text(encoding="utf-8"), (
        f"README.md:{line} differs from {name}"
    )


@pytest.mark.parametrize(("name", "code", "line"), BLOCKS, ids=[f"line{b[2]}" for b in BLOCKS])
def test_every_python_block_compiles(name: str | None, code: str, line: int) -> None:
    """Snippets may use ``await`` at top level (they run inside an async function)."""
    compile(code, f"README.md:{line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def test_the_quickstart_client_talks_to_the_quickstart_server() -> None:
    """The two commands of the quick start: the client spawns the server file and uses it."""
    done = subprocess.run(
        [sys.executable, "examples/quickstart_client.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "tools: ['add_note', 'count_notes']",
        "added: {'id': 'todo', 'text': 'write docs'}",
        "index: ['hello', 'todo']",
        "prompt: 1 message(s)",
    ]
