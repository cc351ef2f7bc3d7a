"""The transport contract: whole JSON-RPC messages in and out, as opaque bytes.

Transports never parse JSON; framing, size limits and process/stream lifetime are
their whole job, so the protocol layer can run unchanged over any of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import ClassVar, Protocol

__all__ = ["AuthorizationFailed", "MessagePump", "MessageTooLarge", "Transport", "TransportClosed"]


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


class MessagePump(ABC):
    """The optional features a transport declares by subclassing: ``pump`` instead of
    ``receive`` in a loop, and :attr:`send_checks_cancellation`. The connection reads them
    once, when it starts (stdio's two ends declare them).

    A nominal base rather than a ``runtime_checkable`` Protocol: ``isinstance`` against a
    runtime Protocol costs microseconds on 3.11.
    """

    __slots__ = ()

    #: ``send`` raises for a caller whose cancel scope is cancelled before anything is
    #: written, so the connection need not check for cancellation before each request.
    send_checks_cancellation: ClassVar[bool] = False

    #: The end of the peer's input leaves the write side open (stdio's server end: stdin at
    #: EOF, stdout still read), so a request read before the end is still owed its answer:
    #: the connection gives the handlers still running its ``eof_grace`` to send them.
    writes_after_eof: ClassVar[bool] = False

    @abstractmethod
    async def pump(self, handler: Callable[[bytes], bool]) -> None:
        """Hand each incoming message to ``handler`` until it returns ``False``: what
        ``receive()`` in a loop would do, minus a task switch per message, since messages that
        arrive while this waits may be handed over straight from the event loop's read
        callback (``handler`` must not block; it may run outside any task). Raises what
        ``receive()`` raises (``MessageTooLarge`` for one oversized message: call again to go
        on; ``TransportClosed`` at the end) and whatever ``handler`` raises. Messages after the
        one ``handler`` refused stay queued for the next call."""
