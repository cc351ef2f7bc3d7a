"""JWTVerifier: 2025-11-25 / 2026-07-28 basic/authorization §Token Handling and §Access Token
Privilege Restriction (signature, expiry, issuer, audience naming this server), against a
real JWKS endpoint on 127.0.0.1; key rotation, caching and bounded fetches."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from joserfc.jwk import ECKey, OctKey
from server_support import ISSUER, RESOURCE, Endpoint, Keys

from mcpbind.auth.server import InvalidToken, JWTVerifier, Principal, VerifierUnavailable
from mcpbind.server.request_state import binding_for
from mcpbind.server.tasks import default_scope

pytestmark = pytest.mark.anyio


def _verifier(jwks: Endpoint, **options: object) -> JWTVerifier:
    return JWTVerifier(jwks.url, issuer=ISSUER, **options)  # type: ignore[arg-type]


async def _refused(verifier: JWTVerifier, token: str, resource: str = RESOURCE) -> str:
    with pytest.raises(InvalidToken) as caught:
        await verifier.verify(token, resource)
    text = str(caught.value)
    assert token not in text
    return text


async def test_a_valid_token_gives_its_principal(jwks: Endpoint, keys: Keys) -> None:
    principal = await _verifier(jwks).verify(keys.sign(scope="mcp:read mcp:write"), RESOURCE)
    assert principal == Principal(subject="alice", client_id="app", issuer=ISSUER)
    assert principal.scopes == {"mcp:read", "mcp:write"}
    assert principal.claims["aud"] == RESOURCE and principal.expires_at is not None
    rsa = await _verifier(jwks).verify(
        keys.sign(keys.rsa, "RS256", scope=None, scp=["a", "b"]), RESOURCE
    )
    assert rsa.scopes == {"a", "b"}


async def test_audience_must_name_this_server(jwks: Endpoint, keys: Keys) -> None:
    verifier = _verifier(jwks)
    other = await _refused(verifier, keys.sign(aud="http://127.0.0.1:8765/other"))
    assert other == "the token is for another resource (aud does not name this server)"
    await _refused(verifier, keys.sign(aud=None))
    await _refused(verifier, keys.sign(aud=["https://api.example.com"]))
    # A list naming it, and the canonical form (case of scheme and host, trailing slash).
    await verifier.verify(keys.sign(aud=["https://api.example.com", RESOURCE]), RESOURCE)
    await verifier.verify(keys.sign(aud="HTTP://127.0.0.1:8765/mcp/"), RESOURCE)
    # An identifier configured besides the resource URI.
    extra = _verifier(jwks, audiences=["api://mcp"])
    await extra.verify(keys.sign(aud="api://mcp"), RESOURCE)


async def test_issuer_expiry_and_not_before(jwks: Endpoint, keys: Keys) -> None:
    verifier = _verifier(jwks, leeway=5)
    now = int(time.time())
    await _refused(verifier, keys.sign(iss="https://evil.example.com"))
    await _refused(verifier, keys.sign(iss=None))
    assert await _refused(verifier, keys.sign(exp=now - 60)) == "the token has expired"
    await verifier.verify(keys.sign(exp=now - 2), RESOURCE)  # within the leeway
    await _refused(verifier, keys.sign(exp=None))  # exp is required
    await _refused(verifier, keys.sign(nbf=now + 120))


async def test_forged_and_malformed_tokens(jwks: Endpoint, keys: Keys) -> None:
    verifier = _verifier(jwks)
    stranger = ECKey.generate_key("P-256", parameters={"kid": "ec-1"})
    assert await _refused(verifier, keys.sign(stranger)) == "the token signature is invalid"
    # alg "none", and HMAC keyed with the public key (algorithm confusion).
    head = base64.urlsafe_b64encode(json.dumps({"alg": "none"}).encode()).rstrip(b"=")
    claims = json.loads(base64.urlsafe_b64decode(keys.sign().split(".")[1] + "=="))
    body = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=")
    await _refused(verifier, f"{head.decode()}.{body.decode()}.")
    public = json.dumps(keys.current.as_dict(private=False)).encode()
    hmac = OctKey.import_key(public, parameters={"kid": "ec-1"})
    confused = await _refused(verifier, keys.sign(hmac, "HS256"))
    assert confused == "the token's signing algorithm is not accepted"
    await _refused(verifier, "not-a-jwt")
    await _refused(verifier, "a.b.c")
    assert await _refused(verifier, "x" * 20000) == "the token is too long"
    with pytest.raises(ValueError, match="asymmetric"):
        JWTVerifier(jwks.url, issuer=ISSUER, algorithms=["HS256"])


async def test_key_set_cached_and_refetched_once_for_a_new_key_id(
    jwks: Endpoint, keys: Keys
) -> None:
    verifier = _verifier(jwks, refetch_interval=3600)
    for _ in range(20):
        await verifier.verify(keys.sign(), RESOURCE)
    assert jwks.hits == 1
    # Rotation: a key the cache has not seen makes it fetch the set again, once.
    keys.current = ECKey.generate_key("P-256", parameters={"kid": "ec-2", "use": "sig"})
    keys.published.append(keys.current)
    verifier.refetch_interval = 0
    await verifier.verify(keys.sign(), RESOURCE)
    assert jwks.hits == 2
    # Made-up key ids do not make it fetch again within refetch_interval.
    verifier.refetch_interval = 3600
    for n in range(5):
        unknown = ECKey.generate_key("P-256", parameters={"kid": f"bogus-{n}"})
        assert (
            await _refused(verifier, keys.sign(unknown))
            == "the token is signed with an unknown key"
        )
    assert jwks.hits == 2


async def test_unreachable_oversized_or_broken_jwks(jwks: Endpoint, keys: Keys) -> None:
    jwks.status = 500
    with pytest.raises(VerifierUnavailable, match="HTTP 500"):
        await _verifier(jwks).verify(keys.sign(), RESOURCE)
    jwks.status, jwks.padding = 200, 300 * 1024
    with pytest.raises(VerifierUnavailable, match="larger than"):
        await _verifier(jwks).verify(keys.sign(), RESOURCE)
    jwks.padding = 0
    jwks.body = lambda: {"keys": [{"kty": "EC", "crv": "P-256", "x": "bad"}]}
    with pytest.raises(VerifierUnavailable, match="invalid"):
        await _verifier(jwks).verify(keys.sign(), RESOURCE)


async def test_a_failed_refetch_keeps_the_known_keys(jwks: Endpoint, keys: Keys) -> None:
    verifier = _verifier(jwks, jwks_ttl=0, refetch_interval=0)
    await verifier.verify(keys.sign(), RESOURCE)
    jwks.status = 503
    principal = await verifier.verify(keys.sign(), RESOURCE)
    assert principal.subject == "alice" and jwks.hits == 2


def test_configured_urls_are_checked() -> None:
    for bad in (
        "file:///etc/jwks.json",
        "http://auth.example.com/jwks",
        "http://169.254.169.254/x",
    ):
        with pytest.raises(ValueError, match="jwks_url"):
            JWTVerifier(bad, issuer=ISSUER)


def test_principal_identity_ignores_scopes_and_claims() -> None:
    a = Principal("alice", "app", ISSUER, frozenset({"a"}), 1, {"jti": "1"})
    b = Principal("alice", "app", ISSUER, frozenset({"a", "b"}), 2, {"jti": "2"})
    assert a == b and hash(a) == hash(b) and str(a) == str(b)
    assert a != Principal("alice", "other-app", ISSUER)
    assert b.has_scopes({"a", "b"}) and not a.has_scopes({"b"})


def test_principals_that_differ_never_share_a_task_scope_or_a_state_binding() -> None:
    """``str(Principal)`` keys a principal's task scope and its requestState binding. Joined
    with spaces, subject "alice x" of client "app" and subject "alice" of client "x app" had
    one key: each could read, cancel and list the other's tasks."""
    a = Principal("alice x", "app", ISSUER)
    b = Principal("alice", "x app", ISSUER)
    c = Principal("alice x app", None, ISSUER)
    assert len({a, b, c}) == 3 and len({str(a), str(b), str(c)}) == 3
    scopes = {default_scope(SimpleNamespace(principal=p)) for p in (a, b, c)}
    assert len(scopes) == 3
    bindings = {binding_for("tools/call", {"name": "t"}, str(p)) for p in (a, b, c)}
    assert len(bindings) == 3
    assert str(a) == str(Principal("alice x", "app", ISSUER, frozenset({"more"})))


def test_import_mcpbind_does_not_import_joserfc() -> None:
    code = "import sys, mcpbind, mcpbind.auth, mcpbind.auth.server; print('joserfc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_accepted_tokens_are_remembered_until_they_expire(jwks: Endpoint, keys: Keys) -> None:
    verifier = _verifier(jwks, jwks_ttl=0, refetch_interval=0, leeway=0)  # no key-set cache
    short = keys.sign(exp=int(time.time()) + 2)
    await verifier.verify(short, RESOURCE)
    await verifier.verify(short, RESOURCE)
    assert jwks.hits == 1  # the second time it was not checked again
    await verifier.verify(keys.sign(scope="other"), RESOURCE)
    assert jwks.hits == 2
    await asyncio.sleep(max(0.0, _exp(short) + 1 - time.time()))  # past exp, whatever the load
    assert await _refused(verifier, short) == "the token has expired"
    uncached = _verifier(jwks, jwks_ttl=0, refetch_interval=0, cache_size=0)
    token = keys.sign()
    await uncached.verify(token, RESOURCE)
    await uncached.verify(token, RESOURCE)
    assert jwks.hits == 5


def _exp(token: str) -> int:
    payload = token.split(".")[1]
    exp: int = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["exp"]
    return exp
