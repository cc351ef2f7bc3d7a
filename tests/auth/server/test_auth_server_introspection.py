"""IntrospectionVerifier (RFC 7662) against a real HTTP endpoint on 127.0.0.1: what makes an
answer acceptable (§Token Handling: active, unexpired, this server's audience, the configured
issuer), client authentication, and the cache. The end-to-end test against oidc-provider is
in tests/auth/e2e."""

from __future__ import annotations

import base64
import time
from typing import Any
from urllib.parse import parse_qs

import pytest
from server_support import ISSUER, RESOURCE, Endpoint

from mcpbind.auth.server import IntrospectionVerifier, InvalidToken, VerifierUnavailable

pytestmark = pytest.mark.anyio


def _answer(**fields: Any) -> dict[str, Any]:
    base = {
        "active": True,
        "sub": "alice",
        "client_id": "app",
        "scope": "mcp:read",
        "aud": RESOURCE,
        "iss": ISSUER,
        "exp": int(time.time()) + 300,
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def _verifier(endpoint: Endpoint, **options: Any) -> IntrospectionVerifier:
    return IntrospectionVerifier(
        endpoint.url, client_id="rs:1", client_secret="s&cret", issuer=ISSUER, **options
    )


async def test_an_active_answer_for_this_server_is_a_principal(endpoint: Endpoint) -> None:
    endpoint.body = _answer
    principal = await _verifier(endpoint).verify("opaque-1", RESOURCE)
    assert (principal.subject, principal.client_id, principal.scopes) == (
        "alice",
        "app",
        {"mcp:read"},
    )
    headers, body = endpoint.requests[0]
    assert parse_qs(body.decode()) == {"token": ["opaque-1"], "token_type_hint": ["access_token"]}
    # RFC 6749 §2.3.1: the id and secret are form-encoded before Basic.
    credentials = base64.b64decode(headers["authorization"].removeprefix("Basic ")).decode()
    assert credentials == "rs%3A1:s%26cret"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"active": False}, "the token is not active"),
        ({"active": "true"}, "the token is not active"),
        ({"aud": None}, "the token is for another resource (aud does not name this server)"),
        (
            {"aud": "http://127.0.0.1:8765/other"},
            "the token is for another resource (aud does not name this server)",
        ),
        (
            {"iss": "https://evil.example.com"},
            "the token was issued by another authorization server",
        ),
        ({"exp": 1}, "the token has expired"),
        ({"sub": None, "client_id": None}, "the token names no subject and no client"),
    ],
)
async def test_answers_that_are_refused(
    endpoint: Endpoint, answer: dict[str, Any], reason: str
) -> None:
    endpoint.body = lambda: _answer(**answer)
    with pytest.raises(InvalidToken) as caught:
        await _verifier(endpoint).verify("opaque-2", RESOURCE)
    assert str(caught.value) == reason


async def test_accepted_answers_are_cached_per_token(endpoint: Endpoint) -> None:
    endpoint.body = _answer
    verifier = _verifier(endpoint, cache_ttl=60, cache_size=2)
    for _ in range(5):
        await verifier.verify("opaque-3", RESOURCE)
    assert endpoint.hits == 1
    await verifier.verify("opaque-4", RESOURCE)
    await verifier.verify("opaque-5", RESOURCE)  # evicts opaque-3 (two entries kept)
    await verifier.verify("opaque-3", RESOURCE)
    assert endpoint.hits == 4
    uncached = _verifier(endpoint, cache_ttl=0)
    await uncached.verify("opaque-3", RESOURCE)
    await uncached.verify("opaque-3", RESOURCE)
    assert endpoint.hits == 6


@pytest.mark.parametrize("status", [400, 401, 403, 500])
async def test_an_inactive_answer_is_invalid_whatever_the_status(
    endpoint: Endpoint, status: int
) -> None:
    """Issue 28: the TypeScript SDK's demo authorization server answers an unknown token with
    401 {"active": false}; that is 401 invalid_token (re-authorize), not 503."""
    endpoint.status = status
    endpoint.body = lambda: {"active": False}
    with pytest.raises(InvalidToken, match="the token is not active"):
        await _verifier(endpoint).verify("opaque-7", RESOURCE)
    # A non-2xx answer that says nothing about the token is still an outage.
    endpoint.body = lambda: {"error": "invalid_client"}
    with pytest.raises(VerifierUnavailable, match="invalid_client"):
        await _verifier(endpoint).verify("opaque-7", RESOURCE)


async def test_a_failing_endpoint_is_not_asked_for_every_request(endpoint: Endpoint) -> None:
    """Issue 28 F15 (introspection): after a failure the endpoint is left alone for the
    backoff; tokens not remembered get 503 meanwhile, remembered ones keep working."""
    endpoint.body = _answer
    verifier = _verifier(endpoint, failure_backoff=3600)
    await verifier.verify("known", RESOURCE)
    endpoint.status = 500
    for n in range(20):
        with pytest.raises(VerifierUnavailable, match="HTTP 500"):
            await verifier.verify(f"opaque-{n}", RESOURCE)
    assert endpoint.hits == 2
    assert (await verifier.verify("known", RESOURCE)).subject == "alice"
    assert endpoint.hits == 2


async def test_an_unreachable_endpoint_is_unavailable_not_invalid(endpoint: Endpoint) -> None:
    endpoint.status = 500
    with pytest.raises(VerifierUnavailable, match="HTTP 500"):
        await _verifier(endpoint).verify("opaque-6", RESOURCE)
    endpoint.close()
    with pytest.raises(VerifierUnavailable, match="failed"):
        await _verifier(endpoint).verify("opaque-6", RESOURCE)
    with pytest.raises(ValueError, match="introspection endpoint"):
        IntrospectionVerifier("http://auth.example.com/i", client_id="a", client_secret="b")
