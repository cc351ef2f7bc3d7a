"""The authenticated caller of a request, as handlers see it (``ctx.principal``).

An auth layer (``mcpbind.auth.server.ResourceServer`` for bearer tokens) sets
:data:`current_principal` for the request it admits; a handler's :class:`Context` reads it.
A Streamable HTTP session is bound to the identity that opened it (another one gets 404) and
its ``ServerSession.principal`` follows that caller's newest token; a 2026-07-28 request
carries its own.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

__all__ = ["Principal", "current_principal", "implied_scopes", "principal_key"]


class Principal(msgspec.Struct, frozen=True):
    """Who is calling: the token's subject, the OAuth client it was issued to, its scopes and
    its claims; ``implied``: the scopes those imply under the resource server's
    ``scope_hierarchy`` (not in the token; see :func:`implied_scopes`). Two principals are equal when issuer, subject and client are (a refreshed
    token with more scopes is the same caller), so sessions survive a token refresh.

    The token itself is never kept: an MCP server must not pass it on to other services
    (authorization.mdx §Access Token Privilege Restriction)."""

    subject: str
    client_id: str | None = None
    issuer: str | None = None
    scopes: frozenset[str] = frozenset()
    expires_at: int | None = None
    claims: Mapping[str, Any] = msgspec.field(default_factory=dict)
    implied: frozenset[str] = frozenset()

    def _identity(self) -> tuple[str | None, str, str | None]:
        return self.issuer, self.subject, self.client_id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Principal):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:  # without the claims
        return (
            f"Principal(subject={self.subject!r}, client_id={self.client_id!r}, "
            f"issuer={self.issuer!r}, scopes={self.scopes!r}, expires_at={self.expires_at!r})"
        )

    @property
    def key(self) -> str:
        """The identity as one unambiguous string (a JSON array of issuer, subject and
        client): what task scopes and the 2026-07-28 requestState are bound to. Stable across
        refreshes; two different identities never give the same key, whatever their text."""
        return _ENCODER.encode(list(self._identity())).decode()

    def __str__(self) -> str:
        return self.key

    def has_scopes(self, required: frozenset[str] | set[str]) -> bool:
        """Whether the token's scopes, with those they imply, cover ``required``: the one
        check of a call (the auth layer's 403) and of a listing (``mcpbind.server.visibility``)."""
        return required <= self.scopes or (
            bool(self.implied) and required <= self.scopes | self.implied
        )


def implied_scopes(scopes: Iterable[str], hierarchy: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """The scopes ``scopes`` imply under ``hierarchy`` (a broader scope -> the narrower ones it
    implies, transitively), without ``scopes`` themselves."""
    granted = set(scopes)
    given = frozenset(granted)
    pending = list(granted)
    while pending:
        for implied in hierarchy.get(pending.pop(), ()):
            if implied not in granted:
                granted.add(implied)
                pending.append(implied)
    return frozenset(granted - given)


_ENCODER = msgspec.json.Encoder()


def principal_key(who: object) -> str:
    """The key of an authenticated caller, whatever the auth layer put in the request: a
    :class:`Principal`'s :attr:`~Principal.key`, else (a Starlette-style identity) its text,
    each with its own prefix so the two forms never meet."""
    return f"p{who.key}" if isinstance(who, Principal) else f"u{who}"


#: The principal of the request being served (``None``: no auth layer, or anonymous).
current_principal: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "mcpbind_principal", default=None
)
