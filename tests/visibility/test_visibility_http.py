"""Two principals with different scopes list different tools over Streamable HTTP, on both eras
(a 2025-11-25 session and 2026-07-28 per-request), through pagination; a listing that a shared
cache may keep (``cacheScope: "public"``) never holds a scoped tool.

Spec: 2025-11-25 basic/authorization.mdx (the principal comes from the bearer token; a call
without the scope stays 403, §Scope Challenge Handling), server/utilities/pagination.mdx,
2026-07-28 server/utilities/caching.mdx (``cacheScope``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest
from support.live_server import LiveServer

from mcpbind import Client, Server
from mcpbind.http import StreamableHTTPApp
from mcpbind.server.principal import Principal, current_principal

pytestmark = pytest.mark.anyio

PRINCIPALS = {
    "alice-token": Principal("alice", scopes=frozenset({"notes:read"})),
    "admin-token": Principal("root", scopes=frozenset({"notes:read", "admin"})),
}
OPEN = [f"open{i}" for i in range(5)]
SECRET = [f"secret{i}" for i in range(5)]


def _server() -> Server:
    server = Server("visible-http", "1.0.0", page_size=2)  # scoped tools hidden by default

    def fn() -> str:
        return "ok"

    for open_name, secret_name in zip(OPEN, SECRET, strict=True):
        server.tool(open_name)(fn)
        server.tool(secret_name, scopes=["admin"])(fn)
    return server


async def _auth(app: Any, scope: dict[str, Any], receive: Any, send: Any) -> Any:
    """A stand-in for ``ResourceServer``: the token names a principal; a call of a tool that
    declares scopes the principal lacks is refused 403, as the real check does."""
    headers = dict(scope["headers"])
    token = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
    principal = PRINCIPALS[token]
    scope["mcp.principal"] = principal
    current_principal.set(principal)
    return receive


@contextmanager
def _live() -> Iterator[LiveServer]:
    live = LiveServer(StreamableHTTPApp(_server(), path="/mcp", auth=_auth)).start()
    try:
        yield live
    finally:
        live.stop()


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_two_principals_list_different_tools_through_pages(version: str) -> None:
    with _live() as live:
        seen: dict[str, list[str]] = {}
        for token in PRINCIPALS:
            async with Client(live.url, auth=token, protocol_version=version) as client:
                assert client.protocol_version == version
                seen[token] = [tool.name async for tool in client.iter_tools()]
        assert seen["alice-token"] == OPEN
        interleaved = [name for pair in zip(OPEN, SECRET, strict=True) for name in pair]
        assert seen["admin-token"] == interleaved


async def test_a_shared_cache_never_holds_a_scoped_tool() -> None:
    """A gateway that shares ``cacheScope: "public"`` results across callers (caching.mdx)
    would serve them to anyone: no page that lists a scoped tool may be public, whoever asks
    first, while a server whose listing is the same for all keeps its public hint."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
    }
    shared: dict[str | None, dict[str, Any]] = {}  # cursor -> the public page, for everyone
    with _live() as live, httpx2.Client(timeout=30) as http:
        for token in ("admin-token", "alice-token", "admin-token"):
            cursor: str | None = None
            while True:
                if cursor in shared:  # what a shared cache would answer
                    page = shared[cursor]
                else:
                    params: dict[str, Any] = {"_meta": meta}
                    if cursor is not None:
                        params["cursor"] = cursor
                    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}
                    sent = {**headers, "authorization": f"Bearer {token}"}
                    page = http.post(live.url, json=body, headers=sent).json()["result"]
                    if page["cacheScope"] == "public":
                        shared[cursor] = page
                names = [tool["name"] for tool in page["tools"]]
                if token == "alice-token":
                    assert not set(names) & set(SECRET)
                if page["cacheScope"] == "public":
                    assert not set(names) & set(SECRET)
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
        assert not shared  # every page depended on the caller
    # A server whose listing is the same for every caller stays shareable.
    server = _server()
    server.hide_ungranted = False
    async with Client(server, protocol_version="2026-07-28", cache=False) as client:
        result = await client.list_tools()
        assert result.cache_scope == "public"
