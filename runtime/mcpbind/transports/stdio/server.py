"""The server end of stdio (2025-11-25 basic/transports.mdx §stdio): messages arrive on stdin and
leave on the original stdout."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import suppress

import anyio
from anyio.abc import AsyncResource

from ..base import MessagePump, TransportClosed
from ._framing import DEFAULT_MAX_MESSAGE_SIZE, LineReader, frame
from .fdio import DEFAULT_WRITE_HIGH_WATER, FdReader, FdWriter, make_nonblocking, pump_lines

__all__ = ["StdioServerTransport"]


class StdioServerTransport(AsyncResource, MessagePump):
    """Server end of stdio: messages arrive on stdin and leave on the original stdout.

    Creating it moves the wire to a private duplicate of fd 1 and points fd 1 and
    ``sys.stdout`` at stderr, so ``print()`` calls and subprocesses started by tools
    cannot corrupt the message stream; ``aclose()`` restores both. Create at most one
    per process. Any task may send; receive from one task at a time.

    ``write_high_water``: while more bytes than this wait for a client that does not read
    stdout, no more requests are read from stdin (their answers would pile up in memory);
    reading resumes once half of that is left.
    """

    writes_after_eof = True  # the client may close stdin and still read stdout

    def __init__(
        self,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        write_high_water: int = DEFAULT_WRITE_HIGH_WATER,
    ) -> None:
        # stdin may be shared with other processes: it keeps its flags (see FdReader).
        self._source = FdReader(0, nonblocking=False)
        self._reader = LineReader(self._source, max_message_size)
        self._closed = False
        self._saved_stdout = sys.stdout
        # Writes go straight from the event loop: non-blocking, waiting for writability only
        # when the pipe is full (no worker thread per message). While the messages of one read
        # are handled, the responses sent meanwhile are written together when the batch ends
        # (one system call for 32 pipelined requests).
        wire = os.dup(1)
        self._writer = FdWriter(wire, pollable=make_nonblocking(wire), high_water=write_high_water)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self._saved_stdout.flush()  # output printed before we took over goes to stderr too

    async def send(self, message: bytes) -> None:
        data = frame(message)
        if self._closed:
            raise TransportClosed("transport closed")
        writer = self._writer
        if left := writer.write_nowait(data):
            await writer.write_rest(data, left)
        if writer.error is not None:
            raise TransportClosed(f"stdout closed: {writer.error}")
        if writer.closed:
            raise TransportClosed("transport closed")

    async def receive(self) -> bytes:
        if self._closed:
            raise TransportClosed("transport closed")
        try:
            return await self._reader.receive()
        except anyio.EndOfStream:
            raise TransportClosed("stdin closed") from None
        except anyio.ClosedResourceError:
            raise TransportClosed("transport closed") from None
        except OSError as exc:
            raise TransportClosed(f"stdin failed: {exc}") from None

    async def pump(self, handler: Callable[[bytes], bool]) -> None:
        """Hand each incoming message to ``handler`` until it returns ``False``.

        What :meth:`receive` in a loop would do, minus a task switch per message: with stdin a
        pipe, FIFO, socket or tty, messages that arrive while this waits are passed to
        ``handler`` straight from the event loop's read callback (``handler`` must not block;
        it runs outside any task). Raises as :meth:`receive` does (``MessageTooLarge`` for
        one oversized message: call again to go on; ``TransportClosed`` at the end), and
        whatever ``handler`` raises. Messages after the one ``handler`` refused stay queued.
        """
        writer = self._writer
        await pump_lines(
            self._reader,
            self._source,
            self.receive,
            lambda: self._closed,
            handler,
            writer.begin_batch,
            lambda count: writer.end_batch(),
            writer,
        )

    async def aclose(self) -> None:
        """Stop receiving, finish the writes under way, and give fd 1 back to stdout."""
        if self._closed:
            return
        self._closed = True
        self._source.close()
        writer = self._writer
        with anyio.CancelScope(shield=True):
            with suppress(OSError):
                await writer.wait_flushed()  # responses of the last batch go out first
            sys.stdout.flush()
            os.dup2(writer.fd, 1)
            writer.close()
            sys.stdout = self._saved_stdout
