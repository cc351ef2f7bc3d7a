"""A handler's uncaught exception (tool, resource, prompt, completion; ``def`` and ``async
def``; both eras; stdio and Streamable HTTP) is logged with its traceback on the server's
stderr by default (``mcpbind.server``), and ``Server(debug=True)`` / ``mcpbind serve --debug``
sends its text to the client. The client sees ``Internal error`` otherwise (security: exception
text can hold secrets). Not spec behaviour beyond tools.mdx §Error Handling (a tool's failure
is an ``isError`` result) and the JSON-RPC internal error (-32603) for the others. Issue 31
item 2."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from support.live_server import free_port, listening_process

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Client, McpError
from mcpbind import types as t
from mcpbind.transports import StdioClientTransport

pytestmark = pytest.mark.anyio

APP = """
import mcpbind

server = mcpbind.Server("failing")

@server.tool()
def forecast(city: str) -> str:
    return {"paris": "sun"}[city]  # KeyError for any other city

@server.tool()
async def async_forecast(city: str) -> str:
    raise ValueError(f"no forecast for {city}")

@server.resource("data://broken")
def broken() -> str:
    raise RuntimeError("resource exploded")

@server.prompt()
async def greet(name: str) -> str:
    raise LookupError("prompt exploded")

@server.completion()
async def complete(ref, argument, context):
    raise ZeroDivisionError("completion exploded")
"""

ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]
#: The spawned server imports the mcpbind under test (spawn passes on only a few variables).
ENV = {"PYTHONPATH": os.pathsep.join(sys.path)}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "failing_server.py"
    path.write_text(APP)
    return path


async def _wait_for(read: Callable[[], str], *needles: str, timeout: float = 30.0) -> str:
    """Bounded polling of a growing stderr until every needle is in it (the loop runs on:
    a stdio transport reads the server's stderr meanwhile)."""
    deadline = time.monotonic() + timeout
    while True:
        text = read()
        if all(n in text for n in needles) or time.monotonic() > deadline:
            return text
        await anyio.sleep(0.02)


async def _exercise(client: Client) -> list[str]:
    """Make every handler fail; what the client was told, one string per call."""
    seen: list[str] = []
    for tool in ("forecast", "async_forecast"):
        result = await client.call(tool, {"city": "oslo"})
        assert result.is_error
        assert isinstance(result.content[0], t.TextContent)
        seen.append(result.content[0].text)
    requests: list[Callable[[], Awaitable[object]]] = [
        lambda: client.read_resource(t.ReadResourceRequestParams(uri="data://broken")),
        lambda: client.get_prompt(t.GetPromptRequestParams(name="greet", arguments={"name": "x"})),
        lambda: client.complete(
            t.CompleteRequestParams(
                ref=t.PromptReference(name="greet"),
                argument=t.CompleteRequestParamsArgument(name="name", value="a"),
            )
        ),
    ]
    for request in requests:
        with pytest.raises(McpError) as caught:
            await request()
        assert caught.value.code == -32603
        seen.append(f"{caught.value.message} {caught.value.data}")
    return seen


TRACEBACKS = [
    "KeyError: 'oslo'",
    "ValueError: no forecast for oslo",
    "RuntimeError: resource exploded",
    "LookupError: prompt exploded",
    "ZeroDivisionError: completion exploded",
]


def _assert_logged(stderr: str) -> None:
    assert stderr.count("Traceback (most recent call last)") >= len(TRACEBACKS), stderr
    for line in TRACEBACKS:
        assert line in stderr, stderr
    assert "tool forecast failed" in stderr
    assert "handler for resources/read failed" in stderr


def _assert_told(seen: list[str], *, debug: bool) -> None:
    for told, line in zip(seen, TRACEBACKS, strict=True):
        if debug:
            assert line in told, seen
        else:
            assert line.split(":")[0] not in told, seen  # no exception name nor text
            assert "Internal error" in told


@asynccontextmanager
async def _stdio(
    app: Path, version: str, *flags: str
) -> AsyncIterator[tuple[Client, StdioClientTransport]]:
    args = ["-m", "mcpbind.cli", "serve", str(app), *flags]
    async with (
        StdioClientTransport.spawn(sys.executable, args, env=ENV) as transport,
        Client(transport, protocol_version=version) as client,
    ):
        yield client, transport


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("debug", [False, True])
async def test_stdio_failures_logged_on_stderr_and_shown_with_debug(
    app: Path, version: str, debug: bool
) -> None:
    async with _stdio(app, version, *(["--debug"] if debug else [])) as (client, transport):
        seen = await _exercise(client)
        stderr = await _wait_for(lambda: transport.stderr_tail.decode(), *TRACEBACKS)
    _assert_logged(stderr)
    _assert_told(seen, debug=debug)


@pytest.mark.parametrize("version", ERAS)
async def test_http_failures_logged_on_stderr_and_shown_with_debug(
    app: Path, version: str, tmp_path: Path
) -> None:
    pytest.importorskip("mcpbind.http")
    port = free_port()
    log = tmp_path / "stderr.txt"
    with (
        log.open("wb") as err,
        listening_process(
            [
                sys.executable,
                "-m",
                "mcpbind.cli",
                "serve",
                str(app),
                "--http",
                str(port),
                "--debug",
            ],
            port,
            stdout=subprocess.DEVNULL,
            stderr=err,
        ),
    ):
        async with Client(f"http://127.0.0.1:{port}/mcp", protocol_version=version) as client:
            seen = await _exercise(client)
        stderr = await _wait_for(log.read_text, *TRACEBACKS)
    _assert_logged(stderr)
    _assert_told(seen, debug=True)
    assert f"serving failing on http://127.0.0.1:{port}/mcp" in stderr


SCRIPT = """
import logging, sys
import mcpbind
{setup}
server = mcpbind.Server("failing", debug={debug})

@server.tool()
def forecast(city: str) -> str:
    return {{"paris": "sun"}}[city]

if __name__ == "__main__":
    mcpbind.serve_stdio(server)
"""


@pytest.mark.parametrize("version", ERAS)
async def test_serve_stdio_logs_and_server_debug_shows(tmp_path: Path, version: str) -> None:
    """``serve_stdio`` logs by default; ``Server(debug=True)`` shows the text on both eras."""
    script = tmp_path / "app.py"
    script.write_text(SCRIPT.format(setup="", debug=True))
    async with (
        StdioClientTransport.spawn(sys.executable, [str(script)], env=ENV) as transport,
        Client(transport, protocol_version=version) as client,
    ):
        result = await client.call("forecast", {"city": "oslo"})
        stderr = await _wait_for(lambda: transport.stderr_tail.decode(), "KeyError")
    assert isinstance(result.content[0], t.TextContent)
    assert result.content[0].text == "KeyError: 'oslo'"
    assert "ERROR mcpbind.server: tool forecast failed" in stderr
    assert "Traceback (most recent call last)" in stderr and "KeyError: 'oslo'" in stderr


async def test_application_logging_setup_is_kept(tmp_path: Path) -> None:
    """An application that configured logging gets the record through its own handler only
    (no second copy from mcpbind's default one), and nothing on stdout (stdio's channel)."""
    script = tmp_path / "app.py"
    setup = "logging.basicConfig(level=logging.DEBUG, format='APP %(name)s %(message)s')"
    script.write_text(SCRIPT.format(setup=setup, debug=False))
    async with (
        StdioClientTransport.spawn(sys.executable, [str(script)], env=ENV) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE) as client,
    ):
        result = await client.call("forecast", {"city": "oslo"})
        stderr = await _wait_for(lambda: transport.stderr_tail.decode(), "KeyError")
    assert result.is_error
    assert "APP mcpbind.server tool forecast failed" in stderr
    assert stderr.count("Traceback (most recent call last)") == 1, stderr


HTTP_SCRIPT = """
import sys
import mcpbind
from mcpbind.http import serve_http

server = mcpbind.Server("failing", debug=True)

@server.resource("data://broken")
async def broken() -> str:
    raise RuntimeError("resource exploded")

serve_http(server, port=int(sys.argv[1]), sessionless=True)
"""


async def test_sessionless_http_logs_and_server_debug_shows(tmp_path: Path) -> None:
    """The 2025 sessionless HTTP mode (``serve_http(sessionless=True)``): the same log line
    and, with ``Server(debug=True)``, the exception text in the -32603 error."""
    pytest.importorskip("mcpbind.http")
    script = tmp_path / "app.py"
    script.write_text(HTTP_SCRIPT)
    log = tmp_path / "stderr.txt"
    port = free_port()
    with (
        log.open("wb") as err,
        listening_process([sys.executable, str(script), str(port)], port, stderr=err),
    ):
        async with Client(f"http://127.0.0.1:{port}/mcp", protocol_version=LATEST_HANDSHAKE) as c:
            with pytest.raises(McpError) as caught:
                await c.read_resource(t.ReadResourceRequestParams(uri="data://broken"))
        stderr = await _wait_for(log.read_text, "RuntimeError: resource exploded")
    assert caught.value.code == -32603
    assert caught.value.data == {"exception": "RuntimeError: resource exploded"}
    assert "ERROR mcpbind.server: handler for resources/read failed" in stderr
    assert "Traceback (most recent call last)" in stderr
