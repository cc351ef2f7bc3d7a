"""``mcpbind dev APP`` (issue 33): the server under the official MCP Inspector, over stdio and
over HTTP (the Inspector's CLI mode driven through it), reloaded when its file changes: over
stdio the client keeps its session and is told to list again (server/tools.mdx §List Changed
Notification), over HTTP the next connection sees the new code."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from support.live_server import free_port, listening_process
from support.polling import until_async

from mcpbind import LATEST_HANDSHAKE, Client, McpError, json_value
from mcpbind.cli.dev_cmd import INSPECTOR
from mcpbind.cli.watch import SourceWatcher
from mcpbind.transports import StdioClientTransport

from .conftest import ROOT

PEER = ROOT / "tests" / "peers" / "inspector"
PEER_BIN = PEER / "node_modules" / ".bin"

needs_inspector = pytest.mark.skipif(
    not (PEER_BIN / "inspector").exists() or shutil.which("npx") is None,
    reason="the MCP Inspector is not installed: make setup-all "
    "(npm ci --prefix tests/peers/inspector)",
)

SERVER = '''from mcpbind import Server

server = Server("reloading")


@server.tool()
def first() -> str:
    """The first tool."""
    return "one"
'''
SECOND = '''

@server.tool()
def second() -> str:
    """Added while the server runs."""
    return "two"
'''
SLOW = '''

@server.tool()
async def slow() -> str:
    """Answers after a minute, if ever."""
    import anyio

    await anyio.sleep(60)
    return "late"
'''


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    folder = tmp_path / "app"
    folder.mkdir()
    path = folder / "server.py"
    path.write_text(SERVER)
    return path


def edit(path: Path, text: str) -> None:
    """Replace the file, with a modification time the watcher cannot miss."""
    path.write_text(text)
    later = time.time_ns() + 1_000_000_000
    os.utime(path, ns=(later, later))


def _pythonpath() -> dict[str, str]:
    """This checkout's code for the processes started (a stdio server's environment is
    otherwise the small inherited set)."""
    value = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": value} if value else {}


def dev(*args: str | Path, home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``mcpbind dev ARGS`` as a person runs it, from the Inspector peer's folder (where npx
    finds the pinned package without the network), with the Node.js installed there first
    on PATH and a temporary home folder (the Inspector writes ~/.mcp-inspector)."""
    env = {
        **os.environ,
        "PATH": f"{PEER_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "npm_config_update_notifier": "false",
    }
    return subprocess.run(
        [sys.executable, "-m", "mcpbind.cli", "dev", *map(str, args)],
        cwd=PEER,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@needs_inspector
def test_the_pinned_inspector_is_the_one_installed() -> None:
    """The version `mcpbind dev` asks npx for is the one make setup-all installs."""
    package = json.loads((PEER / "package.json").read_text())
    name, _, version = INSPECTOR.rpartition("@")
    assert package["dependencies"][name] == version


@needs_inspector
def test_the_inspector_cli_lists_tools_over_stdio(server_file: Path, tmp_path: Path) -> None:
    """The Inspector's CLI mode, started by `mcpbind dev` with the server over stdio (through
    the reloading relay), lists the server's tools."""
    done = dev(
        server_file, "--", "--cli", "--method", "tools/list", "--format", "json", home=tmp_path
    )
    assert done.returncode == 0, done.stderr
    tools = json.loads(done.stdout)["result"]["tools"]
    assert [(tool["name"], tool["description"]) for tool in tools] == [("first", "The first tool.")]


@needs_inspector
def test_the_inspector_cli_calls_a_tool_over_http(server_file: Path, tmp_path: Path) -> None:
    """With --http, the server listens on 127.0.0.1 and the Inspector's CLI mode calls a tool
    at its URL; both stop when the Inspector is done."""
    port = free_port()
    args = ("--cli", "--method", "tools/call", "--tool-name", "first", "--format", "json")
    done = dev(server_file, "--http", str(port), "--", *args, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["structuredContent"] == {"result": "one"}
    with pytest.raises(OSError):  # the server was stopped with the Inspector
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_without_node_the_error_is_one_line(server_file: Path, tmp_path: Path) -> None:
    """No npx on PATH: one line naming what to install (and --no-inspector), exit 5."""
    done = subprocess.run(
        [sys.executable, "-m", "mcpbind.cli", "dev", str(server_file)],
        env={**os.environ, "PATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 5
    assert done.stderr.count("\n") == 1
    assert "install Node.js 22.19 or newer" in done.stderr
    assert "--no-inspector" in done.stderr


def _names(client: Client) -> set[str]:
    """The client's tool list, kept fresh by refresh_lists."""
    return {tool.name for tool in client.tools or ()}


@pytest.mark.anyio
async def test_stdio_reload_keeps_the_session(server_file: Path) -> None:
    """Over stdio a saved change restarts the server behind the same session: the client is
    told its tool list changed, lists the new tool and calls it, without reconnecting; a
    server that fails to start answers with an error and comes back at the next save."""
    command = ["-m", "mcpbind.cli", "dev", str(server_file), "--no-inspector"]
    async with (
        StdioClientTransport.spawn(sys.executable, command, env=_pythonpath()) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE, refresh_lists=True) as client,
    ):
        assert _names(client) == {"first"}
        edit(server_file, SERVER + SECOND)
        await until_async(lambda: _names(client) == {"first", "second"}, timeout=30)
        result = await client.call("second", {})
        assert json_value(result.structured_content) == {"result": "two"}

        edit(server_file, SERVER + "\nthis is not python\n")
        with anyio.fail_after(30):
            while True:
                try:
                    await client.call("first", {})
                except McpError as exc:
                    if exc.message.startswith("the server reloaded"):
                        continue  # this call was in flight when the restart began
                    assert exc.message.startswith("the server exited with status")
                    break
                await anyio.sleep(0.05)

        edit(server_file, SERVER)
        await until_async(lambda: _names(client) == {"first"}, timeout=30)
        result = await client.call("first", {})
        assert json_value(result.structured_content) == {"result": "one"}


@pytest.mark.anyio
async def test_a_call_in_flight_at_a_reload_gets_an_error(server_file: Path) -> None:
    """A request the old process had not answered is answered with an error saying the server
    reloaded (basic/index.mdx: every request gets a response), not left hanging."""
    edit(server_file, SERVER + SLOW)
    command = ["-m", "mcpbind.cli", "dev", str(server_file), "--no-inspector"]
    async with (
        StdioClientTransport.spawn(sys.executable, command, env=_pythonpath()) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE, refresh_lists=True) as client,
    ):
        failure: list[McpError] = []

        async def call_slow() -> None:
            try:
                await client.call("slow", {})
            except McpError as exc:
                failure.append(exc)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call_slow)
                await anyio.sleep(0.5)
                edit(server_file, SERVER + SLOW + SECOND)
        assert failure[0].message.startswith("the server reloaded")
        await until_async(lambda: _names(client) == {"first", "slow", "second"}, timeout=30)


@pytest.mark.anyio
async def test_http_reload_serves_the_new_code(server_file: Path) -> None:
    """Over HTTP (--no-inspector) the server process restarts on the same port: the next
    client lists the tool added meanwhile."""
    port = free_port()
    command = [sys.executable, "-m", "mcpbind.cli", "dev", str(server_file)]
    command += ["--http", str(port), "--no-inspector"]
    url = f"http://127.0.0.1:{port}/mcp"
    with listening_process(command, port, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
        async with Client(url) as client:
            assert [tool.name async for tool in client.iter_tools()] == ["first"]
        edit(server_file, SERVER + SECOND)
        names: list[str] = []
        with anyio.fail_after(30):
            while names != ["first", "second"]:
                await anyio.sleep(0.1)
                try:
                    async with Client(url) as client:
                        names = [tool.name async for tool in client.iter_tools()]
                except (McpError, OSError):
                    continue  # restarting
        assert names == ["first", "second"]


def test_the_watcher_sees_python_files_of_the_project_only(tmp_path: Path) -> None:
    """Added, modified and removed .py files are reported; virtualenvs, hidden folders,
    __pycache__ and node_modules are not walked; other files do not count."""
    (tmp_path / "pkg").mkdir()
    module = tmp_path / "pkg" / "tools.py"
    module.write_text("x = 1\n")
    for ignored in (".venv", "__pycache__", "node_modules", "env"):
        (tmp_path / ignored).mkdir()
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    watcher = SourceWatcher(tmp_path)
    assert watcher.changed() == []
    edit(module, "x = 2\n")
    added = tmp_path / "new.py"
    added.write_text("")
    for ignored in (".venv", "__pycache__", "node_modules", "env"):
        (tmp_path / ignored / "lib.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    assert watcher.changed() == sorted([str(module), str(added)])
    added.unlink()
    assert watcher.changed() == [str(added)]
    assert watcher.changed() == []
