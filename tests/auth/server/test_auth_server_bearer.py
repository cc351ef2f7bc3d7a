"""ResourceServer, the bearer check of StreamableHTTPApp: 2025-11-25 / 2026-07-28
basic/authorization §Protected Resource Metadata Discovery Requirements (RFC 9728 path
insertion), §Error Handling (401/403), §Scope Challenge Handling (every needed scope in one
challenge, scope hierarchies), on a real uvicorn with a real JWKS endpoint."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest
from server_support import ISSUER, Endpoint, Keys
from support.live_server import LiveServer

from mcpbind import Client, Context, Server
from mcpbind.auth.client.jose import DPoPKey
from mcpbind.auth.server import JWTVerifier, ResourceServer, metadata_path
from mcpbind.http import StreamableHTTPApp, with_legacy_sse

ACCEPT = "application/json, text/event-stream"


def _server() -> Server:
    server = Server("scoped", "1.0.0")

    @server.tool(scopes=["notes:write"])
    def write(text: str) -> str:
        return text

    @server.tool()
    def read() -> str:
        return "open"

    @server.prompt(scopes="prompts:use")
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.resource_template("files://{name}", scopes=["files:read"])
    def file(name: str) -> str:
        return name

    return server


@contextmanager
def _protected(
    jwks: Endpoint,
    path: str | None = "/mcp",
    failure_backoff: float = 1.0,
    server: Server | None = None,
    **auth: Any,
) -> Iterator[LiveServer]:
    app = StreamableHTTPApp(server or _server(), path=path, max_body_size=4096)
    live = LiveServer(app)
    if path is None:
        live.url = live.url.removesuffix("/mcp")
    app.auth = ResourceServer(
        JWTVerifier(jwks.url, issuer=ISSUER, failure_backoff=failure_backoff),
        resource=live.url,
        authorization_servers=[ISSUER],
        **auth,
    )
    live.start()
    try:
        yield live
    finally:
        live.stop()


def _post(url: str, body: Any, token: str | None = None, **headers: str) -> httpx2.Response:
    sent = {"content-type": "application/json", "accept": ACCEPT}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    sent.update(headers)
    return httpx2.post(url, json=body, headers=sent, timeout=30)


def _call(name: str, arguments: dict[str, Any] | None = None, rid: int = 1) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def _post_modern(url: str, message: dict[str, Any], token: str, **extra: str) -> httpx2.Response:
    """``message`` as a 2026-07-28 request: no session, ``_meta`` and the standard headers."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = message["params"]
    name = params.get("name", params.get("uri"))
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": message["method"], **extra}
    body = {**message, "params": {**params, "_meta": meta}}
    return _post(url, body, token, **headers, **({"mcp-name": name} if name else {}))


def test_metadata_path_inserts_the_resource_path() -> None:
    assert metadata_path("https://h.example/mcp") == "/.well-known/oauth-protected-resource/mcp"
    assert metadata_path("https://h.example/a/b/") == "/.well-known/oauth-protected-resource/a/b"
    assert metadata_path("https://h.example") == "/.well-known/oauth-protected-resource"
    with pytest.raises(ValueError, match="absolute"):
        ResourceServer(
            JWTVerifier("https://a.example/j", issuer=ISSUER),
            resource="/mcp",
            authorization_servers=[ISSUER],
        )
    with pytest.raises(ValueError, match="at least one"):
        ResourceServer(
            JWTVerifier("https://a.example/j", issuer=ISSUER),
            resource="https://h.example",
            authorization_servers=[],
        )


def test_metadata_at_the_root_for_a_server_at_the_root(jwks: Endpoint) -> None:
    with _protected(
        jwks, path=None, resource_name="Scoped", scopes_supported=["notes:read"]
    ) as live:
        meta = f"{live.url}/.well-known/oauth-protected-resource"
        document = httpx2.get(meta, timeout=30).json()
        head = httpx2.head(meta, timeout=30)
        assert head.status_code == 200 and head.content == b""
        assert int(head.headers["content-length"]) == len(httpx2.get(meta, timeout=30).content)
        assert document["resource"] == live.url and document["resource_name"] == "Scoped"
        preflight = httpx2.options(meta, timeout=30)
        assert (
            preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"
        )
        assert httpx2.post(meta, timeout=30).status_code == 405
        challenge = _post(live.url, _call("read")).headers["www-authenticate"]
        assert challenge == f'Bearer resource_metadata="{meta}", scope="notes:read"'


def test_every_method_needs_a_token_and_bad_headers_get_401(jwks: Endpoint, keys: Keys) -> None:
    with _protected(jwks) as live:
        assert (
            httpx2.get(live.url, headers={"accept": "text/event-stream"}, timeout=30).status_code
            == 401
        )
        assert httpx2.delete(live.url, timeout=30).status_code == 401
        token = keys.sign(aud=live.url)
        for value in (f"Basic {token}", "Bearer", f"Token {token}", token):
            reply = _post(live.url, _call("read"), authorization=value)
            assert reply.status_code == 401, value
            assert reply.headers["www-authenticate"].startswith('Bearer resource_metadata="')
        twice = httpx2.post(
            live.url,
            json=_call("read"),
            headers=[
                ("content-type", "application/json"),
                ("accept", ACCEPT),
                ("authorization", f"Bearer {token}"),
                ("authorization", f"Bearer {token}"),
            ],
            timeout=30,
        )
        assert twice.status_code == 401
        assert _post_modern(live.url, _call("read"), token).status_code == 200


def test_the_legacy_sse_endpoint_beside_it_is_guarded_too(jwks: Endpoint, keys: Keys) -> None:
    """``serve_http(legacy_sse=True)`` / ``with_legacy_sse``: ``GET /sse`` and ``POST
    /messages/`` pass the same check, read from the app when a request comes (``make fuzz``
    found both served without a token, and a scoped tool callable without its scope)."""
    streamable = StreamableHTTPApp(_server(), path="/mcp")
    live = LiveServer(with_legacy_sse(streamable))
    base = live.url.removesuffix("/mcp")
    streamable.auth = ResourceServer(
        JWTVerifier(jwks.url, issuer=ISSUER), resource=live.url, authorization_servers=[ISSUER]
    )
    live.start()
    try:
        accept = {"accept": "text/event-stream"}
        with httpx2.stream("GET", base + "/sse", headers=accept, timeout=30) as anonymous:
            assert anonymous.status_code == 401
            assert anonymous.headers["www-authenticate"].startswith("Bearer ")
        reply = _post(base + "/messages/?session_id=x", _call("read"))
        assert reply.status_code == 401
        token = keys.sign(aud=live.url, scope="")
        signed = {**accept, "authorization": f"Bearer {token}"}
        with httpx2.stream("GET", base + "/sse", headers=signed, timeout=30) as stream:
            assert stream.status_code == 200
            lines = stream.iter_lines()
            assert next(lines) == "event: endpoint"
            endpoint = base + next(lines).removeprefix("data: ")
            denied = _post(endpoint, _call("write", {"text": "x"}), token)
            assert denied.status_code == 403
            assert 'scope="notes:write"' in denied.headers["www-authenticate"]
            assert _post(endpoint, _call("read"), token).status_code == 202
            assert _post(endpoint, _call("read")).status_code == 401
    finally:
        live.stop()


def test_insufficient_scope_for_tools_prompts_and_templates(jwks: Endpoint, keys: Keys) -> None:
    with _protected(jwks) as live:
        plain = keys.sign(aud=live.url, scope="")
        assert _post_modern(live.url, _call("read"), plain).status_code == 200
        cases = [
            (_call("write", {"text": "x"}), "notes:write"),
            (
                {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "greet"}},
                "prompts:use",
            ),
            (
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "resources/read",
                    "params": {"uri": "files://a"},
                },
                "files:read",
            ),
        ]
        for message, scope in cases:
            reply = _post_modern(live.url, message, plain)
            assert reply.status_code == 403, message
            assert reply.headers["www-authenticate"] == (
                f'Bearer error="insufficient_scope", scope="{scope}", '
                f'resource_metadata="{live.url.removesuffix("/mcp")}/.well-known/oauth-protected-resource/mcp", '
                f'error_description="this operation needs the scopes: {scope}"'
            )
            granted = keys.sign(aud=live.url, scope=scope)
            assert _post_modern(live.url, message, granted).status_code == 200
        # A 2025-03-26 batch: every scope its requests need, in one challenge.
        batch = [_call("write", {"text": "x"}, 1), cases[2][0] | {"id": 2}]
        reply = _post(live.url, batch, plain, **{"mcp-protocol-version": "2025-03-26"})
        assert reply.status_code == 403
        assert 'scope="files:read notes:write"' in reply.headers["www-authenticate"]


def test_the_scopes_of_a_mounted_server_are_checked_by_the_prefixed_name(
    jwks: Endpoint, keys: Keys
) -> None:
    """§Scope Challenge Handling through ``Server.mount``: what the mounted server declares
    is asked of a call to its tool, prompt or template under the prefixed name (a server
    with no scopes of its own); its open tool stays open."""
    gateway = Server("gateway", "1.0.0")
    gateway.mount(_server(), prefix="notes")
    with _protected(jwks, server=gateway) as live:
        plain = keys.sign(aud=live.url, scope="")
        assert _post_modern(live.url, _call("notes_read"), plain).status_code == 200
        get = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get"}
        read = {"jsonrpc": "2.0", "id": 1, "method": "resources/read"}
        cases = [
            (_call("notes_write", {"text": "x"}), "notes:write"),
            (get | {"params": {"name": "notes_greet", "arguments": {"name": "a"}}}, "prompts:use"),
            (read | {"params": {"uri": "files://notes/a"}}, "files:read"),
        ]
        for message, scope in cases:
            reply = _post_modern(live.url, message, plain)
            assert reply.status_code == 403, message
            assert f'scope="{scope}"' in reply.headers["www-authenticate"]
            granted = keys.sign(aud=live.url, scope=scope)
            assert _post_modern(live.url, message, granted).status_code == 200


def test_scope_hierarchy_and_server_wide_scopes(jwks: Endpoint, keys: Keys) -> None:
    hierarchy = {"notes:admin": ["notes:write"], "notes:write": ["notes:read"]}
    with _protected(jwks, required_scopes=["notes:read"], scope_hierarchy=hierarchy) as live:
        assert 'scope="notes:read"' in _post(live.url, _call("read")).headers["www-authenticate"]
        reply = _post_modern(live.url, (_call("read")), keys.sign(aud=live.url, scope="other"))
        assert (
            reply.status_code == 403 and 'scope="notes:read"' in reply.headers["www-authenticate"]
        )
        admin = keys.sign(aud=live.url, scope="notes:admin")  # implies write, which implies read
        assert _post_modern(live.url, _call("write", {"text": "x"}), admin).status_code == 200
        reader = keys.sign(aud=live.url, scope="notes:read")
        reply = _post_modern(live.url, _call("write", {"text": "x"}), reader)
        assert 'scope="notes:read notes:write"' in reply.headers["www-authenticate"]


def test_limits_still_hold_when_the_check_reads_the_body(jwks: Endpoint, keys: Keys) -> None:
    with _protected(jwks) as live:
        token = keys.sign(aud=live.url)
        huge = _call("write", {"text": "x" * 10000})
        assert _post(live.url, huge, token).status_code == 413
        not_json = httpx2.post(
            live.url,
            content=b"{not json",
            headers={
                "content-type": "application/json",
                "accept": ACCEPT,
                "authorization": f"Bearer {token}",
            },
            timeout=30,
        )
        assert not_json.status_code == 400  # the transport answers it, as without auth


def test_unreachable_jwks_is_503_and_no_token_is_logged(
    jwks: Endpoint, keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    jwks.status = 500
    # failure_backoff=0: the JWKS is asked again at once when it is back (no negative cache).
    with (
        _protected(jwks, failure_backoff=0) as live,
        caplog.at_level(logging.DEBUG, logger="mcpbind"),
    ):
        token = keys.sign(aud=live.url)
        reply = _post(live.url, _call("read"), token)
        assert reply.status_code == 503 and reply.headers["retry-after"] == "5"
        jwks.status = 200
        expired = keys.sign(aud=live.url, exp=1)
        assert _post(live.url, _call("read"), expired).status_code == 401
    assert "cannot verify tokens" in caplog.text and "token refused" in caplog.text
    assert token not in caplog.text and expired not in caplog.text


@pytest.mark.anyio
async def test_no_principal_without_an_auth_layer() -> None:
    server = Server("open")

    @server.tool()
    def who(ctx: Context) -> str:
        return repr(ctx.principal)

    async with Client(server) as client:
        result = await client.call("who")
        assert result.content[0].text == "None"  # type: ignore[union-attr]


def test_mounted_in_starlette_with_the_metadata_at_the_root(jwks: Endpoint, keys: Keys) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route

    app = StreamableHTTPApp(_server())
    site = Starlette()
    live = LiveServer(site)
    resource = live.url.removesuffix("/mcp") + "/api/mcp"
    auth = ResourceServer(
        JWTVerifier(jwks.url, issuer=ISSUER), resource=resource, authorization_servers=[ISSUER]
    )
    app.auth = auth
    site.router.routes += [Route(auth.metadata_path, auth.metadata_app), Mount("/api/mcp", app=app)]
    live.start()
    try:
        base = live.url.removesuffix("/mcp")
        document = httpx2.get(base + "/.well-known/oauth-protected-resource/api/mcp", timeout=30)
        assert document.json()["resource"] == resource
        endpoint = resource + "/"  # where Starlette's Mount serves it
        assert _post(endpoint, _call("read")).status_code == 401
        key = DPoPKey()
        token = keys.sign(aud=resource, cnf={"jkt": key.thumbprint()})
        proof = key.proof("POST", endpoint, access_token=token)
        dpop = {"authorization": f"DPoP {token}", "dpop": proof}
        reply = _post_modern(endpoint, _call("read"), token, **dpop)
        assert reply.status_code == 200, reply.text
    finally:
        live.stop()


def test_declared_scopes_follow_registration() -> None:
    server = _server()
    assert server.scopes == {
        "tools/call write": {"notes:write"},
        "prompts/get greet": {"prompts:use"},  # a string is split like a scope parameter
        "resources/read files://{name}": {"files:read"},
    }

    @server.tool(name="write")
    def write_again(text: str) -> str:  # the same name, now without scopes
        return text

    assert "tools/call write" not in server.scopes
