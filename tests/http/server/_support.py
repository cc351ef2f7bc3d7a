"""A real uvicorn server on 127.0.0.1 (in a thread, free port) serving a small test server,
and the bits of an MCP HTTP client the tests need (raw enough to send anything)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

from support import live_server
from support.live_server import free_port as free_port

from mcpbind import Context, Server
from mcpbind.http import StreamableHTTPApp, close_sse_stream
from mcpbind.http.server.serve import header_deadline_protocol

ACCEPT_BOTH = "application/json, text/event-stream"
LATEST = "2025-11-25"


def make_server() -> Server:
    server = Server("http-test-server", "1.0.0")

    @server.tool(description="Echo the text back")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Sleep, then answer")
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(description="Send n progress notifications, delay apart, then answer")
    async def chatty(n: int, delay: float, ctx: Context) -> str:
        for i in range(1, n + 1):
            await ctx.report_progress(i, n)
            await asyncio.sleep(delay)
        return f"sent {n}"

    @server.tool(description="Ask the client's LLM")
    async def ask(question: str, ctx: Context) -> str:
        from mcpbind import types as t

        result = await ctx.sample(
            t.CreateMessageRequestParams(
                messages=[t.SamplingMessage(role="user", content=t.TextContent(text=question))],
                max_tokens=10,
            )
        )
        return f"answer: {getattr(result.content, 'text', '')}"

    @server.tool(description="Close this request's SSE connection, then answer (polling)")
    async def poll(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        closed = close_sse_stream(retry_ms=50)
        await asyncio.sleep(0.1)
        await ctx.report_progress(2, 2)
        return f"closed={closed}"

    @server.resource("test://hello", mime_type="text/plain")
    def hello() -> str:
        return "hello resource"

    @server.prompt(description="Greets")
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


class LiveServer(live_server.LiveServer):
    """uvicorn serving ``app`` on 127.0.0.1 in a thread; ``stop()`` shuts it down. ``http``
    picks the parser (``"h11"`` or ``"httptools"``), with serve_http's header deadline."""

    def __init__(
        self, app: StreamableHTTPApp, header_timeout: float = 5.0, http: str = "h11"
    ) -> None:
        super().__init__(app, http=header_deadline_protocol(header_timeout, http))


def init_body(version: str = LATEST, rid: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "raw-test-client", "version": "1"},
        },
    }


def headers(
    session: str | None = None, version: str | None = LATEST, **extra: str
) -> dict[str, str]:
    out = {"content-type": "application/json", "accept": ACCEPT_BOTH}
    if session is not None:
        out["mcp-session-id"] = session
    if version is not None:
        out["mcp-protocol-version"] = version
    out.update(extra)
    return out


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """Parse SSE lines into events ``{"id": ..., "data": ..., "retry": ...}`` (data joined)."""
    event: dict[str, str] = {}
    data: list[str] = []
    for line in lines:
        if line == "":
            if data or event:
                if data:
                    event["data"] = "\n".join(data)
                yield event
            event, data = {}, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        else:
            event[name] = value
    if data or event:
        if data:
            event["data"] = "\n".join(data)
        yield event


def messages(events: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The JSON-RPC messages among SSE events (priming events have empty data)."""
    return [json.loads(e["data"]) for e in events if e.get("data")]
