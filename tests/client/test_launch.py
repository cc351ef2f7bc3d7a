"""One server string for the CLI and ``Client("...")`` (basic/transports.mdx §stdio): a URL,
a ``.py``/``.js`` file, or a command line, parsed by :mod:`mcpbind.launch`."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from mcpbind import Client
from mcpbind.launch import ServerLocation, parse_server

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


def test_the_client_type_takes_server_strings_and_rejects_other_values(tmp_path: Path) -> None:
    """mypy --strict: a command line, a file or a URL is a valid ``Client`` argument; a value
    that is neither a string, a Server nor a transport is rejected before it runs."""
    from mypy import api

    snippet = tmp_path / "use_client.py"
    snippet.write_text(
        "from mcpbind import Client\n"
        "Client('python server.py')\n"
        "Client('server.py')\n"
        "Client('https://example.com/mcp')\n"
        "Client(8080)\n"
    )
    stdout, _, _ = api.run(
        ["--strict", "--no-error-summary", "--cache-dir", str(ROOT / ".mypy_cache"), str(snippet)]
    )
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and 'use_client.py:5: error: Argument 1 to "Client"' in errors[0], (
        stdout
    )
