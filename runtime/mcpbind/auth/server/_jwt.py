"""``JWTVerifier``: JWT access tokens (RFC 9068) checked locally against the authorization
server's JWKS, with joserfc (imported on first use, never by ``import mcpbind``).

Checked: the signature (only the listed asymmetric algorithms; ``none`` and HMAC never),
``exp`` (required) and ``nbf``/``iat`` with ``leeway``, ``iss`` (exactly the configured
issuer), and ``aud`` naming this server (authorization.mdx §Token Handling).

The key set is cached for ``jwks_ttl`` seconds; a token signed with a key id the cache does
not know triggers one refetch (key rotation), at most every ``refetch_interval`` seconds, so
made-up key ids cannot make the server hammer the authorization server. Fetches are bounded
(``timeout``, 256 KiB); concurrent requests share one fetch; when a refetch fails the keys
already known keep working. With no keys known, a failed fetch is not repeated for
``failure_backoff`` seconds (doubling with each failure in a row, up to
``max_failure_backoff``): meanwhile requests get 503 at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from ...server.principal import Principal
from .verifier import (
    AcceptedTokens,
    FailureBackoff,
    InvalidToken,
    VerifierUnavailable,
    audience_matches,
    check_length,
    configured_url,
    fetch,
    principal_from_claims,
)

if TYPE_CHECKING:
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet

__all__ = ["JWTVerifier"]

logger = logging.getLogger("mcpbind.auth")

DEFAULT_ALGORITHMS = (
    *("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"),
    *("ES256", "ES384", "ES512", "EdDSA", "Ed25519"),
)


class JWTVerifier:
    """Verify JWT access tokens issued by ``issuer``, signed by a key of ``jwks_url``.

    ``audiences``: identifiers accepted besides this server's resource URI (some
    authorization servers put an API identifier in ``aud``). ``algorithms``: the JWS
    algorithms accepted. ``leeway``: seconds of clock skew allowed on ``exp``/``nbf``.
    ``cache_size``: accepted tokens remembered until their ``exp`` (a signature check costs
    more than the rest of a request; 0: check every time).
    """

    def __init__(
        self,
        jwks_url: str,
        *,
        issuer: str,
        audiences: Iterable[str] = (),
        algorithms: Collection[str] = DEFAULT_ALGORITHMS,
        leeway: int = 30,
        jwks_ttl: float = 300.0,
        refetch_interval: float = 30.0,
        timeout: float = 5.0,
        cache_size: int = 1024,
        failure_backoff: float = 1.0,
        max_failure_backoff: float = 60.0,
    ) -> None:
        if not {a.upper() for a in algorithms}.isdisjoint({"NONE", "HS256", "HS384", "HS512"}):
            raise ValueError("JWTVerifier takes asymmetric algorithms only (no 'none', no HMAC)")
        self.jwks_url = configured_url(jwks_url, "jwks_url")
        self.issuer = issuer
        self.audiences = tuple(audiences)
        self.algorithms = list(algorithms)
        self.leeway = leeway
        self.jwks_ttl = jwks_ttl
        self.refetch_interval = refetch_interval
        self.timeout = timeout
        self._keys: KeySet | None = None
        self._fetched_at = -1e18
        self._lock = asyncio.Lock()
        self._accepted = AcceptedTokens(cache_size)
        self._backoff = FailureBackoff(failure_backoff, max_failure_backoff)

    async def verify(self, token: str, resource: str) -> Principal:
        from joserfc import errors, jwt

        check_length(token)
        key = AcceptedTokens.key(token, resource)
        if (known := self._accepted.get(key)) is not None:
            return known
        keys = await self._key_set(refresh=False)
        try:
            try:
                decoded = jwt.decode(token, keys, algorithms=self.algorithms)
            except errors.InvalidKeyIdError:
                keys = await self._key_set(refresh=True)  # maybe a rotated key
                decoded = jwt.decode(token, keys, algorithms=self.algorithms)
            claims: dict[str, Any] = dict(decoded.claims)
            jwt.JWTClaimsRegistry(
                leeway=self.leeway,
                iss={"essential": True, "value": self.issuer},
                exp={"essential": True},
            ).validate(claims)
        except errors.JoseError as exc:
            raise InvalidToken(_describe(exc)) from None
        except (ValueError, TypeError) as exc:  # not JSON, not an object, bad base64
            raise InvalidToken(f"malformed token ({type(exc).__name__})") from None
        if not audience_matches(claims.get("aud"), resource, self.audiences):
            raise InvalidToken("the token is for another resource (aud does not name this server)")
        principal = principal_from_claims(claims, self.issuer)
        self._accepted.put(key, principal, principal.expires_at or 0)  # until exp
        return principal

    async def _key_set(self, *, refresh: bool) -> KeySet:
        now = time.monotonic()
        fresh = self._keys is not None and now - self._fetched_at < self.jwks_ttl
        if fresh and not refresh:
            assert self._keys is not None
            return self._keys
        async with self._lock:
            now = time.monotonic()
            if self._keys is not None and now - self._fetched_at < (
                self.refetch_interval if refresh else self.jwks_ttl
            ):
                return self._keys  # fetched meanwhile, or refetched too recently
            if self._keys is None:
                self._backoff.check()  # a failed fetch is not repeated for every request
            try:
                self._keys = await self._fetch()
                self._backoff.succeeded()
            except VerifierUnavailable as exc:
                if self._keys is None:
                    self._backoff.failed(str(exc))
                    raise
                logger.warning("JWKS refetch from %s failed; keeping the known keys", self.jwks_url)
            self._fetched_at = now
            return self._keys

    async def _fetch(self) -> KeySet:
        from joserfc.jwk import KeySet

        reply = await fetch(self.jwks_url, timeout=self.timeout)
        if not reply.ok or not isinstance(reply.json.get("keys"), list):
            raise VerifierUnavailable(f"JWKS fetch from {self.jwks_url}: HTTP {reply.status}")
        usable = [k for k in reply.json["keys"] if isinstance(k, dict) and k.get("use") != "enc"]
        try:
            return KeySet.import_key_set({"keys": usable})
        except Exception as exc:  # joserfc raises several types for a bad key
            raise VerifierUnavailable(f"JWKS from {self.jwks_url} is invalid: {exc}") from None


def _describe(exc: JoseError) -> str:
    from joserfc import errors

    if isinstance(exc, errors.ExpiredTokenError):
        return "the token has expired"
    if isinstance(exc, errors.InvalidKeyIdError):
        return "the token is signed with an unknown key"
    if isinstance(exc, errors.BadSignatureError):
        return "the token signature is invalid"
    if isinstance(exc, errors.UnsupportedAlgorithmError):
        return "the token's signing algorithm is not accepted"
    if isinstance(exc, errors.ClaimError):
        return f"the token's claims are not acceptable ({exc.description})"
    return f"the token is not a valid JWT ({exc.error})"
