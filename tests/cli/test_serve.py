"""``mcpbind serve MODULE:ATTR``: a server written with mcpbind, run by the CLI, answers an
mcpbind Client over stdio and over Streamable HTTP."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys

import click
import pytest
from support.live_server import free_port, listening_process, stop_process, wait_listening

from mcpbind import LATEST_HANDSHAKE, Client, Server, json_value
from mcpbind import types as t
from mcpbind.cli.serve_cmd import load_server
from mcpbind.transports import StdioClientTransport

from .conftest import ROOT, run

pytestmark = pytest.mark.anyio

SERVE = [sys.executable, "-m", "mcpbind.cli", "serve", "examples.notes_server:server"]


async def test_serve_stdio_answers_a_client() -> None:
    """basic/transports.mdx §stdio, basic/lifecycle.mdx §Initialization: the served notes
    server completes the handshake, lists its tools and runs one."""
    async with (
        StdioClientTransport.spawn(SERVE[0], SERVE[1:], cwd=ROOT) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE) as client,
    ):
        assert client.server_info is not None
        assert client.server_info.name == "mcpbind-notes"
        names = [tool.name async for tool in client.iter_tools()]
        assert names == ["add_note", "search_notes", "delete_note", "slow_count"]
        result = await client.call("add_note", {"title": "Served", "body": "over stdio"})
        assert json_value(result.structured_content)["id"] == "served"
        assert client.protocol_version == "2025-11-25"
        found = await client.call("search_notes", {"query": "served"})
        assert isinstance(found.content[0], t.TextContent)
        assert "over stdio" in found.content[0].text


def test_load_server_by_attribute_factory_and_default() -> None:
    """Not spec behaviour: ATTR may be a Server, a factory of one, or omitted (``server``)."""
    assert load_server("examples.notes_server:server").name == "mcpbind-notes"
    assert load_server("examples.notes_server").name == "mcpbind-notes"
    built = load_server("examples.files_server:create_server")
    assert isinstance(built, Server) and built.name == "mcpbind-files"
    with pytest.raises(click.BadParameter, match="no attribute 'nope'"):
        load_server("examples.notes_server:nope")
    with pytest.raises(click.BadParameter, match="not an mcpbind Server"):
        load_server("examples.notes_server:SAMPLE_NOTES")
    with pytest.raises(click.BadParameter, match=r"cannot import 'examples\.no_such'"):
        load_server("examples.no_such:server")


def test_serve_bad_app_is_a_usage_error() -> None:
    """Not spec behaviour: an APP that does not name a Server exits 2 before serving."""
    result = run("serve", "examples.notes_server:main_missing", cwd=False)
    assert result.exit_code == 2
    assert "has no attribute 'main_missing'" in result.stderr


def test_serve_http_answers_the_cli_over_a_url() -> None:
    """basic/transports.mdx §Streamable HTTP: ``serve --http PORT`` binds 127.0.0.1; ``ls``
    and ``call`` reach it by URL."""
    pytest.importorskip("mcpbind.http")
    port = free_port()
    with listening_process(
        [*SERVE, "--http", str(port), "--host", "127.0.0.1"],
        port,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ):
        url = f"http://127.0.0.1:{port}/mcp"
        listed = run("ls", url, "--json", cwd=False)
        assert listed.exit_code == 0, listed.output
        assert [tool["name"] for tool in json.loads(listed.stdout)["tools"]] == [
            "add_note",
            "search_notes",
            "delete_note",
            "slow_count",
        ]
        called = run(
            "call", url, "slow_count", "--args", '{"to": 3, "delay": 0}', "--progress", cwd=False
        )
        assert called.exit_code == 0, called.output
        assert called.stdout == "3\n"  # the text form of a wrapped int, once
        assert "3/3 100% counted 3 of 3" in called.stderr
        with_env = run("ls", url, "--env", "A=1", cwd=False)
        assert with_env.exit_code == 2 and "--env applies to stdio servers only" in with_env.stderr


def test_unreachable_url_is_a_connection_failure() -> None:
    """basic/transports.mdx §Streamable HTTP: nothing listening: exit 3."""
    pytest.importorskip("mcpbind.http")
    result = run("ls", f"http://127.0.0.1:{free_port()}/mcp", cwd=False)
    assert result.exit_code == 3
    assert "cannot connect" in result.stderr or "connection failed" in result.stderr.lower()


def test_serve_http_on_a_used_port_is_one_line_and_exit_3() -> None:
    """Not spec behaviour (issue 31 item 7): a port in use is one clear line on stderr and a
    non-zero exit, with no ``serving ... on`` line before it (printed only once bound)."""
    pytest.importorskip("mcpbind.http")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*SERVE, "--http", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == [
        f"Error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
    assert "serving" not in done.stdout + done.stderr


def test_serve_http_prints_its_url_once_listening() -> None:
    """Not spec behaviour (issue 31 item 7): ``serve_http`` itself prints one line with the
    URL on stderr when it listens (port 0: the port the system chose)."""
    pytest.importorskip("mcpbind.http")
    code = (
        "from mcpbind import Server\nfrom mcpbind.http import serve_http\n"
        "serve_http(Server('quiet'), port=0, path='/x')\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        # Bounded: before the fix nothing is printed and a plain readline would wait forever.
        ready, _, _ = select.select([process.stderr], [], [], 30)
        line = process.stderr.readline() if ready else ""
        assert line.startswith("serving quiet on http://127.0.0.1:"), line
        port = int(line.removesuffix("/x\n").rsplit(":", 1)[1])
        wait_listening(port, None)
        os.kill(process.pid, signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        stop_process(process)  # type: ignore[arg-type]
    assert out == ""  # nothing on stdout
    assert "serving" not in err  # printed once
