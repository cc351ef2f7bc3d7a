"""A request answered 404 while the client's sessions are being replaced, against mcpbind's
own Streamable HTTP server (uvicorn on 127.0.0.1), the interleaving forced by holding one
request on its way out (no sleeps).

Spec: 2025-11-25 basic/transports.mdx §Session Management, point 3 (a terminated session's
id gets 404) and point 4 ("When a client receives HTTP 404 in response to a request
containing an MCP-Session-Id, it MUST start a new session by sending a new
InitializeRequest without a session ID attached"). The server did not act on a request it
answered 404, so the client sends it again on a newer session. A request that has been
through one renewal is sent again only on a session another request started since: one that
meets 404 on the newest session after its own renewal fails, so no request keeps starting
sessions.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest

from mcpbind import Client, PeerError, types
from mcpbind.http.client import StreamableHTTPTransport

from ._support import Running, server

pytestmark = pytest.mark.anyio
ERA = "2025-11-25"
HELD = 40
"""The ``a`` argument of the call whose second POST (its first re-send) is held."""


@pytest.fixture(scope="module")
def mcpbind_server() -> Iterator[Running]:
    with server("mcpbind") as running:
        yield running


class HoldResend(httpx2.AsyncBaseTransport):
    """A real HTTP transport that records the session each POST of the held call carried
    and holds its second POST until ``release`` is set (``holding`` says it got there)."""

    def __init__(self) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self.sessions: list[str | None] = []
        self.initializes = 0
        self.holding = anyio.Event()
        self.release = anyio.Event()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            body = json.loads(request.content)
            if body.get("method") == "initialize":
                self.initializes += 1
            arguments = body.get("params", {}).get("arguments", {})
            if body.get("method") == "tools/call" and arguments.get("a") == HELD:
                self.sessions.append(request.headers.get("mcp-session-id"))
                if len(self.sessions) == 2:
                    self.holding.set()
                    await self.release.wait()
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def end_session(url: str, session: str | None) -> None:
    """The server ends ``session`` (a DELETE, as another client of it could send)."""
    headers = {"mcp-session-id": str(session), "mcp-protocol-version": ERA}
    async with httpx2.AsyncClient() as other:
        assert (await other.delete(url, headers=headers)).status_code == 200


@asynccontextmanager
async def connected(
    url: str, gate: HoldResend
) -> AsyncIterator[tuple[StreamableHTTPTransport, Client]]:
    """mcpbind's client on a session of the server at ``url``, its HTTP through ``gate``."""
    async with (
        httpx2.AsyncClient(transport=gate) as http,
        StreamableHTTPTransport(url, client=http, open_get_stream=False) as transport,
        Client(transport, protocol_version=ERA, timeout=10) as client,
    ):
        yield transport, client


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_a_404_for_a_replaced_session_is_sent_again_on_the_newer_one(
    mcpbind_server: Running,
) -> None:
    """Call A meets 404 on s1, the client starts s2, A's re-send is held; s2 ends and call B
    meets 404 on it, so the client starts s3. A's re-send, let go, gets 404 for s2 although
    s3 already exists: it is sent again on s3 and answered (it used to fail with the 404)."""
    url = mcpbind_server.url
    gate = HoldResend()
    answers: list[str] = []
    async with connected(url, gate) as (transport, client):
        s1 = transport.session_id
        await end_session(url, s1)

        async def call_a() -> None:
            answers.append(text(await client.call("add", {"a": HELD, "b": 2})))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call_a)
                await gate.holding.wait()  # A: 404 on s1, renewed to s2, re-send held
                s2 = transport.session_id
                await end_session(url, s2)
                assert text(await client.call("add", {"a": 1, "b": 2})) == "3"  # B renews: s3
                s3 = transport.session_id
                gate.release.set()
    assert answers == ["42"]
    assert len({s1, s2, s3}) == 3 and None not in (s1, s2, s3)
    assert gate.sessions == [s1, s2, s3]
    assert gate.initializes == 3  # the first, s2 (A's renewal), s3 (B's): none for A's 2nd 404


async def test_a_404_on_the_newest_session_after_a_renewal_reaches_the_caller(
    mcpbind_server: Running,
) -> None:
    """A meets 404 on s1, the client starts s2, A's re-send is held while s2 ends too. Let
    go, it gets 404 for s2, still the newest session, after its own renewal: the caller gets
    the 404 (a request starts one session at most, or a server that ends every session at
    once would make it loop); the next call starts s3 and is answered."""
    url = mcpbind_server.url
    gate = HoldResend()
    async with connected(url, gate) as (transport, client):
        s1 = transport.session_id
        await end_session(url, s1)
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:

                async def call_a() -> None:
                    with pytest.raises(PeerError, match="HTTP 404") as failed:
                        await client.call("add", {"a": HELD, "b": 2})
                    assert failed.value.code == -32001

                tg.start_soon(call_a)
                await gate.holding.wait()
                s2 = transport.session_id
                await end_session(url, s2)
                gate.release.set()
            assert gate.initializes == 2  # the first and s2: A started no second one
            assert text(await client.call("add", {"a": 1, "b": 2})) == "3"
        s3 = transport.session_id
    assert gate.sessions == [s1, s2]
    assert len({s1, s2, s3}) == 3 and None not in (s1, s2, s3)
