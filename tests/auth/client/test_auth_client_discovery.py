"""authorization.mdx §Protected Resource Metadata Discovery, §Authorization Server Metadata
Discovery (2026-07-28 authorization-server-discovery.mdx), RFC 9207 §2.4 table, RFC 6750 §3
challenges, §Client Registration order."""

from __future__ import annotations

import pytest

from mcpbind.auth.client import AuthError, InMemoryTokenStore
from mcpbind.auth.client.discovery import (
    AuthServer,
    _resource_matches,
    as_metadata_urls,
    parse_challenges,
    prm_urls,
)
from mcpbind.auth.client.grants import Registration, check_iss, known_client, pkce_pair
from mcpbind.auth.client.store import ClientInfo


def test_challenges_with_quoted_params_and_several_schemes() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="mcp:read mcp:write", '
        'resource_metadata="https://x.example/.well-known/oauth-protected-resource/mcp", '
        'error_description="needs \\"write\\""'
    )
    (bearer,) = parse_challenges(header)
    assert bearer.scheme == "Bearer" and bearer.error == "insufficient_scope"
    assert bearer.scope == "mcp:read mcp:write"
    assert bearer.resource_metadata.endswith("/oauth-protected-resource/mcp")  # type: ignore[union-attr]
    assert bearer.params["error_description"] == 'needs "write"'
    dpop = parse_challenges('DPoP error="use_dpop_nonce", algs="ES256"')[0]
    assert dpop.scheme == "DPoP" and dpop.error == "use_dpop_nonce"
    assert parse_challenges(None) == []


def test_well_known_orders() -> None:
    assert prm_urls("https://a.example/public/mcp") == [
        "https://a.example/.well-known/oauth-protected-resource/public/mcp",
        "https://a.example/.well-known/oauth-protected-resource",
    ]
    assert as_metadata_urls("https://auth.example/tenant1") == [
        "https://auth.example/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example/.well-known/openid-configuration/tenant1",
        "https://auth.example/tenant1/.well-known/openid-configuration",
    ]
    assert as_metadata_urls("https://auth.example") == [
        "https://auth.example/.well-known/oauth-authorization-server",
        "https://auth.example/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(
    ("resource", "ok"),
    [
        ("https://a.example/mcp", True),
        ("https://A.example/mcp/", True),
        ("https://a.example", True),  # the root PRM names the origin
        ("https://a.example/other", False),
        ("https://evil.example/mcp", False),
        ("http://a.example/mcp", False),
    ],
)
def test_prm_resource_must_name_this_server(resource: str, ok: bool) -> None:
    assert _resource_matches(resource, "https://a.example/mcp") is ok


ISSUER = "https://auth.example"


@pytest.mark.parametrize(
    ("advertised", "iss", "ok"),
    [
        (True, ISSUER, True),
        (True, None, False),
        (None, ISSUER, True),
        (None, None, True),
        (False, "https://evil.example", False),
        (True, ISSUER + "/", False),  # no normalization
        (True, "HTTPS://auth.example", False),
        (True, "https://auth.example:443", False),
    ],
)
def test_iss_response_parameter_table(advertised: bool | None, iss: str | None, ok: bool) -> None:
    metadata = {"authorization_response_iss_parameter_supported": advertised}
    server = AuthServer(ISSUER, metadata)
    if ok:
        check_iss(server, iss)
    else:
        with pytest.raises(AuthError, match="RFC 9207"):
            check_iss(server, iss)


def test_pkce_pair_is_s256() -> None:
    import base64
    import hashlib

    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128
    digest = hashlib.sha256(verifier.encode()).digest()
    assert challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_registration_order_pre_registered_then_cimd_then_stored() -> None:
    store = InMemoryTokenStore()
    cimd = AuthServer(ISSUER, {"client_id_metadata_document_supported": True})
    plain = AuthServer(ISSUER, {})
    url = "https://app.example/client.json"
    pre = Registration(client_id="pre", client_secret="s", client_metadata_url=url)
    assert known_client(cimd, store, pre, None).source == "pre-registered"  # type: ignore[union-attr]
    only_cimd = Registration(client_metadata_url=url)
    assert known_client(cimd, store, only_cimd, None).client_id == url  # type: ignore[union-attr]
    assert known_client(plain, store, only_cimd, "http://127.0.0.1/cb") is None  # -> DCR
    store.save_client(ISSUER, ClientInfo("dcr-1", redirect_uris=["http://127.0.0.1/cb"]))
    assert known_client(plain, store, only_cimd, "http://127.0.0.1/cb").client_id == "dcr-1"  # type: ignore[union-attr]
    assert known_client(plain, store, only_cimd, "http://127.0.0.1:9/other") is None
