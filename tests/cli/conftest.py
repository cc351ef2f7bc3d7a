"""Shared pieces of the CLI tests: the bundled example servers as SERVER command lines."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mcpbind.cli import main

ROOT = Path(__file__).resolve().parents[2]
PYTHON = shlex.quote(sys.executable)
NOTES = f"{PYTHON} -m examples.notes_server"
FILES = f"{PYTHON} -m examples.files_server"
HERE = Path(__file__).resolve().parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def run(*args: str | Path, cwd: bool = True) -> Result:
    """``mcpbind ARGS`` through click's runner; stdio servers start in the repository root."""
    argv: Sequence[str] = [str(a) for a in args]
    if cwd:
        argv = [*argv, "--cwd", str(ROOT)]
    result = CliRunner().invoke(main, argv, prog_name="mcpbind")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a crash, not an exit code: show its traceback
    return result
