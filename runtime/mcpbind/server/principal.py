"""The authenticated caller of a request, as handlers see it (``ctx.principal``).

An auth layer (``mcpbind.auth.server.ResourceServer`` for bearer tokens) sets
:data:`current_principal` for the request it admits; a handler's :class:`Context` reads it.
A Streamable HTTP session is bound to the identity that opened it (another one gets 404) and
its ``ServerSession.principal`` follows that caller's newest token; a 2026-07-28 request
carries its own.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = ["Principal", "current_principal"]


class Principal(msgspec.Struct, frozen=True):
    """Who is calling: the token's subject, the OAuth client it was issued to, its scopes and
    its claims. Two principals are equal when issuer, subject and client are (a refreshed
    token with more scopes is the same caller), so sessions survive a token refresh.

    The token itself is never kept: an MCP server must not pass it on to other services
    (authorization.mdx §Access Token Privilege Restriction)."""

    subject: str
    client_id: str | None = None
    issuer: str | None = None
    scopes: frozenset[str] = frozenset()
    expires_at: int | None = None
    claims: Mapping[str, Any] = msgspec.field(default_factory=dict)

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

    def __str__(self) -> str:
        # The identity a task scope and the 2026-07-28 requestState are bound to: stable
        # across refreshes, and one string per identity (JSON, so a space in a subject or a
        # client id cannot make two principals' strings equal).
        return msgspec.json.encode(self._identity()).decode()

    def has_scopes(self, required: frozenset[str] | set[str]) -> bool:
        return required <= self.scopes


#: The principal of the request being served (``None``: no auth layer, or anonymous).
current_principal: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "mcpbind_principal", default=None
)
