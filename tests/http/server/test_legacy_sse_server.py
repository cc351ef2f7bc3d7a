"""The legacy HTTP+SSE server endpoint (``mcpbind.http.LegacySSEApp``) on the wire: the
``endpoint`` event, POSTed messages answered on the stream, and the same safety as Streamable
HTTP (Host/Origin checks, body cap, session cap, principal binding, sessions that end with
their stream).

Spec: 2024-11-05 basic/transports.mdx §HTTP with SSE and its §Security Warning.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from support.live_server import LiveServer, spawn_server

from mcpbind.http import LegacySSEApp, StreamableHTTPApp, with_legacy_sse
from mcpbind.protocol import SessionOptions

from ._support import init_body, make_server

pytestmark = pytest.mark.anyio

TIMEOUT = 10.0
SERVE = str(Path(__file__).resolve().parent / "legacy_serve.py")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def legacy() -> Iterator[tuple[str, LegacySSEApp]]:
    app = LegacySSEApp(make_server(), max_sessions=2, max_body_size=1000)
    live = LiveServer(app).start()
    try:
        yield f"http://127.0.0.1:{live.port}", app
    finally:
        live.stop()


class Stream:
    """An open legacy SSE stream: its endpoint URL and its events as they come."""

    def __init__(self, response: httpx2.Response, base: str) -> None:
        self.response = response
        self.base = base
        self._lines = response.aiter_lines()
        self.endpoint = ""

    async def event(self) -> tuple[str, str]:
        """The next event as (event type, data); comments are skipped."""
        kind, data = "message", []
        with anyio.fail_after(TIMEOUT):
            async for line in self._lines:
                if line == "" and data:
                    return kind, "\n".join(data)
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
        raise AssertionError("the stream ended")

    async def ended(self) -> None:
        """Return once the server has ended the response (whatever came before is dropped)."""
        with anyio.fail_after(TIMEOUT):
            async for _ in self._lines:
                pass

    async def message(self) -> dict[str, Any]:
        kind, data = await self.event()
        assert kind == "message"
        result: dict[str, Any] = json.loads(data)
        return result


@contextlib.asynccontextmanager
async def open_stream(
    client: httpx2.AsyncClient, base: str, path: str = "/sse", headers: dict[str, str] | None = None
) -> AsyncIterator[Stream]:
    async with client.stream("GET", base + path, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"] == "text/event-stream"
        stream = Stream(response, base)
        kind, data = await stream.event()
        assert kind == "endpoint"
        stream.endpoint = base + data
        yield stream


async def post(client: httpx2.AsyncClient, url: str, body: Any, **headers: str) -> httpx2.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await client.post(
        url, content=content, headers={"content-type": "application/json", **headers}
    )


async def handshake(client: httpx2.AsyncClient, stream: Stream, version: str) -> None:
    r = await post(client, stream.endpoint, init_body(version))
    assert r.status_code == 202 and r.text == "Accepted"
    answer = await stream.message()
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == version
    r = await post(
        client, stream.endpoint, {"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    assert r.status_code == 202


async def wait_empty(app: LegacySSEApp) -> None:
    with anyio.fail_after(TIMEOUT):
        while app.sessions:  # noqa: ASYNC110 - sessions end with their connection
            await anyio.sleep(0.02)


async def test_endpoint_event_then_messages_on_the_stream(legacy: tuple[str, LegacySSEApp]) -> None:
    """§HTTP with SSE: the first event is ``endpoint``; POSTs are accepted with 202 and the
    answers (and what a handler sends meanwhile) are ``message`` events on the stream;
    closing the stream ends the session."""
    base, app = legacy
    async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
        async with open_stream(client, base) as stream:
            assert stream.endpoint.startswith(base + "/messages/?session_id=")
            session_id = stream.endpoint.rpartition("=")[2]
            assert len(session_id) == 43 and session_id in app.sessions
            await handshake(client, stream, "2024-11-05")
            call = {
                "jsonrpc": "2.0",
                "id": "c",
                "method": "tools/call",
                "params": {
                    "name": "chatty",
                    "arguments": {"n": 2, "delay": 0},
                    "_meta": {"progressToken": "p"},
                },
            }
            r = await post(client, stream.endpoint, call)
            assert r.status_code == 202
            first, second, answer = [await stream.message() for _ in range(3)]
            assert first["method"] == second["method"] == "notifications/progress"
            assert answer["id"] == "c"
            assert answer["result"]["content"] == [{"type": "text", "text": "sent 2"}]
            # A body that is no JSON-RPC message is refused on the POST itself.
            bad = await post(client, stream.endpoint, b"{not json")
            assert bad.status_code == 400 and bad.json()["error"]["code"] == -32700
        await wait_empty(app)
        gone = await post(client, stream.endpoint, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert gone.status_code == 404


async def test_requests_that_are_refused(legacy: tuple[str, LegacySSEApp]) -> None:
    """Wrong method per endpoint (405 with Allow), no or unknown session (400/404), a body
    that is not JSON (415) or too large (413), unknown paths (404)."""
    base, app = legacy
    async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
        r = await client.post(base + "/sse", json=init_body())
        assert r.status_code == 405 and r.headers["allow"] == "GET"
        r = await client.get(base + "/messages/")
        assert r.status_code == 405 and r.headers["allow"] == "POST"
        assert (await client.get(base + "/elsewhere")).status_code == 404
        r = await post(client, base + "/messages/", init_body())
        assert r.status_code == 400 and "session_id" in r.json()["error"]["message"]
        r = await post(client, base + "/messages/?session_id=nope", init_body())
        assert r.status_code == 404
        async with open_stream(client, base) as stream:
            r = await client.post(
                stream.endpoint, content=b"{}", headers={"content-type": "text/plain"}
            )
            assert r.status_code == 415
            r = await post(client, stream.endpoint, b"[" + b" " * 2000 + b"]")
            assert r.status_code == 413
            await handshake(client, stream, "2025-03-26")  # the session is still usable
        await wait_empty(app)


async def test_host_and_origin_are_checked(legacy: tuple[str, LegacySSEApp]) -> None:
    """§Security Warning: "Servers MUST validate the Origin header on all incoming
    connections" -- and the Host (DNS rebinding); bound to loopback, only loopback names."""
    base, app = legacy
    async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
        r = await client.get(base + "/sse", headers={"host": "evil.example"})
        assert r.status_code == 421
        r = await client.get(base + "/sse", headers={"origin": "https://evil.example"})
        assert r.status_code == 403
        async with open_stream(client, base, headers={"origin": "http://localhost:3000"}) as stream:
            r = await post(client, stream.endpoint, init_body(), origin="https://evil.example")
            assert r.status_code == 403
        assert not app.sessions or await wait_empty(app) is None


async def test_sessions_are_bounded_and_freed_with_their_stream(
    legacy: tuple[str, LegacySSEApp],
) -> None:
    """At most ``max_sessions`` streams (503 with Retry-After beyond); a closed stream frees
    its slot at once."""
    base, app = legacy
    await wait_empty(app)
    async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
        async with open_stream(client, base), open_stream(client, base):
            r = await client.get(base + "/sse")
            assert r.status_code == 503 and r.headers["retry-after"] == "5"
        await wait_empty(app)
        async with open_stream(client, base) as stream:
            await handshake(client, stream, "2025-11-25")
        await wait_empty(app)


async def test_sessions_per_client_are_capped_like_streamable_http() -> None:
    """Issue 28 F20: one client address may hold ``max_sessions_per_client`` streams (what
    ``beside`` copies from the Streamable HTTP app); the next gets the same 503 as a
    Streamable HTTP ``initialize`` past the cap, and a closed stream frees its slot."""
    combined = with_legacy_sse(StreamableHTTPApp(make_server(), max_sessions_per_client=2))
    assert combined.legacy.max_sessions_per_client == 2
    live = LiveServer(combined).start()
    base = f"http://127.0.0.1:{live.port}"
    try:
        async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
            async with open_stream(client, base), open_stream(client, base):
                r = await client.get(base + "/sse")
                assert r.status_code == 503 and r.headers["retry-after"] == "5"
                assert r.json()["error"]["message"] == (
                    "Service Unavailable: too many sessions for this client"
                )
            await wait_empty(combined.legacy)
            async with open_stream(client, base) as stream:
                await handshake(client, stream, "2025-11-25")
        unlimited = LegacySSEApp(make_server(), max_sessions_per_client=None)
        assert unlimited.max_sessions_per_client is None
    finally:
        live.stop()


async def test_the_nesting_limit_of_the_session_options_is_checked_on_the_post() -> None:
    """As on Streamable HTTP: a body nested deeper than ``SessionOptions.max_depth`` is
    refused on the POST itself (400), not accepted (202) and answered on the stream."""
    app = LegacySSEApp(make_server(), session_options=SessionOptions(max_depth=8))
    live = LiveServer(app).start()
    base = f"http://127.0.0.1:{live.port}"
    try:
        async with (
            httpx2.AsyncClient(timeout=TIMEOUT) as client,
            open_stream(client, base) as stream,
        ):
            deep = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":' + b"[" * 20
            deep += b"]" * 20 + b"}}"
            r = await post(client, stream.endpoint, deep)
            assert r.status_code == 400, r.text
            await handshake(client, stream, "2025-03-26")  # the session is still usable
    finally:
        live.stop()


async def test_a_stream_without_a_handshake_ends_after_init_timeout() -> None:
    """As a Streamable HTTP session without ``notifications/initialized`` is dropped after
    ``init_timeout``: a legacy stream (its session) that completes no handshake by then ends,
    freeing its slot; one that did stays."""
    combined = with_legacy_sse(StreamableHTTPApp(make_server(), init_timeout=2.0))
    app = combined.legacy
    assert app.init_timeout == 2.0
    live = LiveServer(combined).start()
    base = f"http://127.0.0.1:{live.port}"
    try:
        async with (
            httpx2.AsyncClient(timeout=TIMEOUT) as client,
            open_stream(client, base) as born,
        ):
            await handshake(client, born, "2025-11-25")
            born_id = born.endpoint.rpartition("=")[2]
            async with open_stream(client, base) as unborn:
                await unborn.ended()  # ended by the server, without a handshake
            assert list(app.sessions) == [born_id]  # opened first, initialized: kept
    finally:
        live.stop()


async def test_a_session_belongs_to_its_principal() -> None:
    """Like Streamable HTTP sessions: a POST from another principal finds no session."""
    app = LegacySSEApp(make_server(), principal=lambda scope: dict(scope["headers"]).get(b"x-user"))
    live = LiveServer(app).start()
    base = f"http://127.0.0.1:{live.port}"
    try:
        async with (
            httpx2.AsyncClient(timeout=TIMEOUT) as client,
            open_stream(client, base, headers={"x-user": "ada"}) as stream,
        ):
            r = await post(client, stream.endpoint, init_body(), **{"x-user": "bob"})
            assert r.status_code == 404
            r = await post(client, stream.endpoint, init_body(), **{"x-user": "ada"})
            assert r.status_code == 202
            assert (await stream.message())["id"] == 1
    finally:
        live.stop()


async def test_mounted_under_a_prefix_beside_streamable_http() -> None:
    """Mounted in Starlette under ``/old`` with Streamable HTTP beside it under ``/new``: the
    endpoint event names the prefixed message path, and both transports serve."""
    combined = with_legacy_sse(StreamableHTTPApp(make_server()))
    app = Starlette(routes=[Mount("/old", app=combined.legacy), Mount("/new", app=combined.app)])
    live = LiveServer(app).start()
    base = f"http://127.0.0.1:{live.port}"
    try:
        async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
            async with open_stream(client, base, "/old/sse") as stream:
                assert stream.endpoint.startswith(base + "/old/messages/?session_id=")
                await handshake(client, stream, "2025-11-25")
            r = await client.post(
                base + "/new/",
                json=init_body(),
                headers={"accept": "application/json, text/event-stream"},
            )
            assert r.status_code == 200
            assert r.headers["mcp-session-id"] in combined.app.sessions
    finally:
        live.stop()


async def test_serve_http_with_legacy_sse_ends_open_streams_on_sigterm() -> None:
    """``serve_http(..., legacy_sse=True)``: both transports on one port; on SIGTERM the
    legacy streams are ended (``aclose``) so the server stops promptly and cleanly."""
    with spawn_server(SERVE) as (process, base):
        async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
            async with open_stream(client, base) as stream:
                await handshake(client, stream, "2024-11-05")
                r = await client.post(
                    base + "/mcp",
                    json=init_body(),
                    headers={"accept": "application/json, text/event-stream"},
                )
                assert r.status_code == 200
                os.kill(process.pid, signal.SIGTERM)
                await stream.ended()  # a clean end of the chunked response, not a dead peer
            with anyio.fail_after(TIMEOUT):
                while process.poll() is None:  # noqa: ASYNC110 - a process has no event
                    await anyio.sleep(0.05)
            # uvicorn re-raises the signal once it has shut down cleanly.
            assert process.returncode in (0, -signal.SIGTERM)


async def test_both_endpoints_follow_one_settings_object_trusted_proxies_included() -> None:
    """The legacy endpoint made ``beside`` a Streamable HTTP app holds that app's settings
    object (``EndpointSettings``), not a copy: a setting changed on either applies to both,
    and the trusted proxies name each stream's client by the ``X-Forwarded-For`` the proxy
    (here the test, on 127.0.0.1) sent, so the per-client cap counts forwarded clients."""
    combined = with_legacy_sse(
        StreamableHTTPApp(make_server(), max_sessions_per_client=1, trusted_proxies=["127.0.0.1"])
    )
    assert combined.legacy.settings is combined.app.settings
    combined.app.max_sessions_per_client = 2
    assert combined.legacy.max_sessions_per_client == 2
    combined.legacy.max_sessions_per_client = 1
    assert combined.app.max_sessions_per_client == 1
    live = LiveServer(combined)
    live.server.config.proxy_headers = False  # what the app does with the header is tested
    live.start()
    base = f"http://127.0.0.1:{live.port}"
    first, second = {"x-forwarded-for": "203.0.113.1"}, {"x-forwarded-for": "203.0.113.2"}
    try:
        async with (
            httpx2.AsyncClient(timeout=TIMEOUT) as client,
            open_stream(client, base, headers=first),
            open_stream(client, base, headers=second),
        ):
            assert {s.client_address for s in combined.legacy.sessions.values()} == {
                "203.0.113.1",
                "203.0.113.2",
            }
            again = await client.get(base + "/sse", headers=first)
            assert again.status_code == 503  # the same forwarded client, past its cap
    finally:
        live.stop()
