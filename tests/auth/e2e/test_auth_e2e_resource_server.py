"""An mcpbind server as an OAuth resource server, against a real authorization server
(oidc-provider): 2025-11-25 and 2026-07-28 basic/authorization — §Protected Resource Metadata
Discovery Requirements, §Token Handling (audience, expiry), §Scope Challenge Handling
(403 ``insufficient_scope`` and step-up), §Access Token Privilege Restriction."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import httpx2
import msgspec
import pytest
from oidc_support import Provider, serve_protected

from mcpbind import LATEST_HANDSHAKE, Client
from mcpbind.auth.server import IntrospectionVerifier
from mcpbind.http.client import connect_http

ACCEPT = "application/json, text/event-stream"
VERSION = "2025-11-25"


def _headers(token: str | None, session: str | None = None) -> dict[str, str]:
    out = {"content-type": "application/json", "accept": ACCEPT, "mcp-protocol-version": VERSION}
    if token is not None:
        out["authorization"] = f"Bearer {token}"
    if session is not None:
        out["mcp-session-id"] = session
    return out


def _initialize(http: httpx2.Client, url: str, token: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "1"},
        },
    }
    reply = http.post(url, json=body, headers=_headers(token))
    assert reply.status_code == 200, reply.text
    session = reply.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert http.post(url, json=note, headers=_headers(token, session)).status_code == 202
    return session


def _request(
    http: httpx2.Client, url: str, token: str, session: str, method: str, params: dict[str, Any]
) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 2, "method": method, "params": params}
    return http.post(url, json=body, headers=_headers(token, session))


def _result(reply: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC result of an SSE or JSON response."""
    assert reply.status_code == 200, reply.text
    if reply.headers["content-type"].startswith("application/json"):
        message: dict[str, Any] = reply.json()
    else:
        data = [line[6:] for line in reply.text.splitlines() if line.startswith("data: ")]
        message = json.loads([d for d in data if d.strip()][-1])
    assert "result" in message, message
    result: dict[str, Any] = message["result"]
    return result


def _challenge(reply: httpx2.Response) -> dict[str, str]:
    scheme, _, rest = reply.headers["www-authenticate"].partition(" ")
    assert scheme == "Bearer"
    params = {}
    for part in rest.split('", '):
        key, _, value = part.partition("=")
        params[key.strip()] = value.strip().strip('"')
    return params


def _expiry(token: str) -> int:
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    exp: int = claims["exp"]
    return exp


def test_metadata_document_at_the_path_inserted_well_known_uri(oidc: Provider) -> None:
    with serve_protected(oidc.issuer) as live, httpx2.Client(timeout=30) as http:
        base = live.url.removesuffix("/mcp")
        reply = http.get(f"{base}/.well-known/oauth-protected-resource/mcp")
        assert reply.status_code == 200
        assert reply.headers["access-control-allow-origin"] == "*"
        document = reply.json()
        assert document == {
            "resource": live.url,
            "authorization_servers": [oidc.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp:read"],
            "dpop_signing_alg_values_supported": document["dpop_signing_alg_values_supported"],
        }
        assert "ES256" in document["dpop_signing_alg_values_supported"]
        # The authorization server it names publishes metadata a client can use.
        issuer = reply.json()["authorization_servers"][0]
        meta = http.get(f"{issuer}/.well-known/oauth-authorization-server").json()
        assert meta["issuer"] == issuer and "S256" in meta["code_challenge_methods_supported"]


def test_missing_token_is_401_with_resource_metadata_and_scope(oidc: Provider) -> None:
    with serve_protected(oidc.issuer) as live, httpx2.Client(timeout=30) as http:
        reply = http.post(
            live.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=_headers(None)
        )
        assert reply.status_code == 401
        base = live.url.removesuffix("/mcp")
        assert reply.headers["www-authenticate"] == (
            f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp", '
            'scope="mcp:read"'
        )
        assert reply.json()["error"]["message"] == "Unauthorized: a bearer token is required"


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["auto", LATEST_HANDSHAKE])
async def test_client_credentials_token_accepted_and_principal_reaches_the_handler(
    oidc: Provider, era: str
) -> None:
    with serve_protected(oidc.issuer) as live:
        token = oidc.client_credentials("mcp-service", live.url, "mcp:read")
        transport = connect_http(live.url, headers={"authorization": f"Bearer {token}"})
        async with Client(transport, protocol_version=era) as client:
            result = await client.call("whoami")
            assert msgspec.json.decode(result.structured_content) == {
                "subject": "mcp-service",
                "client": "mcp-service",
                "scopes": ["mcp:read"],
            }
            assert client.era == ("stateless" if era == "auto" else "handshake")


def test_token_for_another_resource_is_refused(oidc: Provider) -> None:
    with serve_protected(oidc.issuer) as live, httpx2.Client(timeout=30) as http:
        elsewhere = live.url.replace("/mcp", "/other-mcp")
        token = oidc.client_credentials("mcp-service", elsewhere, "mcp:read")
        reply = http.post(
            live.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=_headers(token)
        )
        assert reply.status_code == 401
        challenge = _challenge(reply)
        assert challenge["error"] == "invalid_token"
        assert "another resource" in challenge["error_description"]
        assert token not in reply.text and token not in reply.headers["www-authenticate"]


def test_expired_token_is_refused(oidc: Provider) -> None:
    with serve_protected(oidc.issuer) as live, httpx2.Client(timeout=30) as http:
        token = oidc.client_credentials("mcp-short", live.url, "mcp:read")  # valid for 2 s
        while time.time() <= _expiry(token) + 1:
            time.sleep(0.25)
        reply = http.post(
            live.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=_headers(token)
        )
        assert reply.status_code == 401
        assert _challenge(reply)["error_description"] == "Unauthorized: the token has expired"


def test_step_up_403_insufficient_scope_then_success_on_the_same_session(
    oidc: Provider,
) -> None:
    with serve_protected(oidc.issuer) as live, httpx2.Client(timeout=30) as http:
        reader = oidc.client_credentials("mcp-service", live.url, "mcp:read")
        session = _initialize(http, live.url, reader)
        call = {"name": "write_note", "arguments": {"text": "hi"}}
        refused = _request(http, live.url, reader, session, "tools/call", call)
        assert refused.status_code == 403
        challenge = _challenge(refused)
        assert challenge["error"] == "insufficient_scope"
        assert challenge["scope"] == "mcp:write"
        assert challenge["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
        # A tool that declares scopes the token lacks is not listed to it (the default,
        # Server(hide_ungranted=True)); the 403 above named the scope to step up to.
        listed = _result(_request(http, live.url, reader, session, "tools/list", {}))
        assert {t["name"] for t in listed["tools"]} == {"whoami"}
        # Step up: the same client, the union of the scopes: the same session goes on.
        writer = oidc.client_credentials("mcp-service", live.url, "mcp:read mcp:write")
        listed = _result(_request(http, live.url, writer, session, "tools/list", {}))
        assert {t["name"] for t in listed["tools"]} == {"whoami", "write_note"}
        result = _result(_request(http, live.url, writer, session, "tools/call", call))
        assert result["content"][0]["text"] == "wrote hi"
        who = _result(_request(http, live.url, writer, session, "tools/call", {"name": "whoami"}))
        assert who["structuredContent"]["scopes"] == ["mcp:read", "mcp:write"]  # the newest token
        read = {"uri": "notes://secret"}
        denied = _request(http, live.url, writer, session, "resources/read", read)
        assert denied.status_code == 403 and _challenge(denied)["scope"] == "mcp:admin"


def test_authorization_code_with_pkce_and_registration_then_refresh(oidc: Provider) -> None:
    with serve_protected(oidc.issuer) as live, httpx2.Client(timeout=30) as http:
        redirect = "http://127.0.0.1:9/callback"
        client_id = oidc.register(redirect)
        tokens = oidc.authorization_code(client_id, redirect, live.url, "mcp:read mcp:write")
        session = _initialize(http, live.url, tokens["access_token"])
        who = _result(
            _request(
                http, live.url, tokens["access_token"], session, "tools/call", {"name": "whoami"}
            )
        )
        assert who["structuredContent"] == {
            "subject": "alice",
            "client": client_id,
            "scopes": ["mcp:read", "mcp:write"],
        }
        # A refreshed token is the same principal: the session stays usable with it.
        fresh = oidc.refresh(client_id, tokens["refresh_token"], live.url)
        assert fresh["access_token"] != tokens["access_token"]
        note = {"name": "write_note", "arguments": {"text": "later"}}
        result = _result(
            _request(http, live.url, fresh["access_token"], session, "tools/call", note)
        )
        assert result["content"][0]["text"] == "wrote later"
        # Another principal presenting this session id gets the same 404 as an unknown id.
        other = oidc.client_credentials("mcp-service", live.url, "mcp:read mcp:write")
        stolen = _request(http, live.url, other, session, "tools/call", {"name": "whoami"})
        assert stolen.status_code == 404


def test_introspection_verifier_with_opaque_tokens(oidc: Provider) -> None:
    verifier = IntrospectionVerifier(
        oidc.introspection_url, client_id="mcp-rs", client_secret="rs-secret", issuer=oidc.issuer
    )
    with serve_protected(oidc.issuer, verifier) as live, httpx2.Client(timeout=30) as http:
        token = oidc.client_credentials("mcp-opaque", live.url, "mcp:read mcp:write")
        assert token.count(".") == 0  # opaque: only the authorization server can read it
        session = _initialize(http, live.url, token)
        who = _result(_request(http, live.url, token, session, "tools/call", {"name": "whoami"}))
        assert who["structuredContent"]["client"] == "mcp-opaque"
        assert who["structuredContent"]["scopes"] == ["mcp:read", "mcp:write"]
        elsewhere = oidc.client_credentials("mcp-opaque", live.url + "/elsewhere", "mcp:read")
        reply = http.post(
            live.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers=_headers(elsewhere),
        )
        assert reply.status_code == 401 and _challenge(reply)["error"] == "invalid_token"
        reply = http.post(
            live.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers=_headers("made-up"),
        )
        assert reply.status_code == 401
        assert _challenge(reply)["error_description"] == "Unauthorized: the token is not active"
