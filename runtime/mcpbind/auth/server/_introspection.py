"""``IntrospectionVerifier``: opaque (or any) access tokens checked by asking the authorization
server (OAuth 2.0 Token Introspection, RFC 7662).

The resource server authenticates to the introspection endpoint with its own client
credentials (``client_secret_basic``). A token is accepted when the answer is ``active``,
not expired, from the configured issuer (when the answer names one) and with an ``aud``
naming this server (authorization.mdx §Token Handling: an answer without ``aud`` cannot
show the token was issued for this server, so it is refused). Accepted answers are cached
for ``cache_ttl`` seconds (never past the token's ``exp``), by a hash of the token. A
well-formed ``{"active": false}`` means an inactive token whatever the HTTP status; other
non-2xx answers mean the endpoint is unavailable (503, not 401).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterable
from urllib.parse import quote

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

__all__ = ["IntrospectionVerifier"]


class IntrospectionVerifier:
    """Verify tokens at ``endpoint`` (RFC 7662) as client ``client_id``/``client_secret``.

    ``issuer``: when set, an answer naming another ``iss`` is refused. ``audiences``:
    identifiers accepted besides this server's resource URI. ``cache_ttl``/``cache_size``:
    how long and how many accepted answers are remembered (0: ask every time). After the
    endpoint failed, it is not asked again for ``failure_backoff`` seconds (doubling with each
    failure in a row, up to ``max_failure_backoff``): meanwhile tokens not remembered get 503.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str,
        client_secret: str,
        issuer: str | None = None,
        audiences: Iterable[str] = (),
        cache_ttl: float = 30.0,
        cache_size: int = 1024,
        timeout: float = 5.0,
        failure_backoff: float = 1.0,
        max_failure_backoff: float = 60.0,
    ) -> None:
        self.endpoint = configured_url(endpoint, "introspection endpoint")
        self.issuer = issuer
        self.audiences = tuple(audiences)
        self.cache_ttl = cache_ttl
        self.timeout = timeout
        # RFC 6749 §2.3.1: form-encode the id and secret, then Basic.
        pair = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}"
        self._authorization = "Basic " + base64.b64encode(pair.encode()).decode()
        self._accepted = AcceptedTokens(cache_size if cache_ttl > 0 else 0)
        self._backoff = FailureBackoff(failure_backoff, max_failure_backoff)

    async def verify(self, token: str, resource: str) -> Principal:
        check_length(token)
        key = AcceptedTokens.key(token, resource)
        principal = self._accepted.get(key)
        if principal is None:
            now = time.time()
            principal = await self._introspect(token, resource, now)
            self._accepted.put(key, principal, now + self.cache_ttl)
        return principal

    async def _introspect(self, token: str, resource: str, now: float) -> Principal:
        self._backoff.check()  # an endpoint that just failed is not asked for every request
        try:
            reply = await fetch(
                self.endpoint,
                timeout=self.timeout,
                form={"token": token, "token_type_hint": "access_token"},
                headers={"authorization": self._authorization},
            )
        except VerifierUnavailable as exc:
            self._backoff.failed(str(exc))
            raise
        answer = reply.json
        if answer.get("active") is False:
            # Whatever the status: some authorization servers (the TypeScript SDK's demo one)
            # answer an unknown token with 401 {"active": false}. That is the token's fault
            # (401 invalid_token: the client re-authorizes), not an outage (503).
            self._backoff.succeeded()
            raise InvalidToken("the token is not active")
        if not reply.ok:
            reason = f"token introspection: {reply.error_text()}"
            self._backoff.failed(reason)
            raise VerifierUnavailable(reason)
        self._backoff.succeeded()
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        exp = answer.get("exp")
        if isinstance(exp, int | float) and exp <= now:
            raise InvalidToken("the token has expired")
        iss = answer.get("iss")
        if self.issuer is not None and iss is not None and iss != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        if not audience_matches(answer.get("aud"), resource, self.audiences):
            raise InvalidToken("the token is for another resource (aud does not name this server)")
        return principal_from_claims(answer, self.issuer)
