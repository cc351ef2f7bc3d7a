"""Who a request comes from: the ``auth`` hook of the HTTP apps
(``mcpbind.auth.server.ResourceServer`` is one) with what it may read of the app it guards,
and the principal a checked request carries. ``StreamableHTTPApp`` runs the hook first on
every request, and ``LegacySSEApp`` on every request of its two endpoints: no route skips it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from ._asgi import Receive, Scope, Send

if TYPE_CHECKING:
    from ...server.app import Server
    from .http_session import HttpSession

__all__ = ["AuthHook", "AuthTarget", "scope_principal"]


class AuthTarget(Protocol):
    """What an ``auth`` hook reads of the app it guards (``StreamableHTTPApp`` and
    ``LegacySSEApp``): the server (its declared scopes), the body limits, and the session a
    request names, if any."""

    @property
    def server(self) -> Server: ...

    @property
    def max_body_size(self) -> int: ...

    @property
    def body_timeout(self) -> float | None: ...

    def session_of(self, scope: Scope) -> HttpSession | None: ...


#: The ``auth`` hook (``mcpbind.auth.server.ResourceServer``): answers the request itself
#: (401, 403, metadata) and returns ``None``, or returns the ``receive`` to serve it with.
#: Every HTTP request of every route of the app (and of a legacy endpoint beside it) runs it.
AuthHook = Callable[[AuthTarget, Scope, Receive, Send], Awaitable[Receive | None]]


def scope_principal(scope: Scope) -> object:
    """The authenticated principal of a request, or ``None``: ``scope["mcp.principal"]`` if an
    auth layer set it, else the identity of an authenticated Starlette-style ``scope["user"]``."""
    principal = scope.get("mcp.principal")
    if principal is not None:
        return principal
    user = scope.get("user")
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    try:
        return user.identity
    except (AttributeError, NotImplementedError):
        return getattr(user, "display_name", None) or repr(user)
