"""One ``Server`` serves every Streamable HTTP session (basic/transports.mdx §Session
Management): ``Context.session_state`` is the supported place for per-session data -- the
same dict across one session's requests, another for another session, none shared in
sessionless mode."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcpbind import LATEST_HANDSHAKE, Client, Context, Server, json_value
from mcpbind.http import StreamableHTTPApp

from ._support import LiveServer

pytestmark = pytest.mark.anyio


def cart_server() -> Server:
    server = Server("carts")

    @server.tool()
    def add_item(item: str, ctx: Context) -> list[str]:
        cart: list[str] = ctx.session_state.setdefault("cart", [])
        cart.append(item)
        return cart

    return server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=[False, True], ids=["sessions", "stateless"])
def live(request: pytest.FixtureRequest) -> Iterator[tuple[LiveServer, bool]]:
    stateless: bool = request.param
    server = LiveServer(StreamableHTTPApp(cart_server(), sessionless=stateless)).start()
    try:
        yield server, stateless
    finally:
        server.stop()


async def cart_after(client: Client, item: str) -> object:
    result = await client.call("add_item", {"item": item})
    return json_value(result.structured_content)


async def test_each_http_session_has_its_own_state(live: tuple[LiveServer, bool]) -> None:
    """§Session Management: two clients, two ``Mcp-Session-Id``s, two carts; without
    sessions (``sessionless=True``) every request starts empty."""
    server, stateless = live
    async with (
        Client(server.url, protocol_version=LATEST_HANDSHAKE) as alice,
        Client(server.url, protocol_version=LATEST_HANDSHAKE) as bob,
    ):
        first = [await cart_after(alice, "apple"), await cart_after(bob, "bread")]
        second = [await cart_after(alice, "pear"), await cart_after(bob, "milk")]
    if stateless:
        assert first == [{"result": ["apple"]}, {"result": ["bread"]}]
        assert second == [{"result": ["pear"]}, {"result": ["milk"]}]
    else:
        assert first == [{"result": ["apple"]}, {"result": ["bread"]}]
        assert second == [{"result": ["apple", "pear"]}, {"result": ["bread", "milk"]}]
