"""``mcpbind host``: server/tools.mdx §User Interaction Model ("Present confirmation prompts to
the user for operations, to ensure a human is in the loop") in a terminal host."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpbind.cli.host_cmd import host

from .helpers import SERVERS
from .pty_helpers import HostTerminal, read_until, screen_text, spawn_host, wait_exit


def _write_config(folder: Path, servers: dict[str, Any]) -> Path:
    path = folder / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


NORMAL = {"command": sys.executable, "args": [SERVERS, "normal"]}
CRASHY = {
    "command": sys.executable,
    "args": [SERVERS, "crashy"],
    "approval": {"tools": {"echo": "deny"}},
}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """One server, ``s`` (each stdio server costs a Python start: keep the count low)."""
    return _write_config(tmp_path, {"s": NORMAL})


@pytest.fixture
def two_servers(tmp_path: Path) -> Path:
    """``s`` and ``c`` (whose ``echo`` the policy denies)."""
    return _write_config(tmp_path, {"s": NORMAL, "c": CRASHY})


def test_run_mode_lists_and_calls(two_servers: Path) -> None:
    """tools.mdx §User Interaction Model: the catalog shows which tools are exposed (with the
    policy verdict); --no answers the confirmation prompts; denied calls are reported and make
    the exit status 1."""
    runner = CliRunner()
    result = runner.invoke(
        host,
        [
            "-c",
            str(two_servers),
            "--no",
            "-r",
            "servers",
            "-r",
            "tools",
            "-r",
            'call s__echo {"text": "hi"}',
            "-r",
            'call s__write {"value": "v"}',
            "-r",
            'call c__echo {"text": "x"}',
            "-r",
            "audit",
            "-r",
            "read mem://normal/items/3",
        ],
    )
    out = result.output
    assert result.exit_code == 1, out  # some commands were denied
    assert "server c: running, stdio (crashy 1.0.0), protocol 2026-07-28, pid" in out
    assert (
        "s__write(value) [ask]" in out
        and "s__echo(text) [allow]" in out
        and "c__echo(text) [deny]" in out
    )
    assert "normal: hi" in out
    assert "Allow this call? [y/N] n (--no)" in out
    assert "error [-32010]: Tool call s__write was denied" in out
    assert "error [-32010]: Tool call c__echo was denied: per-tool policy: deny" in out
    assert "tool s/write: deny" in out
    assert "item 3 of normal" in out


def test_yes_mode_and_interactive_input(config: Path) -> None:
    """tools.mdx §User Interaction Model: --yes approves every confirmation prompt; typed
    commands and answers work through stdin too."""
    runner = CliRunner()
    result = runner.invoke(host, ["-c", str(config), "--yes", "-r", 'call s__write {"value": "v"}'])
    assert result.exit_code == 0, result.output
    assert "wrote v" in result.output
    typed = 'call s__wipe\ny\ncall s__nope\nprompt s__greet {"who": "Bo"}\nbogus\nquit\n'
    result = runner.invoke(host, ["-c", str(config)], input=typed)
    assert result.exit_code == 0, result.output
    assert "wiped" in result.output
    assert "error: unknown tool 's__nope'; see tools" in result.output
    assert "Hello Bo from normal" in result.output
    assert "unknown command 'bogus'" in result.output


def test_bad_config_exits_with_usage_error(tmp_path: Path) -> None:
    """architecture §Host ("Controls client connection permissions"): a configuration error
    names the server and the key and exits 2."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"mcpServers": {"x": {"command": "a", "timeout": -1}}}))
    result = CliRunner().invoke(host, ["-c", str(path)])
    assert result.exit_code == 2
    assert "server 'x', key 'timeout'" in result.output


def _server_pids(seen: bytearray) -> list[int]:
    text = screen_text(seen)
    return [int(pid) for pid in re.findall(rb"server \w+: running, stdio .*, pid (\d+)", text)]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_host_in_a_real_terminal_answers_an_approval_prompt(two_servers: Path) -> None:
    """tools.mdx §User Interaction Model, in a pty: the user is asked before a call the policy
    says to ask about; "y" runs it, "n" refuses it; basic/lifecycle.mdx §Shutdown: quit shuts
    every server process down."""
    pid, fd = spawn_host(two_servers)
    seen = bytearray()
    try:
        read_until(fd, b"mcpbind>", seen)
        assert b"2 of 2 servers running (c, s)" in screen_text(seen)
        os.write(fd, b"servers\r")
        read_until(fd, b"server s: running", seen)
        read_until(fd, b"mcpbind>", seen)
        servers = _server_pids(seen)
        assert len(servers) == 2
        os.write(fd, b'call s__write {"value": "first"}\n')
        read_until(fd, b"Allow this call? [y/N]", seen)
        os.write(fd, b"y\n")
        read_until(fd, b"wrote first", seen)
        del seen[:]
        os.write(fd, b'call s__write {"value": "second"}\n')
        read_until(fd, b"Allow this call? [y/N]", seen)
        os.write(fd, b"n\n")
        read_until(fd, b"was denied", seen)
        assert b"wrote second" not in seen
        os.write(fd, b"quit\n")
        status = wait_exit(pid, fd)
        pid = 0
        assert os.waitstatus_to_exitcode(status) == 0
        assert all(_gone(server) for server in servers)
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)


def test_ctrl_d_at_the_prompt_exits_and_stops_the_servers(config: Path) -> None:
    """basic/lifecycle.mdx §Shutdown (stdio): Ctrl-D at the prompt ends the host at once
    (exit 0, as a shell does; Ctrl-C there only clears the line: test_shell_keys.py) and the
    server process is gone."""
    shell = HostTerminal(config, config.with_name("history"))
    try:
        shell.expect(b"mcpbind>")
        shell.send(b"servers\r")
        shell.expect(b"server s: running")
        (server,) = _server_pids(bytearray(b"server s: running" + shell.expect(b"mcpbind>")))
        shell.send(b"\x04")
        assert shell.wait() == 0
        assert _gone(server)
    finally:
        shell.close()


def test_sampling_and_elicitation_are_shown_for_approval(tmp_path: Path) -> None:
    """client/sampling.mdx §User Interaction Model (view and edit the prompt, then approve) and
    client/elicitation.mdx §Security Considerations (which server asks, decline possible): the
    terminal host shows both requests and sends what the user typed. The server is pinned to
    the handshake era (``protocolVersion``), where a refusal goes back to the tool."""
    config = _write_config(tmp_path, {"s": {**NORMAL, "protocolVersion": "handshake"}})
    typed = "\n".join(
        [
            'call s__sample {"prompt": "hello"}',
            "y",  # allow the tool call
            "e",  # edit the sampling request
            "hello, edited",
            "a typed reply",  # the user plays the model
            'call s__ask {"question": "Colour?"}',
            "y",  # allow the tool call
            "y",  # answer the form
            "blue",
            'call s__sample {"prompt": "again"}',
            "y",
            "n",  # refuse the sampling request
            "audit",
            "quit",
        ]
    )
    result = CliRunner().invoke(host, ["-c", str(config)], input=typed + "\n")
    out = result.output
    assert result.exit_code == 0, out
    assert "? server 's' asks the model (sampling/createMessage):" in out
    assert "  user: hello" in out
    assert "human: a typed reply" in out
    assert "? server 's' asks you: Colour?" in out
    assert 'accept {"answer": "blue"}' in out
    assert "error -1: User rejected sampling request" in out
    assert "sampling s/createMessage: edit (edited at the terminal)" in out
    assert "elicitation s/Colour?: accept (user answered)" in out


WAITER = {"command": sys.executable, "args": [SERVERS, "waiter"]}


def test_run_mode_marks_an_error_result_and_exits_1(tmp_path: Path) -> None:
    """Issue 31 item 5: ``-r 'call …'`` on a tool whose result is ``isError`` (here a bare
    "Internal error") says it was an error and exits 1."""
    path = _write_config(tmp_path, {"w": WAITER})
    result = CliRunner().invoke(host, ["-c", str(path), "-r", "call w__fail"])
    assert result.exit_code == 1, result.output
    assert "error: w__fail reported an error (isError)" in result.output, result.output


def test_hints_name_the_shell_commands(tmp_path: Path) -> None:
    """Issue 31 item 5: an unknown name points at the shell command that lists them, and a
    URI two servers offer at ``read URI SERVER``; not at the Python API."""
    path = _write_config(tmp_path, {"a": NORMAL, "b": NORMAL})
    commands = ["call nope", "prompt nope", "restart nope", "read mem://normal/info"]
    args = [arg for command in commands for arg in ("-r", command)]
    result = CliRunner().invoke(host, ["-c", str(path), *args])
    out = result.output
    assert result.exit_code == 1, out
    assert "error: unknown tool 'nope'; see tools" in out
    assert "error: unknown prompt 'nope'; see prompts" in out
    assert "error: unknown server 'nope'; see servers" in out
    assert "offered by a, b; say which: read mem://normal/info SERVER" in out
    assert "Host.catalog" not in out and "server=" not in out


def test_run_mode_marks_an_error_result_of_start_answered_at_once(tmp_path: Path) -> None:
    """The sibling: on 2026-07-28 ``start`` of a tool without task support is answered at
    once; an ``isError`` answer is marked and counted there too."""
    path = _write_config(tmp_path, {"w": {**WAITER, "protocolVersion": "stateless"}})
    result = CliRunner().invoke(host, ["-c", str(path), "-r", "start w__fail"])
    assert "w__fail ran without a task:" in result.output, result.output
    assert "error: w__fail reported an error (isError)" in result.output
    assert result.exit_code == 1, result.output
