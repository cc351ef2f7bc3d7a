"""The 2026-07-28 client tests' surface served by the official MCP Python SDK (``mcp``, pinned
in the test extras), behind a recorder: ``GET /admin/log`` returns every request with its
headers, ``POST /admin/clear`` empties it (as mock_server.py does).

The SDK implements what the client is tested on: ``x-mcp-header`` tool parameters mirrored
into ``Mcp-Param-*`` headers (checked by the SDK, echoed by ``region``), ``ttlMs`` on
``tools/list`` (``cache_hints``), an input round with a sealed ``requestState`` (``ask``)
and a result that is complete (``legacy``).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import InputRequiredResult
from pydantic import Field

LOG: list[dict[str, Any]] = []

server = MCPServer(
    "official-2026",
    version="1.0.0",
    log_level="WARNING",
    cache_hints={"tools/list": CacheHint(ttl_ms=60_000)},
)


@server.tool()
def region(
    ctx: Context,
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    flag: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Flag"})] = True,
    level: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Level"})] = 0,
    query: str | None = None,
) -> str:
    """Echoes the Mcp-Param-* headers it arrived with."""
    headers = ctx.headers or {}
    return json.dumps(
        {k.lower(): v for k, v in headers.items() if k.lower().startswith("mcp-param-")}
    )


@server.tool()
def legacy() -> str:
    """A plain result."""
    return "legacy ok"


@server.tool()
def ask(ctx: Context) -> str | InputRequiredResult:
    """One input round: asks for a name (elicitation) with a requestState."""
    responses = ctx.input_responses
    if not responses:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        request = {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Your name?", "requestedSchema": schema},
        }
        return InputRequiredResult(input_requests={"who": request}, request_state="opaque-state-1")
    answer = responses.get("who")
    content = getattr(answer, "content", None) or {}
    return f"hello {content.get('name')} ({ctx.request_state})"


def recorded(inner: Any) -> Any:
    """``inner`` with every request recorded (headers lowercased, JSON body) and the admin
    routes of mock_server.py."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        if scope["path"].startswith("/admin/"):
            if scope["path"] == "/admin/clear":
                LOG.clear()
            body = json.dumps(LOG).encode()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": body})
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        raw = b"".join(chunks)
        entry: dict[str, Any] = {
            "method": scope["method"],
            "headers": {k.decode().lower(): v.decode() for k, v in scope["headers"]},
        }
        if raw:
            try:
                entry["body"] = json.loads(raw)
            except ValueError:
                entry["raw"] = raw.decode(errors="replace")
        LOG.append(entry)
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await inner(scope, replay, send)

    return app


app = recorded(server.streamable_http_app())
