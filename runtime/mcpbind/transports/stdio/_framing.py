"""Newline framing of stdio (2025-11-25 basic/transports.mdx §stdio): one UTF-8 JSON text per
line, the size limit applied while a line streams in.

Bytes are passed through undecoded: the protocol layer answers invalid UTF-8 with a parse error,
which needs the raw line (the nesting-depth limit is the protocol layer's too).
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

import anyio

from ..base import MessageTooLarge

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "ByteSource", "LineReader", "frame"]

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
"""Largest accepted incoming message, in bytes, excluding the line ending."""

_KEEP = 4096  # bytes kept from each end of an oversized line, to read its id
#: The newline as a byte value: ``int in bytes`` is one memchr, where a ``bytes`` operand is
#: first tried as an integer, which raises and formats a TypeError on every test (3.11-3.13).
_NEWLINE = ord("\n")


class ByteSource(Protocol):
    """Anything that yields chunks and raises ``anyio.EndOfStream`` at the end."""

    async def receive(self) -> bytes: ...


class LineReader:
    """Splits a byte stream into lines in O(n) time and about ``max_size`` memory.

    Only new bytes are searched for the newline, and a line that outgrows the limit is
    dropped while it streams in rather than buffered, so a peer sending an endless line
    costs nothing but the bytes in flight. Cancelling ``receive()`` loses no data.
    """

    def __init__(self, source: ByteSource, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._source = source
        self._max_size = max_size
        self._buffer = bytearray()
        self._start = 0  # where the current line begins
        self._scanned = 0  # no newline in buffer[_start:_scanned]
        self._dropped = 0  # bytes of an oversized line thrown away so far
        self._head = b""  # the start of the line being dropped
        self._eof = False
        self._ready: deque[bytes] = deque()  # complete lines split off whole chunks, in order

    async def receive(self) -> bytes:
        """Return the next non-empty line, without its ``\\n`` or ``\\r\\n``.

        Raises ``MessageTooLarge`` once per oversized line (the reader stays usable) and
        ``anyio.EndOfStream`` at the end; a final line lacking its newline is returned.
        """
        while True:
            line = self.buffered_line()
            if line is not None:
                return line
            if self._eof:
                return self._final_line()
            try:
                chunk = await self._source.receive()
            except anyio.EndOfStream:
                self._eof = True
                continue
            self.feed(chunk)

    def feed(self, chunk: bytes) -> None:
        """Append bytes read by someone else (the push path of a transport)."""
        if (
            chunk[-1:] == b"\n"
            and self._start == len(self._buffer)
            and not self._dropped
            and len(chunk) <= self._max_size
        ):
            # The usual case: nothing partial is buffered, the chunk ends a line and is too
            # short to hold an oversized one: its lines are split off at once (one C call).
            if self._start:
                self._buffer.clear()
                self._start = self._scanned = 0
            lines = chunk.split(b"\n")
            lines.pop()  # the empty text after the last newline
            self._ready.extend(lines)
            return
        if self._start:
            del self._buffer[: self._start]
            self._scanned -= self._start
            self._start = 0
        self._buffer += chunk

    def buffered_line(self) -> bytes | None:
        """The next complete line already buffered, or ``None``; never waits. Raises
        ``MessageTooLarge`` like :meth:`receive`. (After the end of the stream too: the
        complete lines still buffered are what :meth:`receive` returns first.)"""
        ready = self._ready
        while ready:  # lines split off whole chunks come before any bytes buffered since
            line = ready.popleft()
            if line[-1:] == b"\r":
                line = line[:-1]
            if line:
                return line
        buffer = self._buffer
        while (end := buffer.find(b"\n", self._scanned)) >= 0:
            start = self._start
            self._start = self._scanned = end + 1
            if self._dropped:
                seen, self._dropped = self._dropped + end - start, 0
                tail = bytes(buffer[max(start, end - _KEEP) : end])
                raise MessageTooLarge(self._max_size, seen, self._head, tail)
            if end > start and buffer[end - 1] == 0x0D:
                end -= 1
            if end - start > self._max_size:
                head, tail = bytes(buffer[start : start + _KEEP]), bytes(buffer[end - _KEEP : end])
                raise MessageTooLarge(self._max_size, end - start, head, tail)
            if end > start:
                with memoryview(buffer) as view:
                    return bytes(view[start:end])
        self._scanned = len(buffer)
        partial = len(buffer) - self._start
        if self._dropped or partial > self._max_size + 1:  # + 1: room for a "\r"
            if not self._dropped:
                self._head = bytes(buffer[self._start : self._start + _KEEP])
            self._dropped += partial
            buffer.clear()
            self._start = self._scanned = 0
        return None

    def _final_line(self) -> bytes:
        line = bytes(self._buffer[self._start :]).removesuffix(b"\r")
        dropped, self._dropped = self._dropped, 0
        self._buffer.clear()
        self._start = self._scanned = 0
        if dropped or len(line) > self._max_size:
            head = self._head if dropped else line[:_KEEP]
            raise MessageTooLarge(self._max_size, dropped + len(line), head, line[-_KEEP:])
        if not line:
            raise anyio.EndOfStream
        return line


def frame(message: bytes) -> bytes:
    """``message`` as one line: refused if it contains a newline (it would split in two)."""
    if _NEWLINE in message:
        raise ValueError("stdio messages must not contain a newline")
    return message + b"\n"
