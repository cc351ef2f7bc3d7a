"""The README and the documentation site (docs/**/*.md) keep working: every Python block
compiles, blocks marked ``<!-- docs test: run -->`` run, and blocks marked
``<!-- docs test: this block is examples/X.py -->`` are that file verbatim (and the walkthrough
clients, run, talk to their servers)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARK = "<!-- docs test: "


class Block:
    """One fenced Python block of a page; ``mark`` is its ``docs test`` comment, if any."""

    def __init__(self, page: Path, line: int, code: str, mark: str | None) -> None:
        self.page, self.line, self.code, self.mark = page, line, code, mark
        self.where = f"{page.relative_to(ROOT)}:{line}"

    @property
    def example(self) -> str | None:
        prefix = "this block is "
        return self.mark[len(prefix) :] if self.mark and self.mark.startswith(prefix) else None


def blocks(page: Path) -> list[Block]:
    """The ```python blocks of ``page`` (indented ones too, as in tabs and lists)."""
    lines = page.read_text(encoding="utf-8").split("\n")
    found, i = [], 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        if stripped == "```python":
            indent = lines[i][: len(lines[i]) - len(stripped)]
            end = lines.index(f"{indent}```", i + 1)
            code = textwrap.dedent("\n".join(lines[i + 1 : end])) + "\n"
            above = lines[i - 1].strip() if i else ""
            mark = above[len(MARK) : -len(" -->")] if above.startswith(MARK) else None
            found.append(Block(page, i + 1, code, mark))
            i = end
        i += 1
    return found


BLOCKS = [block for page in PAGES for block in blocks(page)]
MARKS = {block.mark for block in BLOCKS if block.mark}


def test_the_pages_have_the_walkthrough_blocks() -> None:
    examples = {block.example for block in BLOCKS if block.example}
    assert examples == {
        "examples/quickstart_server.py",
        "examples/quickstart_client.py",
        "examples/hello_server.py",
        "examples/hello_client.py",
    }
    readme = {block.example for block in BLOCKS if block.page.name == "README.md"}
    assert {"examples/hello_server.py", "examples/hello_client.py"} <= readme


def test_every_mark_is_known() -> None:
    """A misspelt mark would silently turn a run or a comparison into a mere compile."""
    assert {
        mark for mark in MARKS if mark != "run" and not mark.startswith("this block is ")
    } == set()


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.example], ids=lambda b: b.where)
def test_a_walkthrough_block_is_its_example_file(block: Block) -> None:
    assert block.example is not None
    assert block.code == (ROOT / block.example).read_text(encoding="utf-8"), (
        f"{block.where} differs from {block.example}"
    )


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.where)
def test_every_python_block_compiles(block: Block) -> None:
    """Snippets may use ``await`` at top level (they run inside an async function)."""
    compile(block.code, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def run_python(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.mark == "run"], ids=lambda b: b.where)
def test_a_runnable_block_runs(block: Block) -> None:
    done = run_python(["-c", block.code])
    assert done.returncode == 0, f"{block.where}:\n{done.stderr}"


def test_there_are_runnable_blocks() -> None:
    """The run test above is not vacuous: the pages mark blocks to run (servers, migration)."""
    assert len([b for b in BLOCKS if b.mark == "run"]) >= 3


def test_the_quickstart_client_talks_to_the_quickstart_server() -> None:
    """The walkthrough of the server guide: the client spawns the server file and uses it."""
    done = run_python(["examples/quickstart_client.py"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "tools: ['add_note', 'count_notes']",
        "added: {'id': 'todo', 'text': 'write docs'}",
        "index: ['hello', 'todo']",
        "prompt: 1 message(s)",
    ]


def test_the_getting_started_client_talks_to_its_server() -> None:
    done = run_python(["examples/hello_client.py"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["tools: ['greet']", "greet: {'result': 'Hello, MCP!'}"]
