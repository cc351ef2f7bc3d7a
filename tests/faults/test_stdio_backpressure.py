"""Issue 28 F21: a client that sends requests but does not read the answers cannot make a
stdio server buffer them without limit. Past ``write_high_water`` bytes (1 MiB) waiting
for the client, the server stops reading stdin (the client's writes block: the pipe is
its bound), and reads again once the client drains stdout; nothing is lost."""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from support.live_server import stop_process
from support.pipes import LineReader

from mcpbind import LATEST_HANDSHAKE, Client
from mcpbind.transports import StdioClientTransport

SERVER = Path(__file__).with_name("blob_server.py")
CALLS = 1000
ANSWER = 64 * 1024  # bytes of text per answer: CALLS of them are 64 MB unread
STALL = 5.0  # seconds without the server reading: it stopped (the feature is a stop)


def _rss_mb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS")


def _request(rid: int) -> bytes:
    arguments = {"n": ANSWER, "pad": "p" * 2000}  # 2 KB requests: 2 MB in all
    message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call"}
    message["params"] = {"name": "blob", "arguments": arguments}
    return json.dumps(message).encode() + b"\n"


def test_server_stops_reading_while_answers_are_unread_then_resumes() -> None:
    process = subprocess.Popen(
        [sys.executable, str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        reader = LineReader(process.stdout.fileno(), timeout=60)
        init = {
            "protocolVersion": LATEST_HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        process.stdin.write(
            b"%s\n%s\n" % (json.dumps(hello).encode(), json.dumps(initialized).encode())
        )
        process.stdin.flush()
        assert json.loads(reader.readline())["id"] == 0
        before = _rss_mb(process.pid)

        data = b"".join(_request(rid) for rid in range(1, CALLS + 1))
        fd = process.stdin.fileno()
        os.set_blocking(fd, False)
        sent = 0
        while sent < len(data):  # write without reading a single answer
            if not select.select([], [fd], [], STALL)[1]:
                break  # the server stopped reading
            try:
                sent += os.write(fd, data[sent : sent + 65536])
            except BlockingIOError:
                continue
        grown = _rss_mb(process.pid) - before
        assert sent < len(data), "the server read every request though no answer was read"
        assert grown < 48, f"the server holds {grown} MB more for an unread client"

        answered: set[int] = set()
        out = process.stdout.fileno()
        while len(answered) < CALLS:  # now drain: the server reads again, nothing is lost
            want = [fd] if sent < len(data) else []
            wait = 0 if reader.has_line else 60
            readable, writable, _ = select.select([out], want, [], wait)
            assert readable or writable or reader.has_line, "no progress after the drain"
            if writable:
                with contextlib.suppress(BlockingIOError):
                    sent += os.write(fd, data[sent : sent + 65536])
            if readable or reader.has_line:
                answer = json.loads(reader.readline())
                assert len(answer["result"]["content"][0]["text"]) == ANSWER
                answered.add(answer["id"])
        assert answered == set(range(1, CALLS + 1))
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    finally:
        stop_process(process)


PINGER = Path(__file__).with_name("pinging_server.py")


@pytest.mark.anyio
async def test_client_stops_reading_a_server_that_does_not_read_its_answers() -> None:
    """The client side: a server that floods requests (60000 pings) and never reads the
    answers gets no more read from it once 1 MiB of answers wait (the callers' own requests
    are not counted: they wait for them), so the client's memory stays bounded; its
    pings stop getting through (it reports each thousand written on stderr)."""
    lines, progress = anyio.create_memory_object_stream[str](1000)
    async with (
        lines,
        progress,
        StdioClientTransport.spawn(
            sys.executable, [str(PINGER)], on_stderr=lines.send_nowait, close_timeout=0.5
        ) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE),
    ):
        last = ""
        while True:
            with anyio.move_on_after(STALL) as waited:
                last = await progress.receive()
            if waited.cancelled_caught:
                break  # no ping written for STALL seconds: the client stopped reading
            assert last.strip() != "done", "the client read every ping though none was answered"
        assert last.startswith("sent ")
        assert int(last.split()[1]) < 60_000
