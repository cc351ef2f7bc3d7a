"""Newline framing of the stdio transport (2025-11-25 basic/transports.mdx §stdio)."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Iterable

import anyio
import pytest

from mcpbind.transports import DEFAULT_MAX_MESSAGE_SIZE, MessageTooLarge
from mcpbind.transports.stdio import LineReader

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """Framing is the same on any loop (the fd tests run on both): asyncio only, so the memory
    bound of the 64 MiB test is not also a bound on uvloop's own pipe buffering."""
    return "asyncio"


MiB = 1024 * 1024


class Chunks:
    """A byte source that yields the given chunks, then ends."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)

    async def receive(self) -> bytes:
        await anyio.lowlevel.checkpoint()
        try:
            return next(self._chunks)
        except StopIteration:
            raise anyio.EndOfStream from None


async def read_all(reader: LineReader) -> list[bytes]:
    lines = []
    while True:
        try:
            lines.append(await reader.receive())
        except anyio.EndOfStream:
            return lines


async def test_lines_split_across_and_within_chunks() -> None:
    """2025-11-25 basic/transports.mdx §stdio: messages are delimited by newlines."""
    data = b'{"id":1}\n{"id":2}\n{"id":3}\n'
    for size in (1, 2, 5, len(data)):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        lines = await read_all(LineReader(Chunks(chunks)))
        assert lines == [b'{"id":1}', b'{"id":2}', b'{"id":3}']


async def test_crlf_endings_and_empty_lines_are_tolerated() -> None:
    """2025-11-25 basic/transports.mdx §stdio: lenient about line endings; blank lines are not messages."""
    reader = LineReader(Chunks([b"\n\r\n{}\r\n\n\n[1]\n\r\n"]))
    assert await read_all(reader) == [b"{}", b"[1]"]


def test_pushed_chunks_keep_their_order_whole_or_split() -> None:
    """The push path (``feed`` + ``buffered_line``): a chunk of whole lines is split at once,
    one ending mid-line is buffered; either way the lines come out in order, CRLF and blank
    lines handled alike, and lines not yet taken stay ahead of later bytes."""
    reader = LineReader(Chunks([]))
    reader.feed(b'{"id":1}\r\n\n{"id":2}\n')  # whole lines
    assert reader.buffered_line() == b'{"id":1}'
    reader.feed(b'{"id":3}\n{"id"')  # ends mid-line, while {"id":2} is still untaken
    reader.feed(b":4}\n")
    reader.feed(b'{"id":5}\n')
    taken = []
    while (line := reader.buffered_line()) is not None:
        taken.append(line)
    assert taken == [b'{"id":2}', b'{"id":3}', b'{"id":4}', b'{"id":5}']


async def test_invalid_utf8_passes_through_undecoded() -> None:
    """2025-11-25 basic/transports.mdx: messages MUST be UTF-8, but the protocol layer,
    not the transport, answers a violation (with a parse error), so bytes pass as-is."""
    raw = b'{"x":"\xff\xfe\xc3"}'
    assert await read_all(LineReader(Chunks([raw + b"\n", b"\x80\n"]))) == [raw, b"\x80"]


async def test_final_line_without_newline_is_delivered() -> None:
    """A peer that exits right after its last message loses nothing."""
    assert await read_all(LineReader(Chunks([b"{}\n", b"[]"]))) == [b"{}", b"[]"]


async def test_end_of_stream_is_repeatable() -> None:
    """Every receive after the end keeps reporting the end."""
    reader = LineReader(Chunks([]))
    for _ in range(2):
        with pytest.raises(anyio.EndOfStream):
            await reader.receive()


async def test_limit_is_inclusive_and_excludes_line_ending() -> None:
    """A message of exactly the limit passes, even with a CRLF ending; one more byte fails."""
    reader = LineReader(Chunks([b"a" * 8 + b"\r\n", b"b" * 8 + b"\n", b"c" * 9 + b"\n"]), 8)
    assert await reader.receive() == b"a" * 8
    assert await reader.receive() == b"b" * 8
    with pytest.raises(MessageTooLarge) as info:
        await reader.receive()
    assert (info.value.limit, info.value.seen) == (8, 9)


async def test_oversized_line_raises_once_then_reader_recovers() -> None:
    """The oversized line is skipped up to its newline; the next message is intact."""
    chunks = [b"{}\n", b"x" * 100, b"x" * 100, b"x" * 50 + b"\n[1]\n"]
    reader = LineReader(Chunks(chunks), max_size=64)
    assert await reader.receive() == b"{}"
    with pytest.raises(MessageTooLarge) as info:
        await reader.receive()
    assert info.value.seen == 250
    assert await reader.receive() == b"[1]"
    with pytest.raises(anyio.EndOfStream):
        await reader.receive()


async def test_oversized_unterminated_line_at_end_of_stream() -> None:
    """An oversized last line is still reported once before the end."""
    reader = LineReader(Chunks([b"y" * 30, b"y" * 30]), max_size=10)
    with pytest.raises(MessageTooLarge) as info:
        await reader.receive()
    assert info.value.seen == 60
    with pytest.raises(anyio.EndOfStream):
        await reader.receive()


async def test_cancelled_receive_loses_no_bytes() -> None:
    """Timeouts around receive() must not tear a message that is half read."""
    send, receive = anyio.create_memory_object_stream[bytes](10)
    with send, receive:
        reader = LineReader(receive)
        await send.send(b'{"half":')
        with anyio.move_on_after(0.05) as scope:
            await reader.receive()
        assert scope.cancelled_caught
        await send.send(b'"done"}\n')
        assert await reader.receive() == b'{"half":"done"}'


async def test_long_line_in_small_chunks_takes_linear_time() -> None:
    """Each chunk is scanned once; rescanning the whole buffer would take minutes."""
    chunk = b"z" * 1024
    chunks = [chunk] * (15 * MiB // len(chunk)) + [b"\n"]
    reader = LineReader(Chunks(chunks))
    started = time.perf_counter()
    line = await reader.receive()
    assert len(line) == 15 * MiB
    assert time.perf_counter() - started < 10  # linear: well under a second; loaded-machine margin


@pytest.mark.parametrize("limit", [MiB, DEFAULT_MAX_MESSAGE_SIZE])
async def test_64_mib_line_through_a_pipe_uses_bounded_memory(limit: int) -> None:
    """A peer streaming an endless line costs about the limit in memory, not the line."""
    script = "head -c 67108864 /dev/zero; printf '\\n{\"after\":true}\\n'"
    async with await anyio.open_process(["sh", "-c", script], stderr=None) as process:
        assert process.stdout is not None
        reader = LineReader(process.stdout, limit)
        tracemalloc.start()
        try:
            with pytest.raises(MessageTooLarge) as info:
                await reader.receive()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert (info.value.limit, info.value.seen) == (limit, 64 * MiB)
        assert peak < 1.25 * limit + MiB  # the buffer may over-allocate a little
        assert await reader.receive() == b'{"after":true}'
