"""The transport contract: whole JSON-RPC messages in and out, as opaque bytes.

Transports never parse JSON; framing, size limits and process/stream lifetime are
their whole job, so the protocol layer can run unchanged over any of them.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["AuthorizationFailed", "MessageTooLarge", "Transport", "TransportClosed"]


class TransportClosed(Exception):
    """The peer is gone or the transport was closed; no further messages will flow."""

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason or "transport closed")
        self.reason = reason


class AuthorizationFailed(Exception):
    """An HTTP transport's ``auth=`` flow could not authorize a request (the OAuth client's
    ``mcpbind.auth.client.AuthError`` is one). ``status``: the HTTP status that led there."""

    status: int | None = None


class MessageTooLarge(Exception):
    """One incoming message exceeded the size limit and was discarded.

    The transport stays usable: the next ``receive()`` returns the following message.
    """

    def __init__(self, limit: int, seen: int, head: bytes = b"", tail: bytes = b"") -> None:
        super().__init__(f"incoming message of {seen} bytes exceeds the limit of {limit} bytes")
        self.limit = limit
        self.seen = seen
        #: The first and last few KB of the message: enough to read its id, so the request
        #: it answers (or asks) gets its error now instead of at its timeout.
        self.head = head
        self.tail = tail


class Transport(Protocol):
    """Moves complete JSON-RPC messages (or batches) between two peers."""

    async def send(self, message: bytes) -> None:
        """Send one complete message, without a trailing newline.

        Raises ``TransportClosed`` if the peer is gone or the transport is closed.
        """
        ...

    async def receive(self) -> bytes:
        """Return the next message; raise ``TransportClosed`` at end of stream or close."""
        ...

    async def aclose(self) -> None:
        """Release the transport; safe to call more than once."""
        ...
