"""What a request we sent can fail with: the peer's error answer, the connection ending, a
timeout; and how an error the core received becomes the one the caller sees."""

from __future__ import annotations

from typing import Any

from .protocol import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    URL_ELICITATION_REQUIRED,
    McpError,
    UrlElicitationRequired,
)
from .transports.lost import CONNECTION_LOST

__all__ = [
    "ConnectionClosed",
    "PeerError",
    "PeerUrlElicitationRequired",
    "RequestTimeout",
    "raised_for",
]


class PeerError(McpError):
    """The peer answered one of our requests with this error."""


class PeerUrlElicitationRequired(PeerError, UrlElicitationRequired):
    """The peer answered -32042: catch it as :class:`UrlElicitationRequired`."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        McpError.__init__(self, code, message, data)


class ConnectionClosed(McpError):
    """The connection ended (the peer died or closed it) before the request was answered."""

    def __init__(self, reason: str | None) -> None:
        super().__init__(CONNECTION_CLOSED, f"Connection closed: {reason or 'closed'}")


class RequestTimeout(McpError):
    """A request got no response within its timeout; the peer was sent a cancellation."""

    def __init__(self, method: str, seconds: float) -> None:
        super().__init__(REQUEST_TIMEOUT, f"Request {method} timed out after {seconds:.3g}s")


def _connection_lost(data: Any) -> bool:
    return isinstance(data, dict) and data.get(CONNECTION_LOST) is True


def raised_for(error: McpError) -> McpError:
    """The exception a caller gets for the error its request ended with: the peer's answer as
    a :class:`PeerError` (-32042 also a :class:`UrlElicitationRequired`), the transport losing
    the peer as :class:`ConnectionClosed`; other errors (made here) as they are."""
    if type(error) is not McpError:
        return error
    if error.code == CONNECTION_CLOSED and _connection_lost(error.data):
        return ConnectionClosed(error.message)  # the transport lost the server
    kind = PeerUrlElicitationRequired if error.code == URL_ELICITATION_REQUIRED else PeerError
    return kind(error.code, error.message, error.data)
