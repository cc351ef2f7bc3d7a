"""The server side: ``Server`` (decorators), ``Context`` (for handlers), and ``serve``.

The session (``ServerSession``, ``serve``, ``serve_stdio``: dispatch, the 2026-07-28 input
rounds, listen streams) is imported when first used, so ``from mcpbind import Server`` stays
cheap (issue 15, cold start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes
from .app import Server
from .context import Context
from .principal import Principal
from .tool_errors import ToolExecutionError

if TYPE_CHECKING:
    from .session import ServerSession, serve, serve_stdio

__getattr__ = lazy_attributes(
    __name__, {"ServerSession": ".session", "serve": ".session", "serve_stdio": ".session"}
)

__all__ = [
    "Context",
    "Principal",
    "Server",
    "ServerSession",
    "ToolExecutionError",
    "serve",
    "serve_stdio",
]
