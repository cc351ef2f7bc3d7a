"""stdio client and server transports across a real process boundary.

Spec: 2025-11-25 basic/transports.mdx §stdio and basic/lifecycle.mdx §Shutdown.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind.transports import (
    INHERITED_ENV,
    MessagePump,
    MessageTooLarge,
    StdioClientTransport,
    TransportClosed,
)

pytestmark = pytest.mark.anyio

ECHO_SERVER = str(Path(__file__).with_name("echo_server.py"))


def echo_server(*args: str, **options: Any) -> AbstractAsyncContextManager[StdioClientTransport]:
    return StdioClientTransport.spawn(sys.executable, [ECHO_SERVER, *args], **options)


async def ask(transport: StdioClientTransport, message: bytes) -> bytes:
    with anyio.fail_after(10):
        await transport.send(message)
        return await transport.receive()


def gone(pid: int) -> bool:
    """True once ``pid`` is dead: no such process, or a zombie awaiting its reaper."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def assert_gone_soon(pid: int) -> None:
    """A killed process vanishes a moment later; allow it two seconds."""
    for _ in range(200):
        if gone(pid):
            return
        await anyio.sleep(0.01)
    raise AssertionError(f"process {pid} is still running")


def unread(fd: int) -> int:
    """Bytes waiting in the pipe ``fd``."""
    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])


async def test_round_trip_preserves_bytes_exactly() -> None:
    """2025-11-25 basic/transports.mdx §stdio: the server reads messages from stdin and writes them to stdout."""
    async with echo_server() as transport:
        for message in (
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
            b'{"s":"\xc3\xa9\xe2\x82\xac"}',
        ):
            assert await ask(transport, message) == message
        invalid_utf8 = b'{"s":"\xff\xfe\xc3"}'
        assert await ask(transport, invalid_utf8) == invalid_utf8
        assert transport.returncode is None
        assert transport.pid > 0


async def test_concurrent_sends_are_never_interleaved() -> None:
    """2025-11-25 basic/transports.mdx §stdio: messages are delimited by newlines; concurrent writers must not tear them."""
    messages = {b'{"id":%d,"pad":"%s"}' % (i, b"p" * 100_000) for i in range(20)}
    async with echo_server() as transport:
        async with anyio.create_task_group() as tg:
            for message in messages:
                tg.start_soon(transport.send, message)
            with anyio.fail_after(10):
                received = {await transport.receive() for _ in messages}
        assert received == messages


async def test_declared_send_checks_cancellation_holds() -> None:
    """The optional feature the client end declares (``MessagePump.send_checks_cancellation``,
    off by default): ``send`` from a cancelled caller raises before writing anything, so the
    connection skips its own check per request."""
    assert MessagePump.send_checks_cancellation is False
    assert StdioClientTransport.send_checks_cancellation is True
    async with echo_server() as transport:
        with anyio.CancelScope() as scope:
            scope.cancel()
            await transport.send(b'{"id":"never sent"}')
            raise AssertionError("send went on in a cancelled scope")  # pragma: no cover
        assert scope.cancelled_caught
        assert await ask(transport, b'{"id":"sent"}') == b'{"id":"sent"}'


async def test_embedded_newline_is_rejected_before_sending() -> None:
    """2025-11-25 basic/transports.mdx §stdio: messages MUST NOT contain embedded newlines."""
    async with echo_server() as transport:
        with pytest.raises(ValueError, match="newline"):
            await transport.send(b'{"a":\n1}')
        assert await ask(transport, b"{}") == b"{}"


async def test_stray_stdout_output_in_server_does_not_corrupt_wire() -> None:
    """2025-11-25 basic/transports.mdx §stdio: the server MUST NOT write anything to stdout that is not an MCP message.

    print(), a subprocess's ``echo`` and raw writes to fd 1 all land on stderr instead.
    """
    async with echo_server() as transport:
        assert await ask(transport, b"!noise") == b"noise done"
        assert await ask(transport, b"[1]") == b"[1]"
    tail = transport.stderr_tail
    for garbage in (b"garbage from print()", b"garbage from echo", b"garbage from fd 1"):
        assert garbage in tail


async def test_server_reads_stdin_from_a_regular_file_or_dev_null(tmp_path: Path) -> None:
    """Such stdin cannot be polled; the server must still read it to the end and exit."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b'{"a":1}\n\n{"b":2}')

    def serve(stdin: Path) -> subprocess.CompletedProcess[bytes]:
        with stdin.open("rb") as file:
            return subprocess.run(
                [sys.executable, ECHO_SERVER], stdin=file, capture_output=True, timeout=10
            )

    answered = await anyio.to_thread.run_sync(serve, requests)
    assert (answered.stdout, answered.returncode) == (b'{"a":1}\n{"b":2}\n', 0)
    silent = await anyio.to_thread.run_sync(serve, Path(os.devnull))
    assert (silent.stdout, silent.returncode) == (b"", 0)


async def test_server_copes_with_non_blocking_pipes() -> None:
    """Some clients hand the server non-blocking pipes; large replies must still arrive whole."""

    def serve() -> tuple[bytes, int]:
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        os.set_blocking(stdin_r, False)
        os.set_blocking(stdout_w, False)
        command = [sys.executable, ECHO_SERVER]
        with subprocess.Popen(command, stdin=stdin_r, stdout=stdout_w) as server:
            os.close(stdin_r)
            os.close(stdout_w)
            # A first message answered: the server is up and then polls an empty
            # non-blocking stdin (the reply is waited for, with a bound, not guessed).
            os.write(stdin_w, b'{"a":1}\n')
            assert select.select([stdout_r], [], [], 10)[0], "no echo within 10 s"
            assert os.read(stdout_r, 8) == b'{"a":1}\n'
            os.write(stdin_w, b"!big 1000000\n")
            os.close(stdin_w)
            deadline = time.monotonic() + 10
            while unread(stdout_r) < 65536 and time.monotonic() < deadline:
                time.sleep(0.01)  # until the server fills the pipe and meets EAGAIN
            with open(stdout_r, "rb") as stdout:
                data = stdout.read()
        return data, server.returncode

    data, returncode = await anyio.to_thread.run_sync(serve)
    assert data == b"x" * 1_000_000 + b"\n"
    assert returncode == 0


async def test_server_close_wakes_receive_and_restores_stdout() -> None:
    """Closing the server transport fails a pending receive and gives fd 1 back."""
    async with echo_server() as transport:
        assert await ask(transport, b"!restore") == b"closing"
        with anyio.fail_after(5):
            restored = b"stdout restored; pending receive raised: transport closed"
            assert await transport.receive() == restored
            with pytest.raises(TransportClosed, match="exited with code 0"):
                await transport.receive()


async def test_stderr_flood_does_not_block_the_server() -> None:
    """2025-11-25 basic/transports.mdx §stdio: the client MAY capture stderr; it is drained so the server never stalls."""
    lines: list[str] = []
    async with echo_server(on_stderr=lines.append, stderr_tail_size=4096) as transport:
        started = time.perf_counter()
        assert await ask(transport, b"!stderr 20000000") == b"stderr done"
        assert time.perf_counter() - started < 5
    assert len(transport.stderr_tail) == 4096
    assert transport.stderr_tail.endswith(b"e" * 99 + b"\n")
    assert len(lines) == 200_000
    assert lines[-1] == "e" * 99


async def test_oversized_messages_are_dropped_on_both_sides() -> None:
    """Each side enforces its own limit and keeps working afterwards."""
    async with echo_server("1000", max_message_size=2000) as transport:
        assert await ask(transport, b"s" * 1500) == b'{"too_large": 1500}'
        with pytest.raises(MessageTooLarge) as info:
            await ask(transport, b"!big 3000")
        assert info.value.seen == 3000
        assert await ask(transport, b"{}") == b"{}"


async def test_graceful_shutdown_closes_stdin_and_reaps() -> None:
    """2025-11-25 basic/lifecycle.mdx §Shutdown: the client first closes the server's stdin; the server exits on EOF."""
    async with echo_server(close_timeout=30) as transport:
        assert await ask(transport, b"{}") == b"{}"
        started = time.perf_counter()
    assert time.perf_counter() - started < 10  # on EOF, not at the 30 s escalation
    assert transport.returncode == 0
    with pytest.raises(TransportClosed, match="transport closed"):
        await transport.send(b"{}")
    with pytest.raises(TransportClosed, match="transport closed"):
        await transport.receive()
    await transport.aclose()  # idempotent


async def test_shutdown_escalates_to_sigterm() -> None:
    """2025-11-25 basic/lifecycle.mdx §Shutdown: SIGTERM if the server does not exit after stdin is closed."""
    script = "import time\nwhile True: time.sleep(1)"
    async with StdioClientTransport.spawn(
        sys.executable, ["-c", script], close_timeout=0.2
    ) as transport:
        pass
    assert transport.returncode == -signal.SIGTERM


async def test_shutdown_escalates_to_sigkill_for_the_whole_group() -> None:
    """2025-11-25 basic/lifecycle.mdx §Shutdown: SIGKILL if the server ignores SIGTERM; its process group dies with it."""
    async with echo_server(close_timeout=0.2, terminate_timeout=0.2) as transport:
        grandchild = int(await ask(transport, b"!grandchild"))
        assert await ask(transport, b"!stubborn") == b"stubborn"
        started = time.perf_counter()
    # The two 0.2 s grace periods are the feature; the upper margin holds on a loaded machine.
    assert 0.4 <= time.perf_counter() - started < 5
    assert transport.returncode == -signal.SIGKILL
    await assert_gone_soon(grandchild)


async def test_processes_left_in_group_are_killed_after_clean_exit() -> None:
    """2025-11-25 basic/lifecycle.mdx §Shutdown: after the server exits, tools it started do not outlive it."""
    async with echo_server() as transport:
        grandchild = int(await ask(transport, b"!grandchild"))
    assert transport.returncode == 0
    await assert_gone_soon(grandchild)


async def test_server_exit_fails_receive_with_status_and_stderr() -> None:
    """2025-11-25 basic/lifecycle.mdx §Shutdown: the server MAY exit on its own; the reason says how and why."""
    async with echo_server() as transport:
        assert await ask(transport, b"{}") == b"{}"  # started: the 1 s below is the exit's alone
        await transport.send(b"!exit 3")
        with anyio.fail_after(1), pytest.raises(TransportClosed) as info:
            await transport.receive()
        assert "exited with code 3" in str(info.value)
        assert "fatal: asked to exit" in str(info.value)
        with pytest.raises(TransportClosed, match="exited with code 3"):
            await transport.send(b"{}")
    assert transport.returncode == 3


async def test_killed_server_fails_pending_receive_within_a_second() -> None:
    """A crashed server fails the pending receive at once, so calls need not time out."""
    async with echo_server() as transport, anyio.create_task_group() as tg:

        async def kill() -> None:
            await anyio.sleep(0.1)
            os.kill(transport.pid, signal.SIGKILL)

        tg.start_soon(kill)
        # At once, not after a call's timeout: a margin that holds on a loaded machine.
        with anyio.fail_after(10), pytest.raises(TransportClosed, match="SIGKILL"):
            await transport.receive()


async def test_exit_detected_even_if_a_grandchild_holds_stdout_open() -> None:
    """The server's death is noticed without waiting for its pipes to close."""
    script = "sleep 30 & echo '{\"ready\":1}'; exec sleep 31"
    async with StdioClientTransport.spawn("sh", ["-c", script]) as transport:
        assert await transport.receive() == b'{"ready":1}'
        os.kill(transport.pid, signal.SIGKILL)
        started = time.perf_counter()
        with anyio.fail_after(10), pytest.raises(TransportClosed, match="SIGKILL"):
            await transport.receive()
        assert time.perf_counter() - started < 10  # not the grandchild's 30 s


@pytest.mark.parametrize("told_by", ["pidfd", "waitid"])
async def test_an_idle_server_is_watched_without_polling(
    monkeypatch: pytest.MonkeyPatch, told_by: str
) -> None:
    """The kernel tells of the server's exit, by a pidfd or, where none can be opened (macOS,
    valgrind), by a thread blocked in waitid: an idle session checks nothing every 50 ms
    (such wake-ups cost every open session CPU, and a profiler charges them to each call),
    and the exit is still noticed at once, with its status (as reaped by Popen)."""
    if not hasattr(os, "pidfd_open" if told_by == "pidfd" else "waitid"):
        pytest.skip(f"no {told_by} here")
    if told_by == "waitid":
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    polls: list[int] = []
    poll = subprocess.Popen.poll

    def counted(self: subprocess.Popen[bytes]) -> int | None:
        polls.append(self.pid)
        return poll(self)

    monkeypatch.setattr(subprocess.Popen, "poll", counted)
    async with echo_server() as transport:
        assert await ask(transport, b'{"idle":1}') == b'{"idle":1}'
        await anyio.sleep(0.5)  # ten poll periods
        assert transport.pid not in polls
        os.kill(transport.pid, signal.SIGKILL)
        with anyio.fail_after(10), pytest.raises(TransportClosed, match="SIGKILL"):
            await transport.receive()
        assert transport.returncode == -signal.SIGKILL


async def test_environment_is_an_allowlist_plus_explicit_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only allowlisted variables leak into the server; ``env`` adds and overrides."""
    monkeypatch.setenv("MCPBIND_TEST_SECRET", "leak")
    monkeypatch.setenv("HOME", "/home/test-home")
    async with echo_server(env={"MCP_EXTRA": "1", "HOME": "/override"}) as transport:
        child_env = json.loads(await ask(transport, b"!env"))
    allowed = {name for name in INHERITED_ENV if name in os.environ} | {"MCP_EXTRA"}
    # LC_CTYPE: Python itself sets it in a C locale (PEP 538).
    assert set(child_env) - {"LC_CTYPE"} == allowed
    assert child_env["MCP_EXTRA"] == "1"
    assert child_env["HOME"] == "/override"


async def test_cwd_option(tmp_path: Path) -> None:
    """The server starts in the requested working directory."""
    async with echo_server(cwd=tmp_path) as transport:
        assert await ask(transport, b"!cwd") == str(tmp_path).encode()


async def test_missing_command_raises_oserror() -> None:
    """A server that cannot start is reported as the OS error, not as a closed transport."""
    with pytest.raises(FileNotFoundError):
        async with StdioClientTransport.spawn("/nonexistent/mcp-server"):
            pass
