"""VS Code's ``${input:ID}`` in a Host configuration (issue 31 item 6): ``mcpbind host`` asks
for each declared input on the terminal, once, hiding a ``password`` (as VS Code prompts
for them), and without a terminal refuses each server using one with one warning line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpbind.host import ConfigError, parse_config
from mcpbind.host.config_file import VsCodeInput

from .helpers import SERVERS
from .pty_helpers import HostTerminal

PROMPT = b"mcpbind>"
SECRET = "s3cret-Value-42"

INPUTS = [
    {"type": "promptString", "id": "token", "description": "API token", "password": True},
    {"type": "pickString", "id": "region", "description": "Region", "options": ["eu", "us"]},
    {"type": "promptString", "id": "user", "description": "User name", "default": "ada"},
    {"type": "command", "id": "picked", "command": "extension.pickSomething"},
]


def _entry(**env: str) -> dict[str, Any]:
    return {"type": "stdio", "command": sys.executable, "args": [SERVERS, "environ"], "env": env}


def _config(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"inputs": INPUTS, "servers": servers}))
    return path


def test_each_input_is_asked_once_and_its_answer_stands_in_every_value() -> None:
    """An input used by two servers, in env and in a header, is asked once (with what the
    file declares of it and the servers that use it); its answer replaces every
    ``${input:ID}``; a disabled server's inputs are not asked."""
    asked: list[VsCodeInput] = []

    def ask(spec: VsCodeInput) -> str:
        asked.append(spec)
        return {"token": SECRET, "region": "us"}[spec.id]

    servers = {
        "a": {"command": "srv", "env": {"TOKEN": "${input:token}", "R": "${input:region}"}},
        "b": {"url": "http://127.0.0.1:9/mcp", "headers": {"X": "Bearer ${input:token}"}},
        "off": {"command": "srv", "env": {"U": "${input:user}"}, "disabled": True},
    }
    config = parse_config({"servers": servers, "inputs": INPUTS}, ask=ask)
    assert config.warnings == []
    assert config.mcp_servers["a"].env == {"TOKEN": SECRET, "R": "us"}
    assert config.mcp_servers["b"].headers == {"X": f"Bearer {SECRET}"}
    assert config.mcp_servers["a"].active and config.mcp_servers["b"].active
    assert [(s.id, s.servers) for s in asked] == [("token", ("a", "b")), ("region", ("a",))]
    token, region = asked
    assert (token.type, token.description, token.password) == ("promptString", "API token", True)
    assert (region.type, region.options, region.password) == ("pickString", ("eu", "us"), False)


def test_inputs_of_vscode_settings_json_are_read_too() -> None:
    """``settings.json`` nests both under ``mcp``."""
    servers = {"a": {"command": "srv", "args": ["--user=${input:user}"]}}
    config = parse_config({"mcp": {"servers": servers, "inputs": INPUTS}}, ask=lambda s: "bob")
    assert config.mcp_servers["a"].args == ["--user=bob"]


@pytest.mark.parametrize(
    ("value", "asks", "why"),
    [
        ("${input:token}", False, "cannot prompt for here (not a terminal)"),
        ("${input:token}", True, "was not answered"),
        ("${input:nope}", True, 'is not declared in the file\'s "inputs"'),
        ("${input:picked}", True, "is a VS Code command input the Host cannot prompt for"),
    ],
)
def test_an_input_without_an_answer_keeps_its_server_from_starting(
    value: str, asks: bool, why: str
) -> None:
    """No asker (not a terminal), no answer, an undeclared id, a ``command`` input: the server
    is not started (the placeholder is never sent as a credential), with one warning naming
    it, the key and why; the other servers are unaffected."""
    asked: list[str] = []

    def decline(spec: VsCodeInput) -> None:
        asked.append(spec.id)

    servers = {"a": {"command": "srv", "env": {"K": value}}, "b": {"command": "srv"}}
    config = parse_config({"servers": servers, "inputs": INPUTS}, ask=decline if asks else None)
    assert not config.mcp_servers["a"].active and config.mcp_servers["b"].active
    [warning] = config.warnings
    assert (warning.server, warning.key) == ("a", "env")
    assert value in warning.message and why in warning.message and "\n" not in str(warning)
    assert asked == (["token"] if asks and "token" in value else [])


def test_inputs_must_be_a_list_of_objects_with_ids() -> None:
    with pytest.raises(ConfigError, match="inputs"):
        parse_config({"servers": {"a": {"command": "srv"}}, "inputs": [{"type": "x"}]})


def test_the_host_asks_on_the_terminal_hiding_a_password(tmp_path: Path) -> None:
    """In a pseudo-terminal: each input is asked before the servers start (the password
    without echo, the pick among its options), and the answers reach the server."""
    path = _config(tmp_path, {"e": _entry(TOKEN="${input:token}", REGION="${input:region}")})
    shell = HostTerminal(path, tmp_path / "history")
    try:
        shell.expect(b"API token (${input:token} of e): ")
        shell.send(SECRET.encode() + b"\r")
        shell.expect(b"Region (${input:region} of e) (eu, us): ")
        shell.send(b"us\r")
        before = shell.expect(PROMPT)
        assert SECRET.encode() not in before  # not echoed
        assert b"1 of 1 server running (e)" in before
        shell.send(b'call e__env {"name": "TOKEN"}\r')
        shell.expect(f"TOKEN={SECRET}".encode())
        shell.send(b'call e__env {"name": "REGION"}\r')
        shell.expect(b"REGION=us")
        assert shell.quit() == 0
    finally:
        shell.close()


def test_without_a_terminal_the_host_refuses_the_server_in_one_line(tmp_path: Path) -> None:
    """A script (stdin not a terminal) is never asked: the server using the input is not
    started, one line says which, why and what to do; the others start."""
    servers = {"e": _entry(TOKEN="${input:token}"), "plain": _entry()}
    path = _config(tmp_path, servers)
    argv = [sys.executable, "-m", "mcpbind.cli", "host", "-c", str(path), "-r", "servers"]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    out = (done.stdout + done.stderr).decode()
    assert done.returncode == 0, out
    lines = [line for line in out.splitlines() if "${input:token}" in line]
    assert len(lines) == 1, out
    assert "'e'" in lines[0] and "not a terminal" in lines[0] and "server not started" in lines[0]
    assert "1 of 2 servers running (plain)" in out, out
