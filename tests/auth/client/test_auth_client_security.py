"""authorization.mdx §Security Considerations (2025-11-25; 2026-07-28
security-considerations.mdx): PKCE S256 or nothing, SSRF through server-provided URLs, no
token in logs or errors, no token to another origin."""

from __future__ import annotations

import logging

import httpx2
import pytest
from auth_client_support import AuthWorld
from support.live_server import LiveServer

from mcpbind import Client
from mcpbind.auth.client import AuthError, HeadlessRedirect, OAuth
from mcpbind.auth.client.urls import check_url, resolve_checked
from mcpbind.protocol import McpError

pytestmark = pytest.mark.anyio


def oauth() -> OAuth:
    return OAuth(redirect_handler=HeadlessRedirect(), client_name="tests")


async def refused(world: AuthWorld) -> str:
    with pytest.raises(McpError) as caught:
        async with Client(world.url, auth=oauth(), protocol_version="2025-11-25") as client:
            await client.list_tools()
    return caught.value.message


# §Authorization Code Protection: "MUST refuse to proceed" without S256
@pytest.mark.parametrize("methods", [["plain"], None])
async def test_no_s256_in_metadata_refuses_to_authorize(world: AuthWorld, methods: object) -> None:
    world.knobs.metadata = {"code_challenge_methods_supported": methods}
    message = await refused(world)
    assert "S256" in message and "refusing" in message
    assert "/as/authorize" not in world.paths()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://169.254.169.254/latest/meta-data/", "metadata-service"),
        ("https://169.254.169.254/", "metadata-service"),
        ("https://[::ffff:169.254.169.254]/", "metadata-service"),
        ("https://metadata.google.internal/", "metadata-service"),
        ("file:///etc/passwd", "scheme 'file'"),
        ("http://example.com/token", "plain http"),
        ("https://127.0.0.1/token", "loopback"),
        ("https://10.0.0.7/token", "private"),
        ("https://user:pw@example.com/", "user info"),
    ],
)
def test_urls_from_a_remote_server_are_checked(url: str, why: str) -> None:
    with pytest.raises(AuthError, match=why):
        check_url(url, local_ok=False)


def test_a_local_server_may_use_loopback_but_never_the_metadata_service() -> None:
    assert check_url("http://127.0.0.1:8000/token", local_ok=True)
    assert check_url("http://localhost:8000/as", local_ok=True)
    with pytest.raises(AuthError, match="metadata-service"):
        check_url("http://169.254.169.254/", local_ok=True)
    with pytest.raises(AuthError, match="plain http"):
        check_url("http://10.1.2.3/", local_ok=True)  # http only for loopback


async def test_resolved_addresses_are_checked_too() -> None:
    with pytest.raises(AuthError, match="loopback"):
        await resolve_checked("https://localhost/token", local_ok=False)


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("authorization_servers", ["http://169.254.169.254/as"], "metadata-service"),
        ("authorization_servers", ["file:///etc/passwd"], "scheme 'file'"),
        ("resource", "https://evil.example.com/mcp", "resource"),
    ],
)
async def test_protected_resource_metadata_pointing_elsewhere_is_refused(
    world: AuthWorld, field: str, value: object, why: str
) -> None:
    world.knobs.prm = {field: value}
    message = await refused(world)
    assert why in message
    assert not any(p.startswith("/as/") for p in world.paths())


async def test_token_endpoint_at_the_metadata_service_is_refused(world: AuthWorld) -> None:
    world.knobs.metadata = {"token_endpoint": "http://169.254.169.254/token"}
    message = await refused(world)
    assert "metadata-service" in message and "/as/authorize" not in world.paths()


# RFC 9207 / authorization.mdx (2026-07-28) §Authorization Response Validation
@pytest.mark.parametrize("iss", [None, "https://evil.example.com", "{issuer}/"])
async def test_wrong_or_missing_iss_stops_before_the_token_request(
    world: AuthWorld, iss: str | None
) -> None:
    world.knobs.iss = iss.format(issuer=world.issuer) if iss else None
    message = await refused(world)
    assert "RFC 9207" in message
    assert "/as/token" not in world.paths()


async def test_no_token_in_logs_or_error_texts(
    world: AuthWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    auth = oauth()
    async with Client(world.url, auth=auth, protocol_version="2025-11-25") as client:
        await client.list_tools()
        assert auth.tokens is not None
        secrets = [auth.tokens.access_token, auth.tokens.refresh_token or "?"]
        shown = repr(auth.tokens) + str(auth.tokens)
    # a token endpoint that echoes the credential back in its error
    world.valid.clear()
    world.knobs.token_error = {
        "error": "invalid_grant",
        "error_description": f"refresh_token={secrets[1]} is not valid; bearer {secrets[0]}",
    }
    with pytest.raises(McpError) as caught:
        async with Client(world.url, auth=auth, protocol_version="2025-11-25") as client:
            await client.list_tools()
    texts = [caplog.text, shown, str(caught.value), repr(caught.value), str(caught.value.data)]
    assert "invalid_grant" in str(caught.value)
    for secret in secrets:
        for text in texts:
            assert secret not in text


async def test_authorization_is_dropped_on_a_cross_origin_redirect(world: AuthWorld) -> None:
    seen: list[dict[str, str]] = []

    async def other_origin(scope: dict[str, object], receive: object, send: object) -> None:
        if scope["type"] == "lifespan":
            return
        seen.append({k.decode(): v.decode() for k, v in scope["headers"]})  # type: ignore[attr-defined]
        await send({"type": "http.response.start", "status": 404, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b""})  # type: ignore[operator]

    other = LiveServer(other_origin).start()
    try:
        auth = oauth()
        async with Client(world.url, auth=auth, protocol_version="2025-11-25") as client:
            await client.list_tools()
        world.knobs.redirect_mcp_to = other.url
        # the OAuth client's token, and a static bearer header: neither crosses origins
        with pytest.raises(McpError):
            await client_call(world.url, auth)
        async with httpx2.AsyncClient(follow_redirects=True) as plain:
            await plain.post(world.url, headers={"authorization": "Bearer static-token"})
    finally:
        other.stop()
    assert len(seen) >= 2
    assert all("authorization" not in headers for headers in seen)


async def client_call(url: str, auth: OAuth) -> None:
    async with Client(url, auth=auth, protocol_version="2025-11-25", timeout=10) as client:
        await client.list_tools()
