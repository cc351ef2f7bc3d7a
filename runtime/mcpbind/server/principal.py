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
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Principal", "current_principal"]


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the token's subject, the OAuth client it was issued to, its scopes and
    its claims. Two principals are equal when issuer, subject and client are (a refreshed
    token with more scopes is the same caller), so sessions survive a token refresh.

    The token itself is never kept: an MCP server must not pass it on to other services
    (authorization.mdx §Access Token Privilege Restriction)."""

    subject: str
    client_id: str | None = None
    issuer: str | None = None
    scopes: frozenset[str] = field(default=frozenset(), compare=False)
    expires_at: int | None = field(default=None, compare=False)
    claims: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __str__(self) -> str:
        # The identity the 2026-07-28 requestState is bound to: stable across refreshes.
        return f"{self.issuer or ''} {self.subject} {self.client_id or ''}"

    def has_scopes(self, required: frozenset[str] | set[str]) -> bool:
        return required <= self.scopes


#: The principal of the request being served (``None``: no auth layer, or anonymous).
current_principal: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "mcpbind_principal", default=None
)
