"""``mcpbind host -c servers.json --serve`` / ``--serve-http HOST:PORT`` (issue 33): the
configured servers as one MCP server, on both eras, and one usage line for what does not go
together.

Spec: 2025-11-25 basic/transports.mdx (§stdio, §Streamable HTTP), server/tools.mdx
(§Listing Tools, §Calling Tools); 2026-07-28 server/discover.mdx.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.live_server import free_port, stop_process, wait_listening

from mcpbind import Client
from mcpbind.transports.stdio.process import StdioClientTransport
from mcpbind.versions import LATEST_HANDSHAKE, LATEST_STATELESS

from .helpers import SERVERS, text_of

pytestmark = pytest.mark.anyio

ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]


def config(folder: Path) -> Path:
    """Two upstreams: one of the handshake era only, one of 2026-07-28 only."""
    servers = {
        "old": {"command": sys.executable, "args": [SERVERS, "legacy"]},
        "new": {"command": sys.executable, "args": [SERVERS, "modern"]},
    }
    path = folder / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def gateway_command(path: Path, *serve: str) -> list[str]:
    return [sys.executable, "-m", "mcpbind.cli", "host", "-c", str(path), *serve]


async def check(client: Client) -> None:
    names = sorted([tool.name async for tool in client.iter_tools()])
    assert "old__echo" in names and "new__echo" in names
    assert text_of(await client.call("old__echo", {"text": "a"})) == "legacy: a"
    assert text_of(await client.call("new__echo", {"text": "b"})) == "modern: b"
    assert client.server_info is not None and client.server_info.name == "mcpbind-gateway"


@pytest.mark.parametrize("version", ERAS)
async def test_serve_over_stdio(tmp_path: Path, version: str) -> None:
    command = gateway_command(config(tmp_path), "--serve")
    # The whole environment: a command line would get the stdio default's few variables,
    # and this worktree's PYTHONPATH is among those it leaves out.
    transport = StdioClientTransport.spawn(command[0], command[1:], env=dict(os.environ))
    async with Client(transport, protocol_version=version, timeout=60) as client:
        await check(client)
        assert client.protocol_version == version


@contextmanager
def serving_http(path: Path) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        gateway_command(path, "--serve-http", f"127.0.0.1:{port}"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, process, timeout=60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(process)


@pytest.mark.parametrize("version", ERAS)
async def test_serve_over_http(tmp_path: Path, version: str) -> None:
    pytest.importorskip("uvicorn")
    with serving_http(config(tmp_path)) as url:
        async with Client(url, protocol_version=version, timeout=60) as client:
            await check(client)
            assert client.protocol_version == version


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--serve", "--serve-http", "127.0.0.1:1"], "--serve and --serve-http: choose one"),
        (["--serve-http", "nope"], "expected HOST:PORT, such as 127.0.0.1:8000, not 'nope'"),
        (["--serve-http", "127.0.0.1:99999"], "expected HOST:PORT"),
        (["--serve", "--yes"], "--run, --yes and --no are for the shell"),
        (["--serve", "-r", "tools"], "--run, --yes and --no are for the shell"),
    ],
)
def test_options_that_do_not_go_together_are_one_usage_line(
    tmp_path: Path, options: list[str], says: str
) -> None:
    done = subprocess.run(
        gateway_command(config(tmp_path), *options), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""
