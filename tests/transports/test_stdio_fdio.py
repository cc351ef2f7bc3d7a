"""The fd reader and write batcher both stdio ends share, over real pipes and files.

Spec: 2025-11-25 basic/transports.mdx §stdio (one message per line: a message is never torn or
interleaved, and none is lost).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import anyio
import pytest

from mcpbind.transports.stdio.fdio import FdReader, FdWriter

pytestmark = pytest.mark.anyio


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        with suppress(OSError):  # closed by the code under test
            os.close(fd)


def fill(fd: int) -> bytes:
    """Write to ``fd`` (non-blocking) until the pipe is full; return what was written."""
    written = bytearray()
    while True:
        try:
            written += b"f" * os.write(fd, b"f" * 65536)
        except BlockingIOError:
            return bytes(written)


async def read_exactly(fd: int, size: int) -> bytes:
    data = bytearray()
    with anyio.fail_after(10):
        while len(data) < size:
            try:
                data += os.read(fd, size - len(data))
            except BlockingIOError:
                await anyio.sleep(0.001)
    return bytes(data)


async def wait_until(condition: Callable[[], object]) -> None:
    """Poll ``condition`` (state changed by the event loop's callbacks) for up to 10 s."""
    for _ in range(10_000):
        if condition():
            return
        await anyio.sleep(0.001)
    raise AssertionError("condition never held")


async def test_writer_queues_in_order_withdraws_unstarted_and_never_tears(
    pipe: tuple[int, int],
) -> None:
    read_end, write_end = pipe
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    writer = FdWriter(write_end, pollable=True)
    filler = fill(write_end)
    first, second, third = (bytes([letter]) * 100_000 + b"\n" for letter in b"abc")

    async def send(data: bytes) -> None:
        left = writer.write_nowait(data)
        assert left == len(data)  # the pipe is full: all of it waits in the queue
        await writer.write_rest(data, left)

    async with anyio.create_task_group() as tg:
        scopes = []
        for data in (first, second, third):
            scope = anyio.CancelScope()
            scopes.append(scope)

            async def run(data: bytes = data, scope: anyio.CancelScope = scope) -> None:
                with scope:
                    await send(data)

            tg.start_soon(run)
            await wait_until(lambda: len(writer.queue) == len(scopes))
        scopes[1].cancel()  # nothing of it written yet: withdrawn, as if never sent
        await wait_until(lambda: len(writer.queue) == 2)
        assert await read_exactly(read_end, len(filler)) == filler
        await wait_until(lambda: writer.queue[0].started)
        scopes[0].cancel()  # part of it is in the pipe already: it is finished all the same
        assert await read_exactly(read_end, len(first) + len(third)) == first + third
    assert not writer.queue and writer.error is None
    writer.close()


async def test_writer_batch_goes_out_in_one_piece_at_its_end(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.set_blocking(read_end, False)
    writer = FdWriter(write_end, pollable=True)
    assert writer.begin_batch()
    assert not writer.begin_batch()  # one batch at a time
    for message in (b"1\n", b"2\n", b"3\n"):
        assert writer.write_nowait(message) == 0
    with pytest.raises(BlockingIOError):
        os.read(read_end, 100)  # held until the batch ends
    writer.end_batch()
    assert os.read(read_end, 100) == b"1\n2\n3\n"
    assert writer.write_nowait(b"4\n") == 0  # no batch: written at once
    assert os.read(read_end, 100) == b"4\n"
    writer.close()


async def test_writer_batch_goes_out_eight_messages_at_a_time(pipe: tuple[int, int]) -> None:
    """The peer gets the first answers of a big batch while the rest are made: with 32 in
    flight both processes work at once instead of taking turns (issue 15)."""
    read_end, write_end = pipe
    os.set_blocking(read_end, False)
    writer = FdWriter(write_end, pollable=True)
    assert writer.begin_batch()
    for n in range(7):
        writer.write_nowait(b"%d\n" % n)
    with pytest.raises(BlockingIOError):
        os.read(read_end, 100)  # seven held
    writer.write_nowait(b"7\n")
    assert os.read(read_end, 100) == b"".join(b"%d\n" % n for n in range(8))
    writer.write_nowait(b"8\n")
    with pytest.raises(BlockingIOError):
        os.read(read_end, 100)  # the next group is held again
    writer.end_batch()
    assert os.read(read_end, 100) == b"8\n"
    writer.close()


async def test_writer_reports_a_broken_pipe(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    writer = FdWriter(write_end, pollable=True)
    os.close(read_end)
    assert writer.write_nowait(b"x\n") == 0
    assert isinstance(writer.error, BrokenPipeError)
    writer.close()


async def test_writer_on_a_regular_file_uses_a_thread(tmp_path: Path) -> None:
    path = tmp_path / "out"
    writer = FdWriter(os.open(path, os.O_WRONLY | os.O_CREAT), pollable=False)
    assert not writer.begin_batch()  # never batched: every message goes through the queue
    for message in (b"1\n", b"2\n"):
        left = writer.write_nowait(message)
        assert left == len(message)
        await writer.write_rest(message, left)
    writer.close()
    assert path.read_bytes() == b"1\n2\n"


async def test_reader_on_an_inherited_blocking_pipe_pushes_and_keeps_its_end(
    pipe: tuple[int, int],
) -> None:
    read_end, write_end = pipe
    reader = FdReader(read_end, nonblocking=False)
    assert os.get_blocking(read_end)
    os.write(write_end, b"one")
    with anyio.fail_after(10):
        assert await reader.receive() == b"one"
    pushed: list[bytes] = []

    def push(chunk: bytes) -> bool:
        pushed.append(chunk)
        return len(pushed) < 2  # take two chunks, then stop

    reader.push = push
    async with anyio.create_task_group() as tg:
        tg.start_soon(reader.wait_pushed)
        os.write(write_end, b"two")
        await wait_until(lambda: pushed == [b"two"])
        os.write(write_end, b"three")  # taken, and then the pump stops
    assert pushed == [b"two", b"three"]
    assert os.get_blocking(read_end)  # flags of an inherited fd are left alone
    os.close(write_end)
    for _ in range(2):  # the end of the stream is reported again and again
        with pytest.raises(anyio.EndOfStream), anyio.fail_after(10):
            await reader.receive()
    assert not reader.pushable
    reader.close()
    with pytest.raises(anyio.ClosedResourceError):
        await reader.receive()


async def test_cancelled_receive_loses_nothing(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.set_blocking(read_end, False)
    reader = FdReader(read_end, nonblocking=True)
    with anyio.move_on_after(0.05):
        await reader.receive()  # nothing there: registers the fd and waits, then cancelled
    os.write(write_end, b"kept")
    with anyio.fail_after(10):
        assert await reader.receive() == b"kept"
    reader.close()


async def test_expired_reader_returns_what_is_there_then_ends(pipe: tuple[int, int]) -> None:
    """A server that exited while a process it started holds its stdout open."""
    read_end, write_end = pipe
    os.set_blocking(read_end, False)
    reader = FdReader(read_end, nonblocking=True)
    async with anyio.create_task_group() as tg:
        received: list[bytes] = []

        async def receive() -> None:
            received.append(await reader.receive())

        tg.start_soon(receive)
        os.write(write_end, b"last words")
        await wait_until(lambda: received)
    os.write(write_end, b"tail")
    reader.expire()
    with anyio.fail_after(10):
        assert await reader.receive() == b"tail"
        with pytest.raises(anyio.EndOfStream):
            await reader.receive()  # the write end is still open: expiry ends the wait
    reader.close()


@pytest.mark.parametrize("kind", ["file", "dev-null"])
async def test_reader_on_an_fd_the_loop_cannot_watch(tmp_path: Path, kind: str) -> None:
    if kind == "file":
        path = tmp_path / "in"
        path.write_bytes(b"x" * 100_000)
    else:
        path = Path(os.devnull)
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = FdReader(fd, nonblocking=False)
        data = bytearray()
        with anyio.fail_after(10):
            try:
                while True:
                    data += await reader.receive()
            except anyio.EndOfStream:
                pass
        assert data == (b"x" * 100_000 if kind == "file" else b"")
        assert not reader.pushable
    finally:
        os.close(fd)
