"""One server string for the CLI and ``Client("...")`` (basic/transports.mdx §stdio): a URL,
a ``.py``/``.js`` file, or a command line, parsed by :mod:`mcpbind.transports.launch`."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from mcpbind import Client
from mcpbind.transports.launch import ServerLocation, parse_server

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
NOTES = ROOT / "examples" / "notes_server.py"


def test_parse_urls_files_and_command_lines(tmp_path: Path) -> None:
    assert parse_server("https://x.test/mcp") == ServerLocation(
        "https://x.test/mcp", url="https://x.test/mcp"
    )
    assert parse_server(str(NOTES)).argv == (sys.executable, str(NOTES))
    script = tmp_path / "my server.js"  # a file path with a space is still one file
    script.write_text("")
    assert parse_server(str(script)).argv == ("node", str(script))
    assert parse_server(f"{shlex.quote(str(NOTES))} --flag").argv == (
        sys.executable,
        str(NOTES),
        "--flag",
    )
    assert parse_server("uvx some-server --x 'a b'").argv == ("uvx", "some-server", "--x", "a b")
    assert parse_server("missing.py").argv == ("missing.py",)  # not a file: run as a command
    with pytest.raises(ValueError, match="empty server command line"):
        parse_server("   ")
    with pytest.raises(ValueError, match="cannot split"):
        parse_server("python 'unclosed")
    with pytest.raises(ValueError, match="cannot split"):
        Client("python 'unclosed")  # fails at construction, not on enter


@pytest.mark.parametrize(
    "server",
    [f"{shlex.quote(sys.executable)} -m examples.notes_server", str(NOTES)],
    ids=["command-line", "py-file"],
)
async def test_client_spawns_a_command_line_or_a_server_file(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Client("python server.py")`` and ``Client("server.py")`` spawn the server over
    stdio, as the CLI does, instead of failing with AttributeError."""
    monkeypatch.chdir(ROOT)  # `-m examples.notes_server` imports from the working directory
    async with Client(server) as client:
        assert client.server_info is not None and client.server_info.name == "mcpbind-notes"
        found = await client.call("search_notes", {"query": "welcome"})
        assert found.is_error is not True
