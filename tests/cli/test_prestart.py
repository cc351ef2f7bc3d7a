"""``mcpbind ls SERVER`` starts its stdio server before click is imported (issue 15, cold
start; not spec behaviour): only when nothing else on the command line changes how the server
is started, taken over once by the target of the same SERVER, killed when nobody took it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from mcpbind.cli import prestart

from .conftest import NOTES, ROOT

_SLEEPER = f"{sys.executable} -c 'import time; time.sleep(60)'"


@pytest.fixture(autouse=True)
def _nothing_left_started() -> Iterator[None]:
    yield
    prestart.discard_unused()


@pytest.mark.parametrize(
    "argv",
    [
        ["ls"],
        ["call", _SLEEPER, "echo"],
        ["ls", "--env", "A=B", _SLEEPER],
        ["ls", _SLEEPER, "--env", "A=B"],
        ["ls", _SLEEPER, "--cwd", "/"],
        ["ls", _SLEEPER, "--help"],
        ["ls", "http://127.0.0.1:9/mcp"],
        ["ls", "'unterminated"],
        ["ls", "/no/such/program-mcpbind"],
    ],
)
def test_nothing_is_started_unless_the_command_line_is_a_plain_ls(argv: list[str]) -> None:
    prestart.prestart(argv)
    assert prestart._started == {}


def test_a_plain_ls_server_is_taken_once_and_only_as_started() -> None:
    prestart.prestart(["ls", _SLEEPER, "--json", "-v"])
    assert prestart.take(_SLEEPER, {"A": "B"}, None) is None  # other environment: not it
    assert prestart.take(_SLEEPER, {}, "/") is None  # other directory: not it
    started = prestart.take(_SLEEPER, {}, None)
    assert started is not None
    try:
        assert started.process.poll() is None  # running
        assert prestart.take(_SLEEPER, {}, None) is None  # taken once
    finally:
        started.discard()
    assert started.process.returncode is not None


def test_a_started_server_nobody_took_is_killed() -> None:
    prestart.prestart(["ls", _SLEEPER])
    (started,) = prestart._started.values()
    prestart.discard_unused()
    assert started.process.returncode is not None  # discard waited for it
    assert prestart._started == {}


_PROBE = """
import subprocess, sys
seen = []
original = subprocess.Popen.__init__
def record(self, *args, **kwargs):
    seen.append(sorted(m for m in ("click", "anyio", "inspect", "dataclasses") if m in sys.modules))
    original(self, *args, **kwargs)
subprocess.Popen.__init__ = record
sys.argv = ["mcpbind", "ls", {server!r}]
from mcpbind.cli import run
try:
    run()
except SystemExit as exc:
    assert not exc.code, exc.code
print("SPAWNS", len(seen), "FIRST", seen[0])
"""


def test_the_console_script_starts_a_plain_ls_server_before_importing_click() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(server=NOTES)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "Notes (mcpbind-notes)" in done.stdout
    assert "SPAWNS 1 FIRST []" in done.stdout  # one server, started before click and anyio
