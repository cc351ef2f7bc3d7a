"""In-process transport pair, for tests and for embedding a server in its client."""

from __future__ import annotations

import anyio
from anyio.abc import AsyncResource
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .base import TransportClosed

__all__ = ["MemoryTransport", "memory_pair"]

DEFAULT_MAX_BUFFER = 32
"""Messages a side may queue before ``send`` waits; small, so backpressure still works."""


class MemoryTransport(AsyncResource):
    """One end of a :func:`memory_pair`. Messages are passed by reference, never copied."""

    def __init__(
        self, outgoing: MemoryObjectSendStream[bytes], incoming: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._outgoing = outgoing
        self._incoming = incoming

    async def send(self, message: bytes) -> None:
        try:
            try:
                self._outgoing.send_nowait(message)  # fast path: no scheduling round trip
            except anyio.WouldBlock:
                await self._outgoing.send(message)
        except anyio.ClosedResourceError:
            raise TransportClosed("transport closed") from None
        except anyio.BrokenResourceError:
            raise TransportClosed("peer closed") from None

    async def receive(self) -> bytes:
        """Return the next message; messages queued before the peer closed still arrive."""
        try:
            try:
                return self._incoming.receive_nowait()  # fast path when a message is queued
            except anyio.WouldBlock:
                return await self._incoming.receive()
        except anyio.ClosedResourceError:
            raise TransportClosed("transport closed") from None
        except anyio.EndOfStream:
            raise TransportClosed("peer closed") from None

    async def aclose(self) -> None:
        # Closing our send side wakes the peer's receive(); closing our receive side
        # makes the peer's send() fail instead of filling a buffer nobody reads.
        self._outgoing.close()
        self._incoming.close()


def memory_pair(max_buffer: int = DEFAULT_MAX_BUFFER) -> tuple[MemoryTransport, MemoryTransport]:
    """Return two connected transports; what one sends, the other receives."""
    a_out, b_in = anyio.create_memory_object_stream[bytes](max_buffer)
    b_out, a_in = anyio.create_memory_object_stream[bytes](max_buffer)
    return MemoryTransport(a_out, a_in), MemoryTransport(b_out, b_in)
