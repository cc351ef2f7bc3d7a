"""What an extension installed on a ``Server`` (tasks) provides besides wrapped handlers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from mcpbind_types import unified as t

__all__ = ["ServerExtension"]


class ServerExtension(Protocol):
    """Installed on a server: adds to its capabilities, per era (``stateless``: 2026-07-28)."""

    def capabilities(self, caps: t.ServerCapabilities, *, stateless: bool) -> None: ...

    def listen_filter(self, wanted: Mapping[str, Any], client_capabilities: Any) -> dict[str, Any]:
        """The part of a ``subscriptions/listen`` filter it serves (2026-07-28), agreed; may
        raise ``McpError`` (e.g. -32021 for a capability the client did not declare)."""
        ...

    async def notification(
        self, what: str, detail: str | None, agreed: Mapping[str, Any], principal: Any
    ) -> tuple[str, dict[str, Any]] | None:
        """For a change it announced (``Server._changed(what, detail)``): the notification
        (method, params) a listen stream with filter ``agreed``, opened by ``principal``
        (``None``: anonymous), receives, or ``None``."""
        ...
