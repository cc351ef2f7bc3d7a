"""DPoP-bound access tokens at the resource server: RFC 9449 §4.3 (checking a proof) and
§7.1-7.2 (the DPoP scheme; a bound token is never accepted as a bearer token), through
ResourceServer on a real uvicorn; proofs from the mcpbind OAuth client's DPoPKey and crafted."""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey
from server_support import ISSUER, Endpoint, Keys
from support.live_server import LiveServer

from mcpbind import Server
from mcpbind.auth.client.jose import DPoPKey
from mcpbind.auth.server import JWTVerifier, ResourceServer
from mcpbind.http import StreamableHTTPApp

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@contextmanager
def _serve(jwks: Endpoint, dpop: bool = True) -> Iterator[LiveServer]:
    app = StreamableHTTPApp(Server("dpop"), path="/mcp")
    live = LiveServer(app)
    verifier = JWTVerifier(jwks.url, issuer=ISSUER)
    app.auth = ResourceServer(
        verifier, resource=live.url, authorization_servers=[ISSUER], dpop=dpop
    )
    live.start()
    try:
        yield live
    finally:
        live.stop()


def _post(url: str, authorization: str, *proofs: str) -> httpx2.Response:
    headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
        ("authorization", authorization),
        *(("dpop", p) for p in proofs),
    ]
    return httpx2.post(url, json=INITIALIZE, headers=headers, timeout=30)


def _proof(key: ECKey, token: str, url: str, method: str = "POST", **override: Any) -> str:
    digest = hashlib.sha256(token.encode()).digest()
    claims = {
        "jti": base64.urlsafe_b64encode(
            hashlib.sha256(str(time.time_ns()).encode()).digest()
        ).decode(),
        "htm": method,
        "htu": url,
        "iat": int(time.time()),
        "ath": base64.urlsafe_b64encode(digest).rstrip(b"=").decode(),
    }
    claims.update(override)
    header = {"alg": "ES256", "typ": "dpop+jwt", "jwk": key.as_dict(private=False)}
    return jwt.encode(
        header, {k: v for k, v in claims.items() if v is not None}, key, algorithms=["ES256"]
    )


def _error(reply: httpx2.Response) -> tuple[str, str]:
    header = reply.headers["www-authenticate"]
    scheme = header.split(" ", 1)[0]
    error = header.split('error="', 1)[1].split('"', 1)[0] if 'error="' in header else ""
    return scheme, error


def test_a_bound_token_with_the_clients_proof_is_accepted(jwks: Endpoint, keys: Keys) -> None:
    client_key = DPoPKey()
    with _serve(jwks) as live:
        token = keys.sign(aud=live.url, cnf={"jkt": client_key.thumbprint()})
        proof = client_key.proof("POST", live.url, access_token=token)
        assert _post(live.url, f"DPoP {token}", proof).status_code == 200
        # The same proof again is a replay.
        replayed = _post(live.url, f"DPoP {token}", proof)
        assert replayed.status_code == 401 and _error(replayed) == ("DPoP", "invalid_dpop_proof")
        # A bound token is not a bearer token (§7.2).
        as_bearer = _post(live.url, f"Bearer {token}")
        assert as_bearer.status_code == 401 and _error(as_bearer) == ("Bearer", "invalid_token")
        meta = httpx2.get(
            live.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"), timeout=30
        )
        assert "ES256" in meta.json()["dpop_signing_alg_values_supported"]


def test_proofs_that_are_refused(jwks: Endpoint, keys: Keys) -> None:
    key = ECKey.generate_key("P-256")
    with _serve(jwks) as live:
        token = keys.sign(aud=live.url, cnf={"jkt": key.thumbprint()})
        other_key = ECKey.generate_key("P-256")
        cases = {
            "no proof": [],
            "two proofs": [_proof(key, token, live.url), _proof(key, token, live.url)],
            "another key": [_proof(other_key, token, live.url)],
            "another method": [_proof(key, token, live.url, method="GET")],
            "another URL": [_proof(key, token, live.url + "/other")],
            "another token": [_proof(key, "other-token", live.url)],
            "too old": [_proof(key, token, live.url, iat=int(time.time()) - 3600)],
            "from the future": [_proof(key, token, live.url, iat=int(time.time()) + 3600)],
            "no jti": [_proof(key, token, live.url, jti=None)],
            "not a JWT": ["garbage"],
        }
        for case, proofs in cases.items():
            reply = _post(live.url, f"DPoP {token}", *proofs)
            assert reply.status_code == 401, case
            assert _error(reply) == ("DPoP", "invalid_dpop_proof"), case
        # The URL compares in normalized form; then the right proof passes.
        upper = live.url.replace("http://127.0.0.1", "HTTP://127.0.0.1")
        assert _post(live.url, f"DPoP {token}", _proof(key, token, upper)).status_code == 200
        # The DPoP scheme with a token bound to nothing.
        unbound = keys.sign(aud=live.url)
        reply = _post(live.url, f"DPoP {unbound}", _proof(key, unbound, live.url))
        assert reply.status_code == 401 and _error(reply) == ("DPoP", "invalid_token")


def test_dpop_off_accepts_bearer_only(jwks: Endpoint, keys: Keys) -> None:
    key = ECKey.generate_key("P-256")
    with _serve(jwks, dpop=False) as live:
        token = keys.sign(aud=live.url, cnf={"jkt": key.thumbprint()})
        reply = _post(live.url, f"DPoP {token}", _proof(key, token, live.url))
        assert reply.status_code == 401 and _error(reply) == ("Bearer", "")
        meta = httpx2.get(
            live.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"), timeout=30
        )
        assert "dpop_signing_alg_values_supported" not in meta.json()
        assert _post(live.url, f"Bearer {keys.sign(aud=live.url)}").status_code == 200


@pytest.mark.parametrize("bad", [{"d": "private"}, None])
def test_a_proof_must_carry_a_public_key(
    jwks: Endpoint, keys: Keys, bad: dict[str, str] | None
) -> None:
    key = ECKey.generate_key("P-256")
    with _serve(jwks) as live:
        token = keys.sign(aud=live.url, cnf={"jkt": key.thumbprint()})
        public = key.as_dict(private=False)
        jwk = key.as_dict(private=True) if bad else None
        header = {"alg": "ES256", "typ": "dpop+jwt", **({"jwk": jwk} if jwk else {})}
        claims = jwt.decode(_proof(key, token, live.url), key).claims
        proof = jwt.encode(header, claims, key, algorithms=["ES256"])
        assert public != jwk
        reply = _post(live.url, f"DPoP {token}", proof)
        assert reply.status_code == 401 and _error(reply) == ("DPoP", "invalid_dpop_proof")
