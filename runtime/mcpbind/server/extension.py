"""What an extension installed on a ``Server`` (tasks) provides besides wrapped handlers."""

from __future__ import annotations

from typing import Protocol

from mcpbind_types import unified as t

__all__ = ["ServerExtension"]


class ServerExtension(Protocol):
    """Installed on a server: adds to its capabilities, per era (``stateless``: 2026-07-28)."""

    def capabilities(self, caps: t.ServerCapabilities, *, stateless: bool) -> None: ...
