"""``Context.headers``: the headers of the HTTP request that carried a request, on every HTTP
route (a 2025 session with SSE or JSON answers, the 2025 sessionless mode, 2026-07-28
per-request, the 2024-11-05 HTTP+SSE endpoint), read-only and lower-cased, credentials left
out; ``None`` in memory (and on stdio, the same session code).

Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP (each request is its own POST: its
headers are that POST's), basic/authorization.mdx §Token Passthrough (the token is not handed
on), 2026-07-28 basic/transports.mdx (per-request metadata headers).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import anyio
import pytest
from support.live_server import LiveServer

from mcpbind import Client, Context, Server, json_value
from mcpbind.http import (
    LegacySSETransport,
    StreamableHTTPApp,
    StreamableHTTPTransport,
    with_legacy_sse,
)
from mcpbind.http.server._asgi import RequestHeaders

pytestmark = pytest.mark.anyio


def _server() -> Server:
    server = Server("headers", "1.0.0")

    @server.tool()
    async def seen(ctx: Context, pause: float = 0) -> dict[str, Any]:
        await anyio.sleep(pause)
        headers = ctx.headers
        if headers is None:
            return {"over_http": False}
        return {
            "over_http": True,
            "tenant": headers.get("x-tenant"),
            "authorization": "authorization" in headers,
            "read_only": not hasattr(headers, "__setitem__"),
        }

    return server


@contextmanager
def _live(**options: Any) -> Iterator[str]:
    app = with_legacy_sse(StreamableHTTPApp(_server(), path="/mcp", **options))
    live = LiveServer(app).start()
    try:
        yield live.url
    finally:
        live.stop()


async def _seen(client: Client, pause: float = 0) -> dict[str, Any]:
    result = await client.call("seen", {"pause": pause})
    value = json_value(result.structured_content)
    assert isinstance(value, dict)
    return value


HEADERS = {"x-tenant": "acme", "authorization": "Bearer not-for-tools"}
EXPECTED = {"over_http": True, "tenant": "acme", "authorization": False, "read_only": True}


@pytest.mark.parametrize("json_response", [False, True])
@pytest.mark.parametrize("version", ["2025-03-26", "2025-11-25", "2026-07-28"])
async def test_a_handler_reads_the_headers_of_its_post(version: str, json_response: bool) -> None:
    with _live(json_response=json_response) as url:
        async with (
            StreamableHTTPTransport(url, headers=HEADERS) as wire,
            Client(wire, protocol_version=version) as client,
        ):
            assert await _seen(client) == EXPECTED
            # Requests in flight together each see their own POST's headers.
            async with anyio.create_task_group() as tg:
                answers: dict[str, dict[str, Any]] = {}

                async def one(tenant: str, pause: float) -> None:
                    wire.headers["x-tenant"] = tenant
                    answers[tenant] = await _seen(client, pause)

                tg.start_soon(one, "slow", 0.3)
                await anyio.sleep(0.05)
                tg.start_soon(one, "quick", 0)
            assert answers["slow"]["tenant"] == "slow"
            assert answers["quick"]["tenant"] == "quick"


async def test_the_sessionless_mode_and_the_legacy_endpoint_too() -> None:
    with _live(sessionless=True) as url:
        async with (
            StreamableHTTPTransport(url, headers=HEADERS) as wire,
            Client(wire, protocol_version="2025-11-25") as client,
        ):
            assert await _seen(client) == EXPECTED
    with _live() as url:
        base = url.removesuffix("/mcp")
        async with (
            LegacySSETransport(base + "/sse", headers=HEADERS) as wire,
            Client(wire, protocol_version="2024-11-05") as client,
        ):
            assert await _seen(client) == EXPECTED


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_no_headers_without_http(version: str) -> None:
    async with Client(_server(), protocol_version=version) as client:
        assert await _seen(client) == {"over_http": False}


def test_request_headers_lower_case_join_repeats_and_drop_credentials() -> None:
    """RFC 9110 §5.3: a repeated field is one comma-separated value (Cookie: RFC 6265 §5.4)."""
    raw = [
        (b"X-Forwarded-For", b" 10.0.0.1 "),
        (b"x-forwarded-for", b"10.0.0.2"),
        (b"cookie", b"a=1"),
        (b"cookie", b"b=2"),
        (b"authorization", b"Bearer t"),
        (b"dpop", b"proof"),
        (b"proxy-authorization", b"Basic x"),
    ]
    headers: Mapping[str, str] = RequestHeaders(raw)
    assert dict(headers) == {"x-forwarded-for": "10.0.0.1, 10.0.0.2", "cookie": "a=1; b=2"}
    assert len(headers) == 2 and "authorization" not in headers
    assert "10.0.0.1" not in repr(headers)  # names only: values stay out of logs


def test_a_batch_fed_to_the_session_task_keeps_its_headers() -> None:
    """2025-03-26 basic/transports.mdx: a batch POST's requests run in the session's task,
    not the POST's; each still sees the POST's headers (in JSON mode: one JSON array)."""
    import httpx2

    with _live(json_response=True) as url, httpx2.Client(timeout=30) as http:
        base = {"content-type": "application/json", "accept": "application/json"}
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        opened = http.post(url, json=init, headers=base)
        session = {**base, "mcp-session-id": opened.headers["mcp-session-id"]}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(url, json=done, headers=session).status_code == 202
        calls = [
            {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "seen"}}
            for i in (1, 2)
        ]
        answers = http.post(url, json=calls, headers={**session, "x-tenant": "batch"}).json()
        assert [a["result"]["structuredContent"]["tenant"] for a in answers] == ["batch"] * 2
