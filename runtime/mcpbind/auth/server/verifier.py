"""The token-verifier interface of the resource server, and what every verifier shares.

A verifier turns a bearer token into a :class:`~mcpbind.server.principal.Principal` or
refuses it. It is told the resource (this MCP server's canonical URI) the token must be
for: a token whose audience does not name this server is refused (authorization.mdx §Token
Handling, RFC 8707 §2; a token for another resource is never accepted or passed on).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from ...server.principal import Principal
from ..client.errors import AuthError
from ..client.fetch import Fetcher, HttpReply
from ..client.urls import canonical_resource, check_url

__all__ = [
    "AcceptedTokens",
    "FailureBackoff",
    "InvalidToken",
    "TokenVerifier",
    "VerifierUnavailable",
    "audience_matches",
    "check_length",
    "configured_url",
    "fetch",
    "principal_from_claims",
]


class InvalidToken(Exception):
    """The token is not acceptable here (bad signature, expired, other audience, inactive):
    the request gets 401 ``invalid_token``. The message never contains the token."""


class VerifierUnavailable(Exception):
    """The token could not be checked (the JWKS or introspection endpoint is unreachable):
    the request gets 503, not a 401 that would send the client back to the authorization
    server for nothing."""


@runtime_checkable
class TokenVerifier(Protocol):
    """Checks an access token for ``resource`` (this server's canonical URI)."""

    async def verify(self, token: str, resource: str) -> Principal:
        """The token's principal; :class:`InvalidToken` or :class:`VerifierUnavailable`."""
        ...


MAX_TOKEN = 16 * 1024


def check_length(token: str) -> None:
    """Refuse a token longer than any real one (16 KiB) before any work is done on it."""
    if len(token) > MAX_TOKEN:
        raise InvalidToken("the token is too long")


def audience_matches(aud: object, resource: str, extra: Iterable[str] = ()) -> bool:
    """Whether an ``aud`` claim (a string or a list) names ``resource`` or one of ``extra``.

    URIs compare in canonical form (lower-case scheme and host, no trailing slash:
    authorization.mdx §Canonical Server URI); other identifiers compare exactly."""
    values = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    wanted = {_canonical(resource), *(_canonical(x) for x in extra)}
    return any(isinstance(v, str) and _canonical(v) in wanted for v in values)


def _canonical(value: str) -> str:
    return canonical_resource(value) if "://" in value else value


def principal_from_claims(claims: Mapping[str, Any], issuer: str | None = None) -> Principal:
    """A principal from JWT claims (RFC 9068 §2.2) or an introspection response (RFC 7662
    §2.2): ``sub`` (else the client), ``client_id`` (or ``azp``), ``scope`` (a space-separated
    string; ``scp`` as a list too), ``exp``."""
    client = claims.get("client_id", claims.get("azp"))
    client_id = client if isinstance(client, str) else None
    sub = claims.get("sub")
    subject = sub if isinstance(sub, str) and sub else client_id
    if subject is None:
        raise InvalidToken("the token names no subject and no client")
    raw = claims.get("scope", claims.get("scp"))
    scopes = raw.split() if isinstance(raw, str) else raw if isinstance(raw, list) else []
    exp = claims.get("exp")
    iss = claims.get("iss")
    return Principal(
        subject=subject,
        client_id=client_id,
        issuer=iss if isinstance(iss, str) else issuer,
        scopes=frozenset(s for s in scopes if isinstance(s, str)),
        expires_at=exp if isinstance(exp, int) and not isinstance(exp, bool) else None,
        claims=dict(claims),
    )


def configured_url(url: str, what: str) -> str:
    """An endpoint the operator configured (JWKS, introspection): https, or http on loopback;
    a ``ValueError`` naming ``what`` otherwise (at construction, not on the first request)."""
    try:
        return check_url(url, local_ok=True)
    except AuthError as exc:
        raise ValueError(f"{what}: {exc}") from None


async def fetch(
    url: str,
    *,
    timeout: float,
    form: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> HttpReply:
    """GET ``url`` (POST with ``form``), bounded in time and size (the OAuth client's
    :class:`~mcpbind.auth.client.fetch.Fetcher`); :class:`VerifierUnavailable` on failure."""
    fetcher = Fetcher(local_ok=True, timeout=timeout)  # configured, not sent by a server
    try:
        if form is None:
            return await fetcher.get(url, headers)
        return await fetcher.post(url, form=form, headers=headers)
    except AuthError as exc:
        raise VerifierUnavailable(f"{url}: {exc}") from None
    finally:
        await fetcher.aclose()


class AcceptedTokens:
    """Tokens accepted recently, by a hash of the token and the resource: a bounded LRU
    (``size``) whose entries end at ``until`` (never past the token's ``exp``). Verifying a
    JWT costs a signature check, an introspection a round trip: a client sends the same
    token with every request."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[bytes, tuple[float, Principal]] = OrderedDict()

    @staticmethod
    def key(token: str, resource: str) -> bytes:
        return hashlib.sha256(f"{resource}\n{token}".encode()).digest()

    def get(self, key: bytes) -> Principal | None:
        hit = self._entries.get(key)
        if hit is None:
            return None
        if hit[0] <= time.time():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return hit[1]

    def put(self, key: bytes, principal: Principal, until: float) -> None:
        if principal.expires_at is not None:
            until = min(until, principal.expires_at)
        if self.size > 0 and until > time.time():
            self._entries[key] = (until, principal)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


class FailureBackoff:
    """Negative caching of an endpoint's outage (JWKS, introspection): after a failed fetch,
    requests within the backoff get :class:`VerifierUnavailable` at once instead of a fetch
    each, so a failing endpoint is not hammered once per request. The wait starts at
    ``initial`` seconds (0: no negative caching) and doubles with each failure in a row, up to
    ``maximum``; a success resets it."""

    def __init__(
        self, initial: float, maximum: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.initial = initial
        self.maximum = maximum
        self._clock = clock
        self._failures = 0
        self._retry_at = 0.0
        self._reason = ""

    def check(self) -> None:
        """:class:`VerifierUnavailable` while the last failure's backoff lasts."""
        if self._failures:
            left = self._retry_at - self._clock()
            if left > 0:
                raise VerifierUnavailable(f"{self._reason} (not retried for {left:.1f} s)")

    def failed(self, reason: str) -> None:
        self._failures += 1
        wait = min(self.initial * 2 ** min(self._failures - 1, 60), self.maximum)
        self._retry_at = self._clock() + wait
        self._reason = reason

    def succeeded(self) -> None:
        self._failures = 0
