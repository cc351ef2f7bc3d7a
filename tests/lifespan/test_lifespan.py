"""``Server(lifespan=...)``: run once per process by whatever serves the server (``serve``
and ``serve_stdio``, ``serve_http``, an ASGI server's lifespan events, the first request of a
mounted app that gets none, an in-memory client), its value in every handler's context on
both eras; a failure at start stops the server with one line and exit status 3
(docs/snippets/exit-codes.md). ASGI lifespan protocol: asgi.readthedocs.io, "Lifespan"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.live_server import LiveServer

from mcpbind import Client, Context, Server
from mcpbind.http import LegacySSETransport, StreamableHTTPApp, with_legacy_sse
from mcpbind.transports import StdioClientTransport

pytestmark = pytest.mark.anyio

SCRIPT = Path(__file__).with_name("lifespan_server.py")


class Pool:
    """What the handlers share; records its lifespan."""

    def __init__(self, events: list[str]) -> None:
        self.events = events


def _server(events: list[str], fail: bool = False) -> Server:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Pool]:
        events.append("start")
        if fail:
            raise OSError("cannot open the pool\nsecond line")
        try:
            yield Pool(events)
        finally:
            events.append("stop")

    server = Server("pooled", lifespan=lifespan)

    @server.tool()
    def uses(ctx: Context) -> str:
        ctx.lifespan_state_as(Pool).events.append("used")
        return "ok"

    return server


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_in_memory_clients_share_one_run(version: str) -> None:
    events: list[str] = []
    server = _server(events)
    async with Client(server, protocol_version=version) as one:
        async with Client(server, protocol_version=version) as two:
            await one.call("uses", {})
            await two.call("uses", {})
        assert events == ["start", "used", "used"]
    assert events == ["start", "used", "used", "stop"]
    assert server.lifespan_state is None


async def test_without_a_lifespan_the_state_is_none_and_the_typed_read_says_why() -> None:
    server = Server("plain")

    @server.tool()
    def state(ctx: Context) -> str:
        assert ctx.lifespan_state is None
        try:
            ctx.lifespan_state_as(Pool)
        except TypeError as exc:
            return str(exc)
        return "typed"

    async with Client(server) as client:
        result = await client.call("state", {})
    assert "no running lifespan" in result.content[0].text  # type: ignore[union-attr]


async def test_asgi_lifespan_runs_it_once_for_both_transports_and_eras() -> None:
    events: list[str] = []
    app = with_legacy_sse(StreamableHTTPApp(_server(events), path="/mcp"))
    live = LiveServer(app).start()
    try:
        assert events == ["start"]  # at the ASGI startup, before any request
        for version in ("2025-11-25", "2026-07-28"):
            async with Client(live.url, protocol_version=version) as client:
                await client.call("uses", {})
        base = live.url.removesuffix("/mcp")
        async with LegacySSETransport(base + "/sse") as wire, Client(wire) as client:
            await client.call("uses", {})
        assert events == ["start", "used", "used", "used"]
    finally:
        live.stop()
    assert events == ["start", "used", "used", "used", "stop"]


async def test_mounted_without_lifespan_events_the_first_request_starts_it() -> None:
    """A framework that does not pass lifespan events to a mounted app (Starlette's Mount)."""
    events: list[str] = []
    app = StreamableHTTPApp(_server(events), path="/mcp")

    async def outer(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":  # answered here, never forwarded
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            # The application's own shutdown hook ends it, on the loop that started it.
            await app.aclose()
            await send({"type": "lifespan.shutdown.complete"})
        else:
            await app(scope, receive, send)

    live = LiveServer(outer).start()
    try:
        assert events == []
        async with Client(live.url, protocol_version="2025-11-25") as client:
            await client.call("uses", {})
        async with Client(live.url, protocol_version="2026-07-28") as client:
            await client.call("uses", {})
        assert events == ["start", "used", "used"]
    finally:
        live.stop()
    assert events == ["start", "used", "used", "stop"]


async def test_a_failed_start_under_asgi(caplog: pytest.LogCaptureFixture) -> None:
    """The ASGI startup reports ``lifespan.startup.failed`` with one line; a request of a
    mounted app is answered 503 (the reason is logged), and the next request tries again."""
    events: list[str] = []
    app = StreamableHTTPApp(_server(events, fail=True), path="/mcp")
    sent: list[dict[str, Any]] = []
    incoming = iter([{"type": "lifespan.startup"}])

    async def receive() -> dict[str, Any]:
        return next(incoming)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "lifespan"}, receive, send)
    assert sent == [
        {
            "type": "lifespan.startup.failed",
            "message": "the lifespan of server 'pooled' failed to start: "
            "OSError: cannot open the pool second line",
        }
    ]
    sent.clear()
    scope = {"type": "http", "method": "GET", "path": "/mcp", "headers": []}
    for _ in range(2):
        await app(scope, receive, send)
    assert [m.get("status") for m in sent if m["type"] == "http.response.start"] == [503, 503]
    assert b"the server failed to start" in sent[1]["body"]
    assert b"cannot open the pool" not in sent[1]["body"]  # logged, not sent to the client
    assert "cannot open the pool" in caplog.text
    assert events == ["start"] * 3


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_failed_start_is_one_line_and_exit_status_3(transport: str) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), transport, "fail"],
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 3
    assert done.stderr.decode().splitlines() == [
        "the lifespan of server 'pooled' failed to start: ConnectionRefusedError: "
        "database at 127.0.0.1:9 refused the connection"
    ]


async def test_serve_stdio_runs_it() -> None:
    path = os.environ.get("PYTHONPATH")  # the server imports the same mcpbind as the test
    env = {"PYTHONPATH": path} if path else {}
    with anyio.fail_after(30):
        async with (
            StdioClientTransport.spawn(sys.executable, [str(SCRIPT), "stdio"], env=env) as wire,
            Client(wire) as client,
        ):
            result = await client.call("opened", {})
    assert result.content[0].text == "1"  # type: ignore[union-attr]


def test_serve_http_runs_it_before_listening() -> None:
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "http"], stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        assert line.startswith("serving pooled on http://127.0.0.1:"), line
        for version in ("2025-11-25", "2026-07-28"):
            assert anyio.run(_opened, line.split()[-1], version) == "1"
    finally:
        process.terminate()  # uvicorn shuts down, then re-raises the signal it caught
        assert process.wait(timeout=30) == -signal.SIGTERM
        if process.stderr is not None:
            process.stderr.close()


async def _opened(url: str, version: str) -> str:
    async with Client(url, protocol_version=version) as client:
        result = await client.call("opened", {})
    return result.content[0].text  # type: ignore[union-attr,no-any-return]
