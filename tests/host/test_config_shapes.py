"""Configuration files as users already have them (issue 14.2): Claude Desktop / Cursor
``mcpServers``, VS Code ``servers`` with ``type`` (and its ``settings.json`` ``mcp.servers``),
remote entries with ``url``/``serverUrl``/``httpUrl`` and ``headers``; unknown keys are
warned about and the server still starts; other hosts' approval lists and ``disabled`` map
into the Host's policy; a file with no servers is refused with a clear message."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpbind.cli.host_cmd import host as host_command
from mcpbind.host import (
    ApprovalPolicy,
    ConfigError,
    ConfigWarning,
    Host,
    HostEvent,
    load_config,
    parse_config,
    parse_server,
)

from .helpers import SERVERS, text_of

STDIO = {"command": sys.executable, "args": [SERVERS, "normal"]}


def test_claude_desktop_and_cursor_shape() -> None:
    """Claude Desktop: stdio entries under ``mcpServers``; Cursor: a remote entry with
    ``url`` and ``headers`` beside them."""
    config = parse_config(
        {
            "mcpServers": {
                "local": {"command": "npx", "args": ["-y", "srv"], "env": {"K": "v"}},
                "remote": {"url": "https://h.example/mcp", "headers": {"Authorization": "B t"}},
            }
        }
    )
    local, remote = config.mcp_servers["local"], config.mcp_servers["remote"]
    assert (local.transport, local.command, local.args, local.env) == (
        "stdio",
        "npx",
        ["-y", "srv"],
        {"K": "v"},
    )
    assert (remote.transport, remote.url, remote.headers) == (
        "http",
        "https://h.example/mcp",
        {"Authorization": "B t"},
    )
    assert config.warnings == []


def test_vscode_shape_with_type_and_inputs() -> None:
    """VS Code ``.vscode/mcp.json``: ``servers`` with ``type`` (stdio / http / sse) and a
    top-level ``inputs`` list, which belongs to VS Code and is ignored."""
    config = parse_config(
        {
            "inputs": [{"type": "promptString", "id": "key", "description": "API key"}],
            "servers": {
                "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"]},
                "api": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X": "y"}},
                "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            },
        }
    )
    servers = config.mcp_servers
    assert {n: (c.type, c.transport) for n, c in servers.items()} == {
        "git": ("stdio", "stdio"),
        "api": ("http", "http"),
        "old": ("sse", "http"),
    }
    settings = parse_config({"mcp": {"servers": {"git": {"command": "uvx"}}}, "editor": {}})
    assert list(settings.mcp_servers) == ["git"]


def test_remote_url_spellings() -> None:
    """Windsurf's ``serverUrl`` and Gemini CLI's ``httpUrl`` are ``url``; two different URLs
    in one entry are an error naming the key."""
    assert parse_server("w", {"serverUrl": "https://h/mcp"}).url == "https://h/mcp"
    assert parse_server("g", {"httpUrl": "https://h/mcp", "headers": {"A": "b"}}).url
    with pytest.raises(ConfigError) as info:
        parse_server("x", {"url": "https://a/mcp", "serverUrl": "https://b/mcp"})
    assert (info.value.server, info.value.key) == ("x", "serverUrl")


def test_unknown_keys_are_warnings() -> None:
    """An unknown key (a typo, another host's setting) is one warning naming the server and
    the key; the entry is still read. ``description`` is known and ignored quietly."""
    config = parse_config(
        {
            "mcpServers": {
                "a": {"command": "srv", "transportType": "stdio", "description": "mine"},
                "b": {"url": "http://h/mcp", "networkTimeout": 5},
            }
        }
    )
    assert [str(w) for w in config.warnings] == [
        "server 'a', key 'transportType': unknown key, ignored",
        "server 'b', key 'networkTimeout': unknown key, ignored",
    ]
    assert config.mcp_servers["a"].command == "srv"


def test_approval_lists_and_disabled_map_into_the_policy() -> None:
    """Cline's ``autoApprove`` and Roo's ``alwaysAllow`` allow the named tools; Roo's
    ``disabledTools`` deny them; mcpbind's own ``approval.tools`` wins where both name a
    tool; ``disabled: true`` keeps the server from starting."""
    entry = parse_server(
        "s",
        {
            "command": "srv",
            "autoApprove": ["read", "list"],
            "alwaysAllow": ["search"],
            "disabledTools": ["wipe"],
            "approval": {"default": "ask", "tools": {"list": "deny"}},
        },
    )
    assert entry.policy() == ApprovalPolicy(
        default="ask", tools={"read": "allow", "list": "deny", "search": "allow", "wipe": "deny"}
    )
    shorthand = parse_server("s", {"command": "srv", "approval": "deny", "alwaysAllow": ["a"]})
    assert shorthand.policy() == ApprovalPolicy(default="deny", tools={"a": "allow"})
    with pytest.raises(ConfigError, match="list of tool names"):
        parse_server("s", {"command": "srv", "autoApprove": "all"})
    assert not parse_server("s", {"command": "srv", "disabled": True}).active


@pytest.mark.parametrize(
    "content",
    [{}, {"mcpServers": {}}, {"servers": {}}, {"globalShortcut": "x"}, {"mcp": {"servers": {}}}],
)
def test_no_servers_is_refused(content: dict[str, Any]) -> None:
    """A file with no server would start a host that does nothing: refused, saying where
    servers go."""
    with pytest.raises(ConfigError, match='expected at least one server under "mcpServers"'):
        parse_config(content)


def test_no_servers_from_the_command_line(tmp_path: Path) -> None:
    """``mcpbind host`` on such a file: one line naming the file, exit status 2."""
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"servers": {}}))
    result = CliRunner().invoke(host_command, ["-c", str(path), "-r", "tools"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert str(path) in result.output and "empty server list" in result.output


@pytest.mark.anyio
async def test_a_host_starts_despite_unknown_keys(tmp_path: Path) -> None:
    """The whole chain: a VS Code-shaped file with unknown keys and Cline's ``autoApprove``
    starts, reports each unknown key as a warning event, and the approval list takes effect
    (``write`` asks by default; here it runs without an approver)."""
    path = tmp_path / "mcp.json"
    entry = {"type": "stdio", **STDIO, "autoApprove": ["write"], "alwaysOnTop": True}
    off = {**STDIO, "disabled": True}
    path.write_text(json.dumps({"servers": {"s": entry, "off": off}, "inputs": []}))
    events: list[HostEvent] = []
    async with Host(path, on_event=events.append) as host:
        states = {s.name: (s.status, s.error) for s in host.servers()}
        assert text_of(await host.call_tool("s__write", {"value": "v"})) == "wrote v"
    assert states == {"off": ("stopped", "disabled in the configuration"), "s": ("running", None)}
    warnings = [(e.server, e.message) for e in events if e.kind == "warning"]
    assert warnings == [("s", "key 'alwaysOnTop': unknown key, ignored")]


def test_warnings_without_a_collector_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mcpbind.host"):
        parse_server("s", {"command": "srv", "colour": "red"})
    assert "server 's', key 'colour': unknown key, ignored" in caplog.text
    assert str(ConfigWarning("s", None, "x")) == "server 's': x"


def test_load_config_reads_vscode_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {"a": {"command": "srv", "cwd": "sub"}}}))
    assert load_config(path).mcp_servers["a"].cwd == str(tmp_path / "sub")


def _vscode_file(folder: Path, name: str) -> Path:
    entries = {
        "local": {
            "type": "stdio",
            "command": sys.executable,
            "args": [SERVERS, "normal", "--root=${workspaceFolder}/data"],
            "env": {"DATA": "${workspaceFolder}/data"},
            "cwd": "${workspaceFolder}",
        },
        "remote": {
            "type": "http",
            "url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer ${input:api-token}"},
        },
    }
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"inputs": [], "servers": entries}))
    return path


@pytest.mark.parametrize(
    ("name", "workspace"), [(".vscode/mcp.json", "proj"), ("mcp.json", "proj")]
)
def test_vscode_workspace_folder_is_expanded(tmp_path: Path, name: str, workspace: str) -> None:
    """Issue 31 item 6: ``${workspaceFolder}`` is the folder holding ``.vscode/`` (or the
    config's own folder), in args, env and cwd, not sent literally."""
    config = load_config(_vscode_file(tmp_path / "proj", name))
    local = config.mcp_servers["local"]
    folder = str((tmp_path / workspace).resolve())
    assert local.args[-1] == f"--root={folder}/data"
    assert local.env == {"DATA": f"{folder}/data"}
    assert local.cwd == folder


@pytest.mark.anyio
async def test_a_vscode_input_is_refused_with_a_warning_naming_the_server(
    tmp_path: Path,
) -> None:
    """Issue 31 item 6: the Host cannot prompt VS Code's ``${input:…}``: that server is not
    started (instead of sending the placeholder as a credential), with one warning line that
    names it and the input; the other servers start."""
    config = load_config(_vscode_file(tmp_path, ".vscode/mcp.json"))
    remote = config.mcp_servers["remote"]
    assert not remote.active
    assert [(w.server, w.key) for w in config.warnings] == [("remote", "headers")]
    events: list[HostEvent] = []
    async with Host(config, on_event=events.append) as host:
        states = {s.name: s.status for s in host.servers()}
    assert states["local"] == "running" and states["remote"] != "running"
    warned = [e.message for e in events if e.kind == "warning" and e.server == "remote"]
    assert len(warned) == 1 and "\n" not in warned[0], warned
    assert "${input:api-token}" in warned[0] and "cannot prompt" in warned[0]
