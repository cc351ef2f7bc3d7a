"""Reading and writing raw fds on the asyncio event loop, for both ends of stdio.

One reader (:class:`FdReader`) and one writer (:class:`FdWriter`) serve the server's stdin and
stdout and the client's pipes to its server process: no worker thread per message, no stream
wrapper and no cancel scope per chunk, and a fast path (:func:`pump_lines`) that hands messages
to the connection straight from the loop's read callback.
"""

from __future__ import annotations

import os
import select
import stat
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel

from ..._lazy import LazyModule
from ..base import TransportClosed
from ._framing import LineReader

if TYPE_CHECKING:
    import asyncio
else:  # imported at first use, not with mcpbind (issue 15, cold start)
    asyncio = LazyModule("asyncio", globals())

__all__ = ["DEFAULT_WRITE_HIGH_WATER", "FdReader", "FdWriter", "make_nonblocking", "pump_lines"]

_CHUNK = 64 * 1024
_FAIR_STREAK = 16  # chunks read without waiting before yielding to other tasks once
#: Messages a batch holds before it is written: the peer starts on the first answers while
#: the rest are made, instead of the two processes taking turns (issue 15).
_BATCH_MESSAGES = 8
DEFAULT_WRITE_HIGH_WATER = 1024 * 1024
"""Bytes queued for a peer that does not read, past which the server stops reading requests
(issue 28 F21); it reads again once the queue is down to half."""


class FdReader:
    """A :class:`~.framing.ByteSource` over one fd, read on the asyncio event loop.

    While a reader waits, the fd stays registered with the loop (registering and unregistering
    around every wait costs more than the rest of a request's reading), and the loop's
    callback reads the chunk itself and hands it to the waiting task, or to :attr:`push`. A
    chunk nobody has taken yet pauses the registration until the next wait, so an unread flood
    is not buffered here. Cancelling ``receive()`` loses nothing: a chunk read for a cancelled
    waiter is returned by the next call.

    ``nonblocking``: the fd is ours and non-blocking (a pipe to our server process), so it is
    read at once and waited for only when empty. Otherwise (an inherited stdin, maybe shared
    with other processes, so it keeps its flags) it is read only when the loop reports it
    readable. An fd the loop cannot watch (a regular file, /dev/null) never blocks and is read
    directly. Raises ``anyio.EndOfStream`` at the end of the stream, ``OSError`` for a failed
    read, ``anyio.ClosedResourceError`` once closed.
    """

    def __init__(self, fd: int, *, nonblocking: bool) -> None:
        self.fd = fd
        self._read_first = nonblocking
        #: An inherited fd that is blocking stays so: uvloop (libuv) makes a watched fd
        #: non-blocking, which other holders of a shared stdin would see.
        self._keep_blocking = not nonblocking and _is_blocking(fd)
        self._watchable = True  # False once the loop refused the fd
        self._closed = False
        self._expired = False
        self._streak = 0  # chunks read in a row without waiting
        self._loop: asyncio.AbstractEventLoop | None = None  # while fd is registered with it
        self._waiter: asyncio.Future[None] | None = None
        self._chunk: bytes | None = None  # read by the loop's callback, not yet returned
        self._error: OSError | None = None
        #: While set, the loop's callback hands each chunk read to it; it returns False to stop.
        self.push: Callable[[bytes], bool] | None = None

    @property
    def pushable(self) -> bool:
        """Whether :meth:`wait_pushed` can work (open, watchable, nothing held for receive)."""
        return (
            self._watchable
            and not (self._closed or self._expired)
            and self._chunk is None
            and self._error is None
        )

    async def wait_pushed(self) -> None:
        """Register the fd and wait once: until :attr:`push` asked to stop, or a chunk it did
        not take (the end of the stream), an error, ``expire()`` or ``close()`` is waiting for
        ``receive``."""
        if self.pushable:
            await self._wait()

    async def receive(self) -> bytes:
        if self._streak >= _FAIR_STREAK or not self._watchable:
            self._streak = 0  # a flood must not starve other tasks; files are read per step
            await anyio.lowlevel.checkpoint()  # before reading: cancelling here loses nothing
        while not self._closed:
            data = self._chunk
            if data is not None:
                if not data:  # the end of the stream stays, so every later call sees it too
                    raise anyio.EndOfStream
                self._chunk = None
                self._streak += 1
                return data
            if self._error is not None:
                raise self._error
            if (self._loop is None and self._read_first) or self._expired or not self._watchable:
                # Not registered: a read is cheaper than a wait when data is already there.
                # Registered, the loop's callback reads what arrives, so a read here would
                # nearly always come back empty (a wasted system call per message).
                try:
                    data = os.read(self.fd, _CHUNK)
                except BlockingIOError:
                    if self._expired:
                        raise anyio.EndOfStream from None
                else:
                    if not data:
                        self._chunk = b""
                        continue
                    self._streak += 1
                    return data
            self._streak = 0
            await self._wait()
        raise anyio.ClosedResourceError

    async def _wait(self) -> None:
        """Wait until a chunk was read for us, or expire() or close(); returns at once when the
        loop cannot watch the fd (regular files, /dev/null: they never block)."""
        loop = asyncio.get_running_loop()
        if self._loop is None:
            try:
                loop.add_reader(self.fd, self._on_readable)
            except (NotImplementedError, OSError, ValueError):
                self._watchable = False
                return
            if self._keep_blocking:
                os.set_blocking(self.fd, True)
            self._loop = loop
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
            chunk = os.read(self.fd, _CHUNK)
        except BlockingIOError:  # a stale report, or someone sharing the fd emptied it first
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
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _unregister(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self.fd)
            self._loop = None

    def expire(self) -> None:
        """Stop waiting for output that has not arrived yet: what is already in the fd is still
        returned, then ``anyio.EndOfStream`` (for a non-blocking fd whose writer is gone but
        whose other holders may keep it open forever)."""
        self._expired = True
        self._wake()

    def close(self) -> None:
        """Stop reading: unregister and wake a waiting ``receive()``; the fd stays open."""
        self._closed = True
        self._unregister()
        self._wake()


class _Queued:
    """A message, or what is left of it, waiting in ``FdWriter.queue``."""

    __slots__ = ("counted", "data", "started", "written")

    def __init__(self, data: bytes, *, started: bool, counted: bool) -> None:
        self.data = memoryview(data)
        self.started = started  # part of it is in the fd: it can no longer be withdrawn
        self.counted = counted  # in ``FdWriter.queued_bytes``
        self.written = asyncio.Event()  # set once it is all in the fd, or the fd is gone


class FdWriter:
    """Writes framed messages to one fd (ours to close), in order, from the event loop.

    A message goes straight to the fd when nothing is queued, which is nearly always; what the
    fd cannot take at once is queued, and a helper task writes the queue in order, waiting for
    writability. A sender cancelled while it waits withdraws its message if none of it was
    written yet, and otherwise leaves it to be finished, so a message is never torn. Between
    :meth:`begin_batch` and :meth:`end_batch`, messages are collected and written together, eight
    at a time (the responses to one read, a system call per eight). An fd the loop cannot poll
    (``pollable`` false: a regular file, tty or /dev/null) is written in a worker thread, never
    batched. Once the fd fails, :attr:`error` is set and writes are dropped; the transport
    reports it. :attr:`full`: over ``high_water`` bytes are queued (the peer does not read);
    :meth:`wait_drained` waits until half of that is left. ``reactive_only``: count only
    the messages queued while :attr:`reacting` (written in reaction to what was read: a
    client's answers to its server's requests), not those of callers who wait for their
    own writes, so that two ends that both hold back cannot wait for each other.
    """

    def __init__(
        self,
        fd: int,
        *,
        pollable: bool,
        high_water: int = DEFAULT_WRITE_HIGH_WATER,
        reactive_only: bool = False,
    ) -> None:
        self.fd = fd
        self.pollable = pollable
        self.high_water = high_water
        self.reactive_only = reactive_only
        #: Set by the pump while it hands over what it read.
        self.reacting = False
        self.closed = False
        self.error: OSError | None = None  # the write that broke the fd
        self.queue: deque[_Queued] = deque()
        self.queued_bytes = 0  # of the messages in ``queue``
        self._drained: asyncio.Event | None = None  # while someone waits for the queue to drain
        self._flusher: asyncio.Task[None] | None = None  # referenced while it runs
        self._batch: list[bytes] | None = None
        self._batch_size = 0

    def write_nowait(self, data: bytes) -> int:
        """Batch ``data``, or write what the fd takes at once; return how many bytes are left
        for :meth:`write_rest` (0 also when the fd is gone: see :attr:`error`)."""
        if self.closed or self.error is not None:
            return 0
        batch = self._batch
        if batch is not None:
            batch.append(data)  # written when the batch ends, still in this loop iteration
            self._batch_size += len(data)
            if self._batch_size >= _CHUNK or len(batch) >= _BATCH_MESSAGES:
                self._write_batch()  # big messages are not all held; the peer starts early
            return 0
        return self._write_direct(data)

    def _write_direct(self, data: bytes) -> int:
        """Write what the fd takes at once, unless something is queued; return what is left."""
        if not self.pollable or self.queue:
            return len(data)
        try:
            return len(data) - os.write(self.fd, data)
        except BlockingIOError:
            return len(data)
        except OSError as exc:
            self.error = exc
            return 0

    async def write_rest(self, data: bytes, left: int) -> None:
        """Queue the last ``left`` bytes of ``data`` and wait until they are written or the fd
        is gone."""
        started = left < len(data)
        queued = self._enqueue(data[-left:] if started else data, started=started)
        try:
            await queued.written.wait()
        except BaseException:
            if not queued.started and not queued.written.is_set():
                self.queue.remove(queued)  # not a byte of it went out: as if never sent
                if queued.counted:
                    self._written(len(queued.data))
                queued.written.set()  # for wait_flushed()
            raise

    @property
    def full(self) -> bool:
        """Over ``high_water`` bytes wait for the peer to read them."""
        return self.queued_bytes > self.high_water

    async def wait_drained(self) -> None:
        """Wait until at most half of ``high_water`` bytes are queued, or the fd is gone."""
        while self.queued_bytes > self.high_water // 2 and not self.closed:
            if self._drained is None:
                self._drained = asyncio.Event()
            await self._drained.wait()

    def _written(self, count: int) -> None:
        self.queued_bytes -= count
        if self._drained is not None and self.queued_bytes <= self.high_water // 2:
            self._drained.set()
            self._drained = None

    def begin_batch(self) -> bool:
        """Collect messages from now on until :meth:`end_batch`; ``True`` if a batch began
        here (not one already open, nor an fd that is never batched)."""
        if self.pollable and self._batch is None and not self.closed:
            self._batch = []
            return True
        return False

    def end_batch(self) -> None:
        if self._batch is not None:
            self._write_batch()
            self._batch = None

    def _write_batch(self) -> None:
        """Write the batch now, without waiting; what the fd does not take is queued."""
        assert self._batch is not None
        data = b"".join(self._batch)
        self._batch.clear()
        self._batch_size = 0
        if data and not self.closed and self.error is None:
            left = self._write_direct(data)
            if left:
                self._enqueue(data[-left:], started=left < len(data))

    def _enqueue(self, data: bytes, *, started: bool) -> _Queued:
        counted = self.reacting or not self.reactive_only
        queued = _Queued(data, started=started, counted=counted)
        self.queue.append(queued)
        if counted:
            self.queued_bytes += len(data)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush())
        return queued

    async def _flush(self) -> None:
        """The helper task: write the queue in order, waiting while the fd is full."""
        queue = self.queue
        while queue and not self.closed:
            head = queue[0]
            try:
                if self.pollable:
                    written = os.write(self.fd, head.data)
                else:
                    head.started = True
                    await asyncio.to_thread(_write_all, self.fd, head.data)
                    written = len(head.data)
            except BlockingIOError:
                with suppress(anyio.ClosedResourceError):  # woken by close()
                    await anyio.wait_writable(self.fd)
                continue
            except OSError as exc:
                self.error = exc
                self._drop_queue()
                return
            head.started = True
            head.data = head.data[written:]
            if head.counted:
                self._written(written)
            if not head.data:
                queue.popleft()
                head.written.set()

    async def wait_flushed(self) -> None:
        """Wait until everything queued so far is written or the fd is gone."""
        while self.queue:
            await self.queue[-1].written.wait()

    def _drop_queue(self) -> None:
        for queued in self.queue:
            queued.written.set()
        self.queue.clear()
        self._written(self.queued_bytes)

    def close(self) -> None:
        """Drop what is still queued and close the fd."""
        if not self.closed:
            self.closed = True
            self._batch = None
            self._drop_queue()
            anyio.notify_closing(self.fd)
            os.close(self.fd)


def _write_all(fd: int, data: memoryview) -> None:
    """Blocking write of every byte of ``data``; runs in a worker thread."""
    while data:
        try:
            data = data[os.write(fd, data) :]
        except BlockingIOError:  # the parent handed us a non-blocking fd
            select.select([], [fd], [])


def _is_blocking(fd: int) -> bool:
    try:
        return os.get_blocking(fd)
    except OSError:
        return False


def make_nonblocking(fd: int) -> bool:
    """Make ``fd`` non-blocking if it is a pipe, FIFO or socket the event loop can poll, and
    say whether it is one (regular files, ttys, /dev/null keep their flags)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return False
    os.set_blocking(fd, False)
    return True


async def pump_lines(
    lines: LineReader,
    source: FdReader,
    receive: Callable[[], Awaitable[bytes]],
    is_closed: Callable[[], bool],
    handler: Callable[[bytes], bool],
    begin_batch: Callable[[], object],
    end_batch: Callable[[int], None],
    writer: FdWriter | None = None,
) -> None:
    """The body of ``pump()`` for both stdio ends (see :class:`~..base.MessagePump`): the
    lines of ``source`` go to ``handler`` from the loop's read callback where it can push,
    through ``receive`` otherwise. ``begin_batch``/``end_batch(count)`` bracket the messages
    handed over from one read. While ``writer`` is :attr:`~FdWriter.full` (the peer does
    not read what the messages' handling writes), no more is read or handed over: at most a
    chunk read waits (issue 28 F21); the pump reads again once the writer drained."""
    failure: list[BaseException] = []
    stopped = False

    def full() -> bool:
        return writer is not None and writer.full

    def hand_over() -> bool:
        """Hand the complete lines buffered to ``handler`` (until the writer is full);
        ``False`` once it refuses one."""
        begin_batch()
        count = 0
        if writer is not None:
            writer.reacting = True
        try:
            while not full() and (line := lines.buffered_line()) is not None:
                count += 1
                if not handler(line):
                    return False
        finally:
            end_batch(count)
            if writer is not None:
                writer.reacting = False
        return True

    def on_chunk(chunk: bytes) -> bool:
        nonlocal stopped
        lines.feed(chunk)
        try:
            if hand_over():
                return not full()  # full: stop reading until the writer drains
            stopped = True
        except BaseException as exc:  # an oversized line, or the handler failed: the
            failure.append(exc)  # pumping task raises it
        return False

    while True:
        if writer is not None and writer.full:
            await writer.wait_drained()
            continue
        if not hand_over():
            return
        if full():
            continue
        if is_closed():
            raise TransportClosed("transport closed")
        if not source.pushable:  # no push here, or the end of the stream: the ordinary way
            if not handler(await receive()):
                return
            continue
        source.push = on_chunk
        try:
            await source.wait_pushed()
        finally:
            source.push = None
        if failure:
            raise failure[0]
        if stopped:
            return
