"""The server side: ``Server`` (decorators), ``Context`` (for handlers), and ``serve``."""

from __future__ import annotations

from .app import Server
from .context import Context
from .principal import Principal
from .session import ServerSession, serve, serve_stdio
from .tool_errors import ToolExecutionError

__all__ = [
    "Context",
    "Principal",
    "Server",
    "ServerSession",
    "ToolExecutionError",
    "serve",
    "serve_stdio",
]
