"""stdio transport (2025-11-25 basic/transports.mdx §stdio, basic/lifecycle.mdx §Shutdown).

Messages are UTF-8 JSON texts, one per line. Bytes are passed through undecoded: the
protocol layer answers invalid UTF-8 with a parse error, which needs the raw line.
"""

from __future__ import annotations

import asyncio
import math
import os
import select
import signal
import stat
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Protocol, cast

import anyio
import anyio.lowlevel
import anyio.to_thread
from anyio.abc import AsyncResource

from .._asyncio import CancelCheck
from .base import MessageTooLarge, TransportClosed

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INHERITED_ENV",
    "ByteSource",
    "LineReader",
    "StdioClientTransport",
    "StdioServerTransport",
]

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
"""Largest accepted incoming message, in bytes, excluding the line ending."""

INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""The only variables a spawned server inherits, so secrets in our environment stay here."""

_CHUNK = 64 * 1024
_EXIT_POLL = 0.05  # seconds between checks for the server's exit
_EXIT_DRAIN = 0.1  # after the server exits, how long its remaining output may still arrive
_EXIT_SETTLE = 0.25  # how long to wait for the exit status and stderr tail for an error message
_REASON_TAIL = 2048  # stderr bytes quoted in TransportClosed reasons
_KEEP = 4096  # bytes kept from each end of an oversized line, to read its id
_FAIR_STREAK = 16  # chunks read without waiting before yielding to other tasks once


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

    async def receive(self) -> bytes:
        """Return the next non-empty line, without its ``\\n`` or ``\\r\\n``.

        Raises ``MessageTooLarge`` once per oversized line (the reader stays usable) and
        ``anyio.EndOfStream`` at the end; a final line lacking its newline is returned.
        """
        while True:
            line = self._next_line()
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
        if self._start:
            del self._buffer[: self._start]
            self._scanned -= self._start
            self._start = 0
        self._buffer += chunk

    def buffered_line(self) -> bytes | None:
        """The next complete line already buffered, or ``None``; never waits. Raises
        ``MessageTooLarge`` like :meth:`receive`."""
        return None if self._eof else self._next_line()

    def _next_line(self) -> bytes | None:
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


def _frame(message: bytes) -> bytes:
    if b"\n" in message:
        raise ValueError("stdio messages must not contain a newline")
    return message + b"\n"


class _FdSource:
    """Reads an inherited blocking fd without threads and without changing its flags.

    A thread blocked in ``read()`` cannot be cancelled and would keep the process alive
    at exit, so we wait for readability on the event loop and read only then.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pollable = True

    async def receive(self) -> bytes:
        if self._pollable:
            try:
                # Data usually waits already (the peer sends back to back): a zero-timeout poll
                # is far cheaper than registering the fd with the event loop.
                if not select.select([self._fd], [], [], 0)[0]:
                    await anyio.wait_readable(self._fd)
                else:
                    await anyio.lowlevel.checkpoint()
            except (PermissionError, ValueError, OSError):  # files, /dev/null: never block
                self._pollable = False
        else:
            await anyio.lowlevel.checkpoint()
        data = os.read(self._fd, _CHUNK)
        if not data:
            raise anyio.EndOfStream
        return data


class _LoopFdSource:
    """Reads an inherited pipe, FIFO or socket fd that stays registered with the asyncio loop.

    Registering and unregistering the fd around every wait (what :class:`_FdSource` does)
    costs more than the rest of a request's reading. The fd keeps its flags (it may be shared
    with other processes, so it stays blocking) and is read only when the loop reports it
    readable: the loop's callback reads the chunk itself and hands it to the waiting task. A
    chunk nobody has taken yet pauses the registration until the next wait, so an unread
    flood is not buffered here. Cancelling ``receive()`` loses nothing: a chunk read for a
    cancelled waiter is returned by the next call. Other event loops use ``_FdSource``.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._fallback: _FdSource | None = None  # not on asyncio, or the loop refused the fd
        self._loop: asyncio.AbstractEventLoop | None = None  # while fd is registered with it
        self._waiter: asyncio.Future[None] | None = None
        self._chunk: bytes | None = None  # read by the loop's callback, not yet returned
        self._error: OSError | None = None
        self._closed = False
        #: While set, the loop's callback hands each chunk read to it; it returns False to stop.
        self.push: Callable[[bytes], bool] | None = None

    @property
    def pushable(self) -> bool:
        """Whether :meth:`wait_pushed` can work here (asyncio, fd registrable, nothing held)."""
        return self._fallback is None and self._chunk is None and self._error is None

    def _register(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Register the fd with ``loop`` once; ``False`` (and the thread fallback from then on)
        where that cannot be done, e.g. a regular file."""
        if self._loop is None:
            try:
                loop.add_reader(self._fd, self._on_readable)
            except (NotImplementedError, OSError, ValueError):
                self._fallback = _FdSource(self._fd)
                return False
            self._loop = loop
        return True

    async def wait_pushed(self) -> None:
        """Register the fd and wait once: until :attr:`push` asked to stop, or a chunk it did
        not take (the end of the stream), an error or ``close()`` is waiting for ``receive``."""
        if self._closed or not self.pushable:
            return
        loop = asyncio.get_running_loop()
        if not self._register(loop):
            return
        self._waiter = waiter = loop.create_future()
        try:
            await waiter
        finally:
            self._waiter = None

    async def receive(self) -> bytes:
        while True:
            data = self._chunk
            if data is not None:
                if data:  # b"" (end of stream) stays, so every later call sees it too
                    self._chunk = None
                    return data
                raise anyio.EndOfStream
            if self._error is not None:
                raise self._error
            if self._closed:
                raise anyio.ClosedResourceError
            if self._fallback is not None:
                return await self._fallback.receive()
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._fallback = _FdSource(self._fd)
                continue
            if not self._register(loop):
                continue
            self._waiter = waiter = loop.create_future()
            try:
                await waiter
            finally:
                self._waiter = None

    def _on_readable(self) -> None:
        if self._chunk is not None:  # nobody has taken the last chunk: pause until they wait
            self._unregister()
            return
        try:
            chunk = os.read(self._fd, _CHUNK)
        except BlockingIOError:  # someone else sharing the fd emptied it first
            return
        except OSError as exc:
            self._error = exc
            self._unregister()
        else:
            push = self.push
            if push is not None and chunk:
                if push(chunk):
                    return  # taken: keep waiting
                self.push = None
            else:
                self._chunk = chunk
                if not chunk:
                    self._unregister()  # end of stream: the fd would report readable forever
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _unregister(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self._fd)
            self._loop = None

    def close(self) -> None:
        """Stop reading: unregister, and wake a waiting ``receive()``."""
        self._closed = True
        self._unregister()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


def _is_pollable_stream(fd: int) -> bool:
    """Whether ``fd`` is a pipe, FIFO or socket (what an event loop can watch)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _make_nonblocking(fd: int) -> bool:
    """Make ``fd`` non-blocking if it is a pipe or socket the event loop can poll."""
    if not _is_pollable_stream(fd):
        return False  # regular files, ttys, /dev/null: keep the blocking thread write
    os.set_blocking(fd, False)
    return True


async def _write_nonblocking(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a non-blocking pipe, waiting only while it is full."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await anyio.wait_writable(fd)


def _write_all(fd: int, data: bytes) -> None:
    """Blocking write of every byte of ``data``; runs in a worker thread."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:  # the parent handed us a non-blocking pipe
            select.select([], [fd], [])


class _Pushable(Protocol):
    push: Callable[[bytes], bool] | None

    @property
    def pushable(self) -> bool: ...

    async def wait_pushed(self) -> None: ...


async def _pump(
    reader: LineReader,
    source: object,
    receive: Callable[[], Awaitable[bytes]],
    is_closed: Callable[[], bool],
    handler: Callable[[bytes], bool],
    begin_batch: Callable[[], None] = lambda: None,
    end_batch: Callable[[int], None] = lambda count: None,
) -> None:
    """The body of ``pump()`` for both stdio ends: see :meth:`StdioServerTransport.pump`.
    ``begin_batch``/``end_batch(count)`` bracket the messages handed over from one read."""
    failure: list[BaseException] = []
    stopped = False

    def on_chunk(chunk: bytes) -> bool:
        nonlocal stopped
        reader.feed(chunk)
        begin_batch()
        count = 0
        try:
            while (line := reader.buffered_line()) is not None:
                count += 1
                if not handler(line):
                    stopped = True
                    return False
        except BaseException as exc:  # an oversized line, or the handler failed: the
            failure.append(exc)  # pumping task raises it
            return False
        finally:
            end_batch(count)
        return True

    while True:
        begin_batch()
        count = 0
        try:
            while (line := reader.buffered_line()) is not None:
                count += 1
                if not handler(line):
                    return
        finally:
            end_batch(count)
        if is_closed():
            raise TransportClosed("transport closed")
        pushable = getattr(source, "pushable", False)
        if not pushable:  # no push here, or the end of the stream: the ordinary way
            if not handler(await receive()):
                return
            continue
        pusher = cast(_Pushable, source)
        pusher.push = on_chunk
        try:
            await pusher.wait_pushed()
        finally:
            pusher.push = None
        if failure:
            raise failure[0]
        if stopped:
            return


class StdioServerTransport(AsyncResource):
    """Server end of stdio: messages arrive on stdin and leave on the original stdout.

    Creating it moves the wire to a private duplicate of fd 1 and points fd 1 and
    ``sys.stdout`` at stderr, so ``print()`` calls and subprocesses started by tools
    cannot corrupt the message stream; ``aclose()`` restores both. Create at most one
    per process. Any task may send; receive from one task at a time.
    """

    def __init__(self, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        # Pipes, FIFOs and sockets stay registered with the event loop; files, ttys and
        # /dev/null are polled per read (they cannot be registered, or never block).
        self._source: _LoopFdSource | _FdSource = (
            _LoopFdSource(0) if _is_pollable_stream(0) else _FdSource(0)
        )
        self._reader = LineReader(self._source, max_message_size)
        self._send_lock = anyio.Lock(fast_acquire=True)
        self._closed = False
        self._saved_stdout = sys.stdout
        self._wire = os.dup(1)
        # Writes go straight from the event loop: non-blocking, waiting for writability only
        # when the pipe is full (no worker thread per message).
        self._wire_pollable = _make_nonblocking(self._wire)
        #: While messages of one read are being handled: responses sent meanwhile, written
        #: together when the batch ends (one system call for 32 pipelined requests).
        self._batch: list[bytes] | None = None
        self._batch_size = 0
        #: Bytes a batch write left over (the pipe was full), written before anything else.
        self._tail = bytearray()
        self._tail_writer: asyncio.Task[None] | None = None
        self._write_error: OSError | None = None
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self._saved_stdout.flush()  # output printed before we took over goes to stderr too

    async def send(self, message: bytes) -> None:
        data = _frame(message)
        if self._write_error is not None:
            raise TransportClosed(f"stdout closed: {self._write_error}")
        batch = self._batch
        if batch is not None and not self._closed:
            batch.append(data)  # written when the batch ends, still in this loop iteration
            self._batch_size += len(data)
            if self._batch_size >= _CHUNK:  # big responses: do not hold them all in memory
                self._write_batch()
            return
        if (
            self._wire_pollable
            and not self._tail
            and not self._send_lock.locked()
            and not self._closed
        ):
            # The usual case: nobody is mid-write and the pipe takes the whole message at
            # once, with no await in between, so no other message can interleave with it.
            try:
                written = os.write(self._wire, data)
            except BlockingIOError:
                written = 0
            except OSError as exc:
                raise TransportClosed(f"stdout closed: {exc}") from exc
            if written == len(data):
                return
            data = data[written:]  # the rest goes out under the lock, before anyone else's
        async with self._send_lock:
            if self._closed:
                raise TransportClosed("transport closed")
            try:
                if self._wire_pollable:
                    await self._write_tail()
                    await _write_nonblocking(self._wire, data)
                else:
                    await anyio.to_thread.run_sync(_write_all, self._wire, data)
            except OSError as exc:
                raise TransportClosed(f"stdout closed: {exc}") from exc

    def _begin_batch(self) -> None:
        if self._wire_pollable and self._batch is None:
            self._batch = []

    def _end_batch(self, count: int) -> None:
        if self._batch is not None:
            self._write_batch()
            self._batch = None

    def _write_batch(self) -> None:
        """Write the batch now, without waiting: what the pipe does not take goes to the
        tail, which a helper task writes (under the send lock, so nothing overtakes it)."""
        assert self._batch is not None
        data = b"".join(self._batch)
        self._batch.clear()
        self._batch_size = 0
        if not data or self._closed:
            return
        if not self._tail and not self._send_lock.locked():
            try:
                data = data[os.write(self._wire, data) :]
            except BlockingIOError:
                pass
            except OSError as exc:
                self._write_error = exc
                return
            if not data:
                return
        self._tail += data
        if self._tail_writer is None or self._tail_writer.done():
            self._tail_writer = asyncio.get_running_loop().create_task(self._flush_tail())

    async def _flush_tail(self) -> None:
        async with self._send_lock:
            if not self._closed:
                try:
                    await self._write_tail()
                except OSError as exc:
                    self._write_error = exc

    async def _write_tail(self) -> None:
        """Write the tail first (call with the send lock held)."""
        if self._tail:
            tail = bytes(self._tail)
            self._tail.clear()
            await _write_nonblocking(self._wire, tail)

    async def receive(self) -> bytes:
        if self._closed:
            raise TransportClosed("transport closed")
        try:
            return await self._reader.receive()
        except anyio.EndOfStream:
            raise TransportClosed("stdin closed") from None
        except anyio.ClosedResourceError:
            raise TransportClosed("transport closed") from None

    async def pump(self, handler: Callable[[bytes], bool]) -> None:
        """Hand each incoming message to ``handler`` until it returns ``False``.

        What :meth:`receive` in a loop would do, minus a task switch per message: on asyncio
        with stdin a pipe, FIFO or socket, messages that arrive while this waits are passed to
        ``handler`` straight from the event loop's read callback (``handler`` must not block;
        it runs outside any task). Raises as :meth:`receive` does (``MessageTooLarge`` for
        one oversized message: call again to go on; ``TransportClosed`` at the end), and
        whatever ``handler`` raises. Messages after the one ``handler`` refused stay queued.
        """
        await _pump(
            self._reader,
            self._source,
            self.receive,
            lambda: self._closed,
            handler,
            self._begin_batch,
            self._end_batch,
        )

    async def aclose(self) -> None:
        """Stop receiving, finish an in-flight write, and give fd 1 back to stdout."""
        if self._closed:
            return
        self._closed = True
        if isinstance(self._source, _LoopFdSource):
            self._source.close()
        anyio.notify_closing(0)
        with anyio.CancelScope(shield=True):
            async with self._send_lock:
                if self._wire_pollable:
                    with suppress(OSError):
                        await self._write_tail()  # responses of the last batch go out first
                sys.stdout.flush()
                os.dup2(self._wire, 1)
                os.close(self._wire)
                sys.stdout = self._saved_stdout


class _StderrSink:
    """Keeps the last ``size`` bytes of the server's stderr and splits it into lines."""

    def __init__(self, size: int, on_line: Callable[[str], object] | None) -> None:
        self.tail = bytearray()
        self._size = size
        self._on_line = on_line
        self._partial = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.tail += chunk
        if (excess := len(self.tail) - self._size) > 0:
            del self.tail[:excess]
        if self._on_line is None:
            return
        self._partial += chunk
        end = self._partial.rfind(b"\n")
        if end >= 0:
            for line in self._partial[:end].split(b"\n"):
                self._emit(line)
            del self._partial[: end + 1]
        if len(self._partial) > self._size:  # an endless line must not grow without bound
            self.finish()

    def finish(self) -> None:
        if self._partial:
            self._emit(self._partial)
            self._partial.clear()

    def _emit(self, line: bytearray) -> None:
        assert self._on_line is not None
        self._on_line(line.removesuffix(b"\r").decode(errors="replace"))


class _PipeReader:
    """A ``ByteSource`` over our non-blocking read end of one of the server's pipes.

    Reads straight from the fd, and waits only when the pipe is empty: no stream wrapper
    and no cancel scope per chunk. On asyncio the fd stays registered with the loop between
    waits (registering costs more than a round trip's reading), and the loop's callback
    reads the chunk itself, so a stale readiness report never wakes the reader for nothing.
    :meth:`expire` makes it stop waiting (what is already in the pipe is still returned,
    then ``anyio.EndOfStream``), for when the server is gone but a process it started may
    hold the pipe open forever.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False
        self._expired = False
        self._streak = 0  # chunks read in a row without waiting
        self._loop: asyncio.AbstractEventLoop | None = None  # while fd is registered with it
        self._waiter: asyncio.Future[None] | None = None
        self._chunk: bytes | None = None  # read by the loop's callback, not yet returned
        #: While set, the loop's callback hands each chunk read to it; it returns False to stop.
        self.push: Callable[[bytes], bool] | None = None

    @property
    def pushable(self) -> bool:
        """Whether :meth:`wait_pushed` can work (asyncio, open, not expired, nothing held)."""
        if self.closed or self._expired or self._chunk is not None:
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    async def wait_pushed(self) -> None:
        """Register the fd and wait once: until :attr:`push` asked to stop, a chunk it did not
        take (the end of the stream) is waiting for ``receive``, or expire() or close()."""
        if self.pushable:
            await self._wait()

    async def receive(self) -> bytes:
        if self._streak >= _FAIR_STREAK:  # a flooding server must not starve other tasks
            self._streak = 0
            await anyio.lowlevel.checkpoint()  # before reading: cancelling here loses nothing
        while not self.closed:
            data = self._chunk
            if data is not None:
                self._chunk = None
            elif self._loop is not None and not self._expired:
                # Registered: the loop's callback reads what arrives, so a read here would
                # nearly always come back empty (a wasted system call per message).
                self._streak = 0
                await self._wait()
                continue
            else:
                try:
                    data = os.read(self.fd, _CHUNK)
                except BlockingIOError:
                    if self._expired:
                        raise anyio.EndOfStream from None
                    self._streak = 0
                    await self._wait()
                    continue
            if not data:
                raise anyio.EndOfStream
            self._streak += 1
            return data
        raise anyio.ClosedResourceError

    async def _wait(self) -> None:
        """Wait until the fd is readable, a chunk was read for us, or expire() or close()."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another backend: register for this one wait
            with suppress(anyio.ClosedResourceError):  # woken by expire() or close()
                await anyio.wait_readable(self.fd)
            return
        if self._loop is None:
            loop.add_reader(self.fd, self._on_readable)
            self._loop = loop
        self._waiter = loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _on_readable(self) -> None:
        if self._chunk is not None:  # nobody has taken the last chunk: pause until they wait
            self._unregister()
            return
        try:
            chunk = os.read(self.fd, _CHUNK)
        except BlockingIOError:  # a stale report: the reader got there first
            return
        except OSError:
            chunk = b""
        push = self.push
        if push is not None and chunk:
            if push(chunk):
                return  # taken: keep waiting
            self.push = None
        else:
            self._chunk = chunk
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _unregister(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self.fd)
            self._loop = None

    def expire(self) -> None:
        """Stop waiting for output that has not arrived yet."""
        self._expired = True
        if not self.closed:
            self._wake()
            anyio.notify_closing(self.fd)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._wake()
            self._unregister()
            anyio.notify_closing(self.fd)
            os.close(self.fd)


class _Queued:
    """A message, or what is left of it, waiting in ``_PipeWriter.queue``."""

    __slots__ = ("data", "started", "written")

    def __init__(self, data: bytes, *, started: bool) -> None:
        self.data = memoryview(data)
        self.started = started  # part of it is in the pipe: it can no longer be withdrawn
        self.written = anyio.Event()  # set once it is all in the pipe, or the pipe is gone


class _PipeWriter:
    """Our non-blocking write end of the server's stdin.

    A message is written straight to the fd when nothing is queued, which is nearly always;
    a message the pipe cannot take at once is queued whole, and :meth:`flush_queued`, a
    helper task, writes the queue in order. A sender cancelled while it waits withdraws its
    message if none of it was written yet, and otherwise leaves it to be finished, so a
    message is never torn.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False
        self.error: OSError | None = None  # the write that broke the pipe
        self.queue: deque[_Queued] = deque()
        self._work = anyio.Event()  # set when the queue needs the helper task

    async def write(self, data: bytes, *, started: bool) -> None:
        """Queue ``data`` and wait until it is written or the pipe is gone."""
        queued = _Queued(data, started=started)
        self.queue.append(queued)
        self._work.set()
        try:
            await queued.written.wait()
        except BaseException:
            if not queued.started and not queued.written.is_set():
                self.queue.remove(queued)  # not a byte of it went out: as if never sent
                queued.written.set()  # for wait_flushed()
            raise

    async def wait_flushed(self) -> None:
        """Wait until everything queued so far is written or the pipe is gone."""
        while self.queue:
            await self.queue[-1].written.wait()

    async def flush_queued(self) -> None:
        """The helper task: write queued messages whenever there are some, until closed."""
        while not self.closed:
            await self._work.wait()
            self._work = anyio.Event()
            while self.queue and not self.closed:
                head = self.queue[0]
                try:
                    written = os.write(self.fd, head.data)
                except BlockingIOError:
                    with suppress(anyio.ClosedResourceError):  # woken by close()
                        await anyio.wait_writable(self.fd)
                    continue
                except OSError as exc:
                    self.error = exc
                    self._drop_queue()
                    break
                head.started = True
                head.data = head.data[written:]
                if not head.data:
                    self.queue.popleft()
                    head.written.set()

    def _drop_queue(self) -> None:
        for queued in self.queue:
            queued.written.set()
        self.queue.clear()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._drop_queue()
            self._work.set()
            anyio.notify_closing(self.fd)
            os.close(self.fd)


def _open_process(
    argv: list[str], env: Mapping[str, str], cwd: str | os.PathLike[str] | None
) -> tuple[subprocess.Popen[bytes], int, int, int]:
    """Start ``argv`` in a new session with piped stdio; return it and our ends of the
    pipes (stdin, stdout, stderr), non-blocking. They are private to us, unlike the
    inherited fds of the server side, so changing their flags affects no one else."""
    ours: list[int] = []  # stdin's write end, stdout's and stderr's read ends
    theirs: list[int] = []  # the other ends, for the child
    try:
        for ours_is_write_end in (True, False, False):
            read_end, write_end = os.pipe()
            ours.append(write_end if ours_is_write_end else read_end)
            theirs.append(read_end if ours_is_write_end else write_end)
        process = subprocess.Popen(
            argv,
            stdin=theirs[0],
            stdout=theirs[1],
            stderr=theirs[2],
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    for fd in ours:
        os.set_blocking(fd, False)
    return process, ours[0], ours[1], ours[2]


class StdioClientTransport(AsyncResource):
    """Client end of stdio: owns a spawned server process. Create it with :meth:`spawn`.

    Any task may send; receive from one task at a time.
    """

    #: ``send`` raises for a caller whose cancel scope is cancelled, before anything is
    #: written (so a connection need not check again).
    send_checks_cancellation = True

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        stdin: int,
        stdout: int,
        stderr: int,
        *,
        max_message_size: int,
        stderr_sink: _StderrSink,
        close_timeout: float,
        terminate_timeout: float,
    ) -> None:
        """Take over ``process`` and our non-blocking ends of its stdio pipes (fds)."""
        self._process = process
        self._stdin = _PipeWriter(stdin)
        self._stdout = _PipeReader(stdout)
        self._stderr = _PipeReader(stderr)
        self._reader = LineReader(self._stdout, max_message_size)
        self._stderr_sink = stderr_sink
        self._close_timeout = close_timeout
        self._terminate_timeout = terminate_timeout
        self._close_lock = anyio.Lock()
        self._closed = False
        self._stderr_done = anyio.Event()
        self._check_cancelled = CancelCheck()
        #: Requests sent by callers woken by one read, written together (see _after_read).
        self._batch: list[bytes] | None = None
        self._batch_writer: asyncio.Task[None] | None = None  # referenced while it runs

    @classmethod
    @asynccontextmanager
    async def spawn(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        on_stderr: Callable[[str], object] | None = None,
        stderr_tail_size: int = 64 * 1024,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        close_timeout: float = 2.0,
        terminate_timeout: float = 2.0,
    ) -> AsyncIterator[StdioClientTransport]:
        """Run ``command *args`` as an MCP server; yield its transport, shut it down on exit.

        ``async with StdioClientTransport.spawn("uvx", ["some-server"]) as transport: ...``

        The server sees only the :data:`INHERITED_ENV` variables of this process plus
        ``env``, and runs in a new session so shutdown reaches every process it started.
        Its stderr is read continuously (a chatty server never blocks): the last
        ``stderr_tail_size`` bytes are kept in :attr:`stderr_tail`, and ``on_stderr``,
        if given, is called with each line (an exception from it ends the context).
        See :meth:`aclose` for the shutdown steps.
        """
        inherited = {name: os.environ[name] for name in INHERITED_ENV if name in os.environ}
        process, stdin, stdout, stderr = _open_process(
            [command, *args], {**inherited, **(env or {})}, cwd
        )
        transport = cls(
            process,
            stdin,
            stdout,
            stderr,
            max_message_size=max_message_size,
            stderr_sink=_StderrSink(stderr_tail_size, on_stderr),
            close_timeout=close_timeout,
            terminate_timeout=terminate_timeout,
        )
        # The helper tasks run in a task group, but the caller's body must not: an exception
        # from the body reaches the caller as itself, not wrapped in an ExceptionGroup.
        tg = anyio.create_task_group()
        await tg.__aenter__()
        try:
            tg.start_soon(transport._drain_stderr)
            tg.start_soon(transport._watch_exit)
            tg.start_soon(transport._stdin.flush_queued)
            try:
                yield transport
            finally:
                with anyio.CancelScope(shield=True):
                    await transport.aclose()
                tg.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class() as exc:
            if not await tg.__aexit__(type(exc), exc, exc.__traceback__):
                raise
        except BaseException:
            await tg.__aexit__(None, None, None)
            raise
        else:
            await tg.__aexit__(None, None, None)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it has exited (negative: killed by that signal)."""
        return self._process.poll()

    @property
    def stderr_tail(self) -> bytes:
        """The last bytes the server wrote to stderr."""
        return bytes(self._stderr_sink.tail)

    async def send(self, message: bytes) -> None:
        data = _frame(message)
        await self._check_cancelled()
        if self._closed:
            raise TransportClosed("transport closed")
        stdin = self._stdin
        batch = self._batch
        if batch is not None and stdin.error is None:
            batch.append(data)  # written with the others later in this loop iteration
            return
        if stdin.error is None:
            written = 0
            if not stdin.queue:  # the usual case: the pipe takes the whole message at once
                try:
                    written = os.write(stdin.fd, data)
                except BlockingIOError:
                    pass
                except OSError as exc:
                    stdin.error = exc
                if written == len(data):
                    return
            if stdin.error is None:
                await stdin.write(data[written:] if written else data, started=written > 0)
                if stdin.error is None and not stdin.closed:
                    return
        raise await self._closed_error() from stdin.error

    async def pump(self, handler: Callable[[bytes], bool]) -> None:
        """Hand each message from the server to ``handler`` until it returns ``False``; see
        :meth:`StdioServerTransport.pump`."""
        await _pump(
            self._reader,
            self._stdout,
            self.receive,
            lambda: self._closed,
            handler,
            end_batch=self._after_read,
        )

    def _after_read(self, count: int) -> None:
        # Several responses in one read woke several callers, who will send their next
        # requests in the coming loop iteration: collect those and write them at once (a
        # task queued behind the callers). A lone response (sequential calls) is not delayed.
        if count > 1 and self._batch is None and not self._closed:
            self._batch = []
            self._batch_writer = asyncio.get_running_loop().create_task(self._write_batch())

    async def _write_batch(self) -> None:
        batch, self._batch = self._batch, None
        stdin = self._stdin
        if not batch or self._closed or stdin.error is not None:
            return
        data = b"".join(batch)
        written = 0
        if not stdin.queue:
            try:
                written = os.write(stdin.fd, data)
            except BlockingIOError:
                pass
            except OSError as exc:
                stdin.error = exc
                return
            if written == len(data):
                return
        await stdin.write(data[written:] if written else data, started=written > 0)

    async def receive(self) -> bytes:
        """Return the next message from the server.

        Raises ``TransportClosed`` as soon as the server exits, even if a process it
        started keeps the pipe open; the reason gives the exit status and stderr tail.
        """
        if self._closed:
            raise TransportClosed("transport closed")
        try:
            return await self._reader.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, OSError):
            pass
        raise await self._closed_error()

    async def aclose(self) -> None:
        """Shut the server down (2025-11-25 basic/lifecycle.mdx §Shutdown) and reap it.

        Closes its stdin, waits ``close_timeout``, sends SIGTERM to its process group,
        waits ``terminate_timeout``, then sends SIGKILL. Once the server is gone, any
        process left in its group is killed, so tools it started cannot outlive it.
        """
        with anyio.CancelScope(shield=True):
            async with self._close_lock:
                if self._closed:
                    return
                self._closed = True
                await self._shutdown()

    async def _shutdown(self) -> None:
        close_deadline = anyio.current_time() + self._close_timeout
        # Messages still queued get to the server first, within the same close_timeout.
        with anyio.CancelScope(deadline=close_deadline):
            await self._stdin.wait_flushed()
        self._stdin.close()
        plan = (
            (None, close_deadline),
            (signal.SIGTERM, self._terminate_timeout),
            (signal.SIGKILL, math.inf),
        )
        for sig, timeout in plan:
            if sig is None:
                deadline = timeout
            else:
                self._signal_group(sig)
                deadline = anyio.current_time() + timeout
            with anyio.CancelScope(deadline=deadline):
                await self._wait_exit()
            if self._process.poll() is not None:
                break
        self._signal_group(signal.SIGKILL)
        with anyio.move_on_after(_EXIT_SETTLE):
            await self._stderr_done.wait()
        self._stdout.close()
        self._stderr.close()

    def _signal_group(self, sig: signal.Signals) -> None:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, sig)

    async def _wait_exit(self) -> None:
        # Polled (waitpid with WNOHANG), so a grandchild holding the pipes open cannot delay it;
        # the first polls come quickly (a server usually exits within milliseconds of EOF),
        # then every _EXIT_POLL.
        delay = 0.002
        while self._process.poll() is None:
            await anyio.sleep(delay)
            delay = min(delay * 2, _EXIT_POLL)

    async def _watch_exit(self) -> None:
        """Once the server exits, let pending output drain briefly, then fail receive()."""
        await self._wait_exit()
        await anyio.sleep(_EXIT_DRAIN)
        self._stdout.expire()

    async def _drain_stderr(self) -> None:
        try:
            while True:
                self._stderr_sink.feed(await self._stderr.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError, OSError):
            pass
        finally:
            self._stderr_sink.finish()
            self._stderr_done.set()

    async def _closed_error(self) -> TransportClosed:
        if self._closed:
            return TransportClosed("transport closed")
        with anyio.move_on_after(_EXIT_SETTLE):  # the status and stderr explain the exit
            await self._wait_exit()
            await self._stderr_done.wait()
        code = self._process.poll()
        if code is None:
            status = "closed its stdout"
        elif code < 0:
            status = f"was killed by signal {-code}"
            with suppress(ValueError):
                status = f"was killed by {signal.Signals(-code).name}"
        else:
            status = f"exited with code {code}"
        reason = f"server process {self._process.pid} {status}"
        tail = self._stderr_sink.tail[-_REASON_TAIL:].decode(errors="replace").strip()
        return TransportClosed(f"{reason}; stderr tail:\n{tail}" if tail else reason)
