"""Every route of every app configuration passes the bearer check (issue 28, F1): Streamable
HTTP alone, with the legacy HTTP+SSE endpoint beside it (``auth`` given at construction, as
``serve_http(auth=..., legacy_sse=True)`` does, or set afterwards), sessionless, the
2026-07-28 requests, and all of it mounted in Starlette. Without a token every route but the
protected-resource metadata answers 401; a token without ``admin`` cannot call the tool or
read the resource declared ``scopes=["admin"]`` through any route (403), and one with it can.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from server_support import ISSUER, Endpoint, Keys
from starlette.applications import Starlette
from starlette.routing import Mount, Route
from support.live_server import LiveServer

from mcpbind import Server
from mcpbind.auth.server import JWTVerifier, ResourceServer
from mcpbind.auth.server.scopes import required_scopes
from mcpbind.http import StreamableHTTPApp, with_legacy_sse

pytestmark = pytest.mark.anyio

ACCEPT = "application/json, text/event-stream"
TIMEOUT = 20.0
HANDSHAKE = "2025-11-25"
CALL_ADMIN = {"method": "tools/call", "params": {"name": "admin_tool", "arguments": {}}}
READ_SECRET = {"method": "resources/read", "params": {"uri": "secret://vault"}}


def _server() -> Server:
    server = Server("guarded", "1.0.0")

    @server.tool(scopes=["admin"])
    def admin_tool() -> str:
        return "ran as admin"

    @server.resource("secret://vault", scopes=["admin"])
    def vault() -> str:
        return "the secret"

    @server.prompt(scopes=["admin"])
    def admin_prompt(topic: str) -> str:
        return topic

    return server


@dataclass
class Site:
    """One configuration served live: where its MCP endpoint and legacy endpoint are."""

    base: str  # scheme://host:port
    mcp: str  # path of the Streamable HTTP endpoint
    legacy: str | None  # path prefix of /sse and /messages/, None without the legacy endpoint
    sessionless: bool
    metadata: str  # path of the protected-resource metadata


def _auth(resource: str, jwks: Endpoint) -> ResourceServer:
    return ResourceServer(
        JWTVerifier(jwks.url, issuer=ISSUER), resource=resource, authorization_servers=[ISSUER]
    )


Build = Callable[[str, Endpoint], tuple[Any, Site]]


def _streamable(base: str, jwks: Endpoint) -> tuple[Any, Site]:
    auth = _auth(base + "/mcp", jwks)
    app = StreamableHTTPApp(_server(), path="/mcp", auth=auth)
    return app, Site(base, "/mcp", None, False, auth.metadata_path)


def _sessionless(base: str, jwks: Endpoint) -> tuple[Any, Site]:
    auth = _auth(base + "/mcp", jwks)
    app = StreamableHTTPApp(_server(), path="/mcp", sessionless=True, auth=auth)
    return app, Site(base, "/mcp", None, True, auth.metadata_path)


def _legacy_at_construction(base: str, jwks: Endpoint) -> tuple[Any, Site]:
    """What ``serve_http(server, auth=auth, legacy_sse=True)`` builds."""
    auth = _auth(base + "/mcp", jwks)
    app = with_legacy_sse(StreamableHTTPApp(_server(), path="/mcp", auth=auth))
    return app, Site(base, "/mcp", "", False, auth.metadata_path)


def _legacy_set_later(base: str, jwks: Endpoint) -> tuple[Any, Site]:
    auth = _auth(base + "/mcp", jwks)
    streamable = StreamableHTTPApp(_server(), path="/mcp")
    app = with_legacy_sse(streamable)
    streamable.auth = auth
    return app, Site(base, "/mcp", "", False, auth.metadata_path)


def _mounted(base: str, jwks: Endpoint) -> tuple[Any, Site]:
    auth = _auth(base + "/api/mcp", jwks)
    combined = with_legacy_sse(StreamableHTTPApp(_server(), auth=auth))
    site = Starlette(
        routes=[Route(auth.metadata_path, auth.metadata_app), Mount("/api/mcp", app=combined)]
    )
    return site, Site(base, "/api/mcp/", "/api/mcp", False, auth.metadata_path)


CONFIGS: dict[str, Build] = {
    "streamable": _streamable,
    "sessionless": _sessionless,
    "legacy-at-construction": _legacy_at_construction,
    "legacy-set-later": _legacy_set_later,
    "mounted-in-starlette": _mounted,
}


@contextlib.contextmanager
def _live(build: Build, jwks: Endpoint) -> Any:
    built: list[Any] = []

    async def site(scope: Any, receive: Any, send: Any) -> None:
        await built[0](scope, receive, send)

    live = LiveServer(site)
    app, served = build(f"http://127.0.0.1:{live.port}", jwks)
    built.append(app)
    live.start()
    try:
        yield served
    finally:
        live.stop()


def _routes(site: Site) -> list[tuple[str, str, dict[str, Any] | None, dict[str, str]]]:
    """Every (method, path, JSON body, headers) the configuration serves, beyond the metadata."""
    modern_meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    modern = {**ping, "params": {"_meta": modern_meta}}
    json_headers = {"content-type": "application/json", "accept": ACCEPT}
    routes: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = [
        ("POST", site.mcp, _init(), json_headers),
        ("POST", site.mcp, modern, {**json_headers, "mcp-protocol-version": "2026-07-28"}),
    ]
    if not site.sessionless:
        session = {"mcp-session-id": "x" * 43}
        routes += [
            ("POST", site.mcp, ping, {**json_headers, **session}),
            ("GET", site.mcp, None, {"accept": "text/event-stream", **session}),
            ("DELETE", site.mcp, None, session),
        ]
    if site.legacy is not None:
        routes += [
            ("GET", site.legacy + "/sse", None, {"accept": "text/event-stream"}),
            ("POST", site.legacy + "/messages/?session_id=x", _init(), json_headers),
        ]
    return routes


def _init(rid: int = 1) -> dict[str, Any]:
    params = {
        "protocolVersion": HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


@pytest.mark.parametrize("config", list(CONFIGS))
async def test_every_route_refuses_a_request_without_a_token(config: str, jwks: Endpoint) -> None:
    with _live(CONFIGS[config], jwks) as site:
        async with httpx2.AsyncClient(base_url=site.base, timeout=TIMEOUT) as client:
            metadata = await client.get(site.metadata)
            assert metadata.status_code == 200 and "authorization_servers" in metadata.json()
            for method, path, body, headers in _routes(site):
                content = None if body is None else json.dumps(body).encode()
                # Streamed: an SSE stream served by mistake must fail the test, not hang it.
                async with client.stream(method, path, content=content, headers=headers) as reply:
                    assert reply.status_code == 401, (config, method, path)
                    challenge = reply.headers["www-authenticate"]
                    assert challenge.startswith("Bearer resource_metadata=")


@pytest.mark.parametrize("config", list(CONFIGS))
async def test_scoped_tool_and_resource_need_their_scope_on_every_route(
    config: str, jwks: Endpoint, keys: Keys
) -> None:
    with _live(CONFIGS[config], jwks) as site:
        resource = site.base + site.mcp.rstrip("/")
        plain = keys.sign(aud=resource, scope="")
        admin = keys.sign(aud=resource, scope="admin")
        async with httpx2.AsyncClient(base_url=site.base, timeout=TIMEOUT) as client:
            for route in _scoped_routes(site):
                for message in (CALL_ADMIN, READ_SECRET):
                    async with route(client, plain) as send:
                        reply = await send(message)
                        assert reply.status_code == 403, (config, route, message, reply.text)
                        assert 'scope="admin"' in reply.headers["www-authenticate"]
                    async with route(client, admin) as send:
                        reply = await send(message)
                        assert reply.status_code in (200, 202), (config, route, reply.text)
                        assert ("ran as admin" in reply.text) or ("the secret" in reply.text)


Send = Callable[[dict[str, Any]], Any]
Route_ = Callable[[httpx2.AsyncClient, str], contextlib.AbstractAsyncContextManager[Send]]
"""``route(client, token)``: a context in which ``send(message)`` posts one request."""


def _scoped_routes(site: Site) -> list[Route_]:
    """The ways a request reaches the server, each as ``route(client, token)`` yielding a
    ``send(message)`` whose reply (or, on the legacy endpoint, the answer on the stream) has
    the text of the answer."""
    routes: list[Any] = [_modern]
    routes.append(_sessionless_post if site.sessionless else _session_post)
    if site.legacy is not None:
        routes.append(_legacy_message)
    return [functools.partial(r, site) for r in routes]


def _headers(token: str, **extra: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": ACCEPT,
        "authorization": f"Bearer {token}",
        **extra,
    }


@contextlib.asynccontextmanager
async def _modern(site: Site, client: httpx2.AsyncClient, token: str) -> AsyncIterator[Send]:
    async def send(message: dict[str, Any]) -> httpx2.Response:
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        params = message["params"]
        name = params.get("name", params.get("uri"))
        headers = _headers(
            token, **{"mcp-protocol-version": "2026-07-28", "mcp-method": message["method"]}
        )
        headers["mcp-name"] = name
        body = {"jsonrpc": "2.0", "id": 7, **message, "params": {**params, "_meta": meta}}
        return await client.post(site.mcp, json=body, headers=headers)

    yield send


@contextlib.asynccontextmanager
async def _sessionless_post(
    site: Site, client: httpx2.AsyncClient, token: str
) -> AsyncIterator[Send]:
    async def send(message: dict[str, Any]) -> httpx2.Response:
        headers = _headers(token, **{"mcp-protocol-version": HANDSHAKE})
        return await client.post(
            site.mcp, json={"jsonrpc": "2.0", "id": 7, **message}, headers=headers
        )

    yield send


@contextlib.asynccontextmanager
async def _session_post(site: Site, client: httpx2.AsyncClient, token: str) -> AsyncIterator[Send]:
    # The session is opened with a token that may call anything: only the request's own
    # token decides whether it runs.
    opened = await client.post(site.mcp, json=_init(), headers=_headers(token))
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    extra = {"mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (
        await client.post(site.mcp, json=initialized, headers=_headers(token, **extra))
    ).status_code == 202

    async def send(message: dict[str, Any]) -> httpx2.Response:
        body = {"jsonrpc": "2.0", "id": 7, **message}
        return await client.post(site.mcp, json=body, headers=_headers(token, **extra))

    yield send


@contextlib.asynccontextmanager
async def _legacy_message(
    site: Site, client: httpx2.AsyncClient, token: str
) -> AsyncIterator[Send]:
    assert site.legacy is not None
    headers = {"accept": "text/event-stream", "authorization": f"Bearer {token}"}
    async with client.stream("GET", site.legacy + "/sse", headers=headers) as stream:
        assert stream.status_code == 200
        lines = stream.aiter_lines()

        async def event() -> str:
            data: list[str] = []
            with anyio.fail_after(TIMEOUT):
                async for line in lines:
                    if line == "" and data:
                        return "\n".join(data)
                    if line.startswith("data:"):
                        data.append(line[5:].strip())
            raise AssertionError("the stream ended")

        endpoint = await event()
        init = await client.post(endpoint, json=_init(), headers=_headers(token))
        assert init.status_code == 202
        await event()
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (
            await client.post(endpoint, json=initialized, headers=_headers(token))
        ).status_code == 202

        async def send(message: dict[str, Any]) -> httpx2.Response:
            reply = await client.post(
                endpoint, json={"jsonrpc": "2.0", "id": 7, **message}, headers=_headers(token)
            )
            if reply.status_code != 202:
                return reply
            answer = await event()  # the answer travels on the stream
            return httpx2.Response(202, text=answer)

        yield send


def _request(method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


def test_every_method_naming_a_scoped_target_needs_its_scope() -> None:
    """Not only calling, getting and reading: subscribing to a scoped resource, listening
    for its updates (2026-07-28) and completing an argument of a scoped prompt or resource
    need the scope too; other targets need none."""
    server = _server()
    scoped = [
        _request("resources/subscribe", {"uri": "secret://vault"}),
        _request(
            "subscriptions/listen",
            {"notifications": {"resourceSubscriptions": ["test://open", "secret://vault"]}},
        ),
        _request(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "admin_prompt"}, "argument": {"name": "topic"}},
        ),
        _request(
            "completion/complete",
            {"ref": {"type": "ref/resource", "uri": "secret://vault"}, "argument": {"name": "x"}},
        ),
    ]
    for body in scoped:
        assert required_scopes(server, body) == {"admin"}, body
    open_ones = [
        _request("resources/subscribe", {"uri": "test://open"}),
        _request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
        _request("completion/complete", {"ref": {"type": "ref/prompt", "name": "other"}}),
        _request("completion/complete", {"ref": "not an object"}),
    ]
    for body in open_ones:
        assert required_scopes(server, body) == frozenset(), body


async def test_listening_for_a_scoped_resource_needs_its_scope(jwks: Endpoint, keys: Keys) -> None:
    with _live(_streamable, jwks) as site:
        plain = keys.sign(aud=site.base + site.mcp, scope="")
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        params = {"notifications": {"resourceSubscriptions": ["secret://vault"]}, "_meta": meta}
        body = {"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen", "params": params}
        extra = {"mcp-protocol-version": "2026-07-28", "mcp-method": "subscriptions/listen"}
        async with (
            httpx2.AsyncClient(base_url=site.base, timeout=TIMEOUT) as client,
            client.stream("POST", site.mcp, json=body, headers=_headers(plain, **extra)) as reply,
        ):  # streamed: a listen stream opened by mistake fails the test instead of hanging it
            assert reply.status_code == 403
            assert 'scope="admin"' in reply.headers["www-authenticate"]
