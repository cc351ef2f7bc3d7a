"""Host configuration: the ``mcpServers`` format of desktop hosts plus mcpbind's keys; every
error names the server and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpbind.host import ApprovalPolicy, ConfigError, load_config, parse_config, parse_server


def test_desktop_format_stdio_and_http() -> None:
    """architecture §Host (one client per configured server); basic/transports.mdx: stdio
    entries (command/args/env/cwd) and Streamable HTTP entries (url/headers) parse as typed
    settings."""
    config = parse_config(
        {
            "mcpServers": {
                "notes": {
                    "command": "python",
                    "args": ["-m", "x"],
                    "env": {"A": "1"},
                    "cwd": "/tmp",
                },
                "web": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t"}},
            },
            "globalShortcut": "Ctrl+Space",  # another host's key: ignored
        }
    )
    notes, web = config.mcp_servers["notes"], config.mcp_servers["web"]
    assert (notes.transport, notes.command, notes.args, notes.env, notes.cwd) == (
        "stdio",
        "python",
        ["-m", "x"],
        {"A": "1"},
        "/tmp",
    )
    assert (web.transport, web.url, web.headers) == (
        "http",
        "https://example.com/mcp",
        {"Authorization": "Bearer t"},
    )
    assert notes.active and web.active
    assert notes.policy() == ApprovalPolicy()


def test_mcpbind_keys() -> None:
    """client/roots.mdx §Root (file:// URIs) and the approval policy keys: paths become file
    URIs, the approval shorthand expands, enabled/disabled are read."""
    entry = parse_server(
        "files",
        {
            "command": "srv",
            "enabled": True,
            "timeout": 2.5,
            "roots": ["/srv/data", {"uri": "file:///home/me", "name": "Home"}, "rel"],
            "cwd": "/base",
            "approval": {"default": "ask", "tools": {"read": "allow"}, "trustAnnotations": False},
            "maxMessageSize": 4096,
        },
    )
    roots = entry.root_list()
    assert roots is not None
    assert [(r.uri, r.name) for r in roots][1] == ("file:///home/me", "Home")
    assert [r.uri for r in roots][::2] == ["file:///srv/data", "file:///base/rel"]
    assert entry.policy() == ApprovalPolicy(
        default="ask", tools={"read": "allow"}, trust_annotations=False
    )
    assert (entry.timeout, entry.max_message_size) == (2.5, 4096)
    assert parse_server("x", {"command": "srv", "approval": "deny"}).policy().default == "deny"
    assert not parse_server("x", {"command": "srv", "disabled": True}).active
    assert parse_server("x", {"command": "srv"}).root_list() is None


@pytest.mark.parametrize(
    ("entry", "key", "words"),
    [
        ({"comand": "x"}, "command", "exactly one"),  # the typo is warned about, see below
        ({"command": 3}, "command", "Expected `str | null`"),
        ({"command": "x", "args": "-v"}, "args", "Expected `array`"),
        ({"command": "x", "url": "http://h/mcp"}, "url", "exactly one"),
        ({}, "command", "exactly one"),
        ({"url": "ftp://h"}, "url", "http"),
        ({"command": "x", "timeout": 0}, "timeout", "positive"),
        ({"command": "x", "roots": ["https://h/r"]}, "roots", "file://"),
        ({"command": "x", "roots": ["/a/../etc"]}, "roots", "'..'"),
        ({"command": "x", "approval": {"tools": {"t": "maybe"}}}, "approval", "Invalid enum"),
        ({"command": "x", "approval": {"defualt": "ask"}}, "approval", "unknown field"),
        ({"command": "x", "type": "http"}, "type", "does not match"),
        ({"command": "x", "maxMessageSize": 10}, "maxMessageSize", "1024"),
        ({"command": "x", "env": {"A": 1}}, "env", "Expected `str`"),
        ({"command": "x", "enabled": "yes"}, "enabled", "Expected `bool`"),
        ({"command": "x", "roots": [{"uri": "file:///a", "nmae": "A"}]}, "roots", "`nmae`"),
        ({"command": "x", "roots": [""]}, "roots", "must not be empty"),
        ({"command": "x", "approval": {"default": "maybe"}}, "approval", "Invalid enum"),
        ({"command": "x", "type": "websocket"}, "type", "Invalid enum"),
        ({"command": " "}, "command", "must not be empty"),
        ({"url": "http://"}, "url", "http"),
        ({"url": "http://h/mcp", "env": {"A": "1"}}, "env", "not apply to an HTTP"),
        ({"url": "http://h/mcp", "args": ["-v"]}, "args", "not apply to an HTTP"),
        ({"url": "http://h/mcp", "cwd": "/tmp"}, "cwd", "not apply to an HTTP"),
        ({"command": "x", "headers": {"A": "b"}}, "headers", "not apply to a stdio"),
    ],
)
def test_errors_name_server_and_key(entry: dict[str, object], key: str, words: str) -> None:
    """architecture §Host ("Controls client connection permissions and lifecycle"): invalid
    configuration is refused with an error naming the server and the key: unknown keys, wrong
    types, bad values, and keys of the other transport (which would be silently ignored)."""
    with pytest.raises(ConfigError) as info:
        parse_config({"mcpServers": {"broken": entry}})
    assert info.value.server == "broken"
    assert info.value.key == key
    assert "server 'broken'" in str(info.value)
    assert words in str(info.value)


def test_load_file_resolves_cwd(tmp_path: Path) -> None:
    """basic/transports.mdx §stdio (the client launches the server as a subprocess): a relative
    ``cwd`` is taken from the configuration file's folder; bad JSON is an error."""
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "srv", "cwd": "sub"}}}))
    assert load_config(path).mcp_servers["a"].cwd == str(tmp_path / "sub")
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="invalid JSON"):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.json")
    with pytest.raises(ConfigError) as info:
        parse_config({"mcpServers": {"a": ["command"]}})
    assert info.value.server == "a"
