"""A real uvicorn on 127.0.0.1 (thread, free port) serving a small dual-era server, and a raw
2026-07-28 HTTP peer: requests with the per-request ``_meta`` and the metadata headers."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
from stateless.helpers import META, VERSION
from support.live_server import LiveServer

from mcpbind import Context, Server
from mcpbind import types as t
from mcpbind.http import StreamableHTTPApp

SUB_ID = "io.modelcontextprotocol/subscriptionId"
ACCEPT = "application/json, text/event-stream"


class Probe:
    """What the test server's handlers observed (set from the server thread's loop)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.finished = threading.Event()


def make_server(probe: Probe | None = None) -> Server:
    probe = probe or Probe()
    server = Server("stateless-http", "1.0.0")

    @server.tool(description="Echo")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Progress n times, then answer")
    async def chatty(n: int, ctx: Context) -> str:
        for i in range(1, n + 1):
            await ctx.report_progress(i, n)
            await asyncio.sleep(0.01)
        return f"sent {n}"

    @server.tool(description="Log one message")
    async def logs(ctx: Context) -> str:
        await ctx.info("hello from logs")
        return "logged"

    @server.tool(description="Runs until cancelled; records what happened")
    async def block(ctx: Context) -> str:
        probe.started.set()
        try:
            await ctx.report_progress(0, 1)  # makes the response an SSE stream
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            probe.cancelled.set()
            raise
        probe.finished.set()
        return "not cancelled"

    @server.tool(description="Asks the user for a name (an MRTR round)")
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit(
            t.ElicitRequestFormParams(
                message="Name?",
                requested_schema=t.ElicitRequestFormParamsRequestedSchema(
                    type="object", properties={"name": t.StringSchema(type="string")}
                ),
            ),
            key="name",
        )
        content = answer.content if isinstance(answer.content, dict) else {}
        return f"Hello, {content.get('name')}!"

    @server.tool(description="A region mirrored into Mcp-Param-Region")
    def query(region: str, sql: str = "", limit: int = 0, dry: bool = False) -> str:
        return f"{region}:{sql}:{limit}:{dry}"

    schema = server.tools["query"].tool.input_schema
    assert isinstance(schema, dict)
    props = dict(schema["properties"])
    props["region"] = {**props["region"], "x-mcp-header": "Region"}
    props["limit"] = {**props["limit"], "x-mcp-header": "Limit"}
    props["dry"] = {**props["dry"], "x-mcp-header": "Dry"}
    server.tools["query"].tool.input_schema = {**schema, "properties": props}

    @server.tool(description="Adds a tool")
    def add_tool(name: str) -> str:
        server.tool(name, description="added")(lambda: "added")
        return name

    @server.tool(description="Adds a prompt")
    def add_prompt(name: str) -> str:
        server.prompt(name, description="added")(lambda: "added")
        return name

    @server.tool(description="Marks a resource updated")
    def touch(uri: str) -> str:
        server.resource_updated(uri)
        return uri

    @server.resource("test://a", mime_type="text/plain")
    def res_a() -> str:
        return "A"

    @server.resource("test://ünïcode", mime_type="text/plain")
    def res_unicode() -> str:
        return "unicode"

    @server.prompt(description="Hi")
    def hi() -> str:
        return "hi"

    return server


@contextmanager
def live(probe: Probe | None = None, **options: Any) -> Iterator[LiveServer]:
    server = LiveServer(StreamableHTTPApp(make_server(probe), path="/mcp", **options)).start()
    try:
        yield server
    finally:
        server.stop()


_NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def body(method: str, params: dict[str, Any] | None = None, rid: int | str = 1) -> dict[str, Any]:
    p = dict(params or {})
    p["_meta"] = {**META, **p.get("_meta", {})}
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": p}


def std_headers(message: dict[str, Any], **extra: str) -> dict[str, str]:
    """The headers a conforming client sends for ``message`` (plain values only)."""
    out = {
        "content-type": "application/json",
        "accept": ACCEPT,
        "mcp-protocol-version": VERSION,
        "mcp-method": message["method"],
    }
    field = _NAMED.get(message["method"])
    if field is not None:
        out["mcp-name"] = message["params"][field]
    out.update(extra)
    return out


def sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON messages of an SSE body (``data:`` lines)."""
    out = []
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            out.append(json.loads(line[5:].strip()))
    return out


async def stream_messages(response: httpx2.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON messages of a streaming SSE response, as they arrive."""
    async for line in response.aiter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:].strip())
