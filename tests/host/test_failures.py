"""Failure output (issue 14.3), lifecycle.mdx §Initialization and basic/transports.mdx §stdio
("The server MAY write UTF-8 strings to its standard error for logging purposes"): a failing
server's stderr is shown once with its cause, retries are bounded, a command that cannot be
found is not retried, and each server's state and last error are there to show."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpbind.cli.host_cmd import host as host_command
from mcpbind.host import Backoff, Host, HostEvent, ServerConfig
from mcpbind.host.failures import Failure

from .helpers import node_binary, wait_for

FAST = Backoff(initial=0.02, factor=2.0, maximum=0.1, max_attempts=3)
NODE_TRACE = """node:internal/modules/cjs/loader:1210
  throw err;
  ^

Error: Cannot find module '/x/missing.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
    at Module._load (node:internal/modules/cjs/loader:1038:27) {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.20.2"""


def test_the_cause_is_one_line() -> None:
    """The exit status and the stderr line that names the error, whatever wrote it."""
    node = Failure.of_reason(
        f"[-32000] Connection closed: server process 7 exited with code 1; stderr tail:\n"
        f"{NODE_TRACE}"
    )
    assert node.summary == (
        "server process 7 exited with code 1: Error: Cannot find module '/x/missing.js'"
    )
    assert node.stderr == NODE_TRACE
    python = Failure.of_reason(
        "server process 8 exited with code 1; stderr tail:\nTraceback (most recent call last):\n"
        "  File \"s.py\", line 1, in <module>\nModuleNotFoundError: No module named 'x'"
    )
    assert python.summary.endswith(": ModuleNotFoundError: No module named 'x'")
    plain = Failure.of_reason("server process 9 exited with code 2; stderr tail:\nbad flag\n")
    assert plain.summary == "server process 9 exited with code 2: bad flag"
    assert plain.same_as(Failure.of_reason("server process 10 exited with code 2: bad flag"))


@pytest.mark.anyio
async def test_a_missing_command_fails_once_without_retry() -> None:
    """A command that cannot be found cannot start on a retry either: one event, no retry,
    state ``failed`` with the cause; restarting it is the user's call."""
    events: list[HostEvent] = []
    config = {
        "nocmd": ServerConfig(command="no-such-mcp-command-xyz"),
        "nodir": ServerConfig(command=sys.executable, cwd="/nonexistent/dir"),
    }
    async with Host(config, backoff=FAST, on_event=events.append) as host:
        states = {s.name: s for s in host.servers()}
        await host.restart_server("nocmd")
        again = {s.name: s.status for s in host.servers()}
    assert states["nocmd"].status == "failed"
    assert states["nocmd"].error == "command not found: 'no-such-mcp-command-xyz' (not retried)"
    assert states["nodir"].error == "working directory not found: '/nonexistent/dir' (not retried)"
    assert again["nocmd"] == "failed"
    failed = sorted((e.server, e.message) for e in events if e.kind == "failed")
    hint = " (not retried: fix the configuration, then restart the server)"
    assert failed == [
        ("nocmd", f"command not found: 'no-such-mcp-command-xyz'{hint}"),
        ("nocmd", f"command not found: 'no-such-mcp-command-xyz'{hint}"),  # the restart
        ("nodir", f"working directory not found: '/nonexistent/dir'{hint}"),
    ]
    assert not any(e.kind == "retrying" for e in events)


@pytest.mark.anyio
async def test_stderr_once_and_bounded_retries(tmp_path: Path) -> None:
    """A server that dies at start (here: a missing script) is retried a bounded number of
    times; its stderr is reported once, each retry says it failed the same way, and the
    host then gives up with the cause as the last error."""
    events: list[HostEvent] = []
    script = str(tmp_path / "missing_server.py")
    config = {"broken": ServerConfig(command=sys.executable, args=[script])}
    async with Host(config, backoff=FAST, on_event=events.append) as host:
        await wait_for(lambda: host.servers()[0].status == "failed")
        state = host.servers()[0]
    mine = [e for e in events if e.server == "broken"]
    assert [e.kind for e in mine if e.kind in ("stderr", "failed", "retrying")] == [
        "failed",
        "stderr",
        "retrying",
        "retrying",
        "failed",
    ]
    stderr = next(e.message for e in mine if e.kind == "stderr")
    assert "can't open file" in stderr and "missing_server.py" in stderr
    assert state.attempts == 3
    assert state.error is not None and "\n" not in state.error
    assert "exited with code 2: " in state.error and "can't open file" in state.error
    assert state.error.endswith("(gave up after 3 attempts)")
    assert state.stderr == stderr


def test_the_shell_shows_node_stderr_once(tmp_path: Path) -> None:
    """The issue's case: ``node missing.js``. The stack trace appears once (not once per
    handler and again per retry); ``servers`` shows state and last error in one line."""
    node = node_binary()
    if node is None:
        pytest.skip("node is not installed")
    config = tmp_path / "servers.json"
    missing = str(tmp_path / "missing.js")
    servers = {"n": {"command": node, "args": [missing]}, "x": {"command": "no-such-xyz"}}
    config.write_text(json.dumps({"mcpServers": servers}))
    result = CliRunner().invoke(host_command, ["-c", str(config), "-r", "servers"])
    out = result.output
    assert out.count("at Module._load") == 1, out
    assert out.count("[host] server 'n' stderr (last lines):") == 1
    assert "Traceback" not in out
    assert out.count("[host] server 'x' failed: command not found: 'no-such-xyz'") == 1
    assert "server x: failed, stdio, 1 failed attempt - last error: command not found" in out
    line = next(x for x in out.splitlines() if x.startswith("server n: "))
    assert "last error: server process" in line and "Cannot find module" in line
