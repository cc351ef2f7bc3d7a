"""The client end of stdio: a spawned server process (2025-11-25 basic/transports.mdx §stdio,
basic/lifecycle.mdx §Shutdown): its environment, its stderr, and the shutdown and kill policy."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING

import anyio
from anyio.abc import AsyncResource

from ..._asyncio import CancelCheck
from ..._lazy import LazyModule
from ..base import MessagePump, TransportClosed
from ._framing import DEFAULT_MAX_MESSAGE_SIZE, LineReader, frame
from .fdio import FdReader, FdWriter, pump_lines
from .spawn import INHERITED_ENV, StartedProcess, start_process

if TYPE_CHECKING:
    import asyncio
else:  # imported at first use, not with mcpbind (issue 15, cold start)
    asyncio = LazyModule("asyncio", globals())

__all__ = ["INHERITED_ENV", "StartedProcess", "StdioClientTransport", "start_process"]


_EXIT_POLL = 0.05  # seconds between checks for the server's exit
_EXIT_DRAIN = 0.1  # after the server exits, how long its remaining output may still arrive
_EXIT_SETTLE = 0.25  # how long to wait for the exit status and stderr tail for an error message
_REASON_TAIL = 2048  # stderr bytes quoted in TransportClosed reasons


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


class StdioClientTransport(AsyncResource, MessagePump):
    """Client end of stdio: owns a spawned server process. Create it with :meth:`spawn`.

    Any task may send; receive from one task at a time.
    """

    send_checks_cancellation = True  # MessagePump's declared feature

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
        # Answers to the server's requests (and refusals) are held back past 1 MiB unread
        # (issue 28 F21); the callers' own requests are not counted: they wait for them.
        self._stdin = FdWriter(stdin, pollable=True, reactive_only=True)
        self._stdout = FdReader(stdout, nonblocking=True)
        self._stderr = FdReader(stderr, nonblocking=True)
        self._reader = LineReader(self._stdout, max_message_size)
        self._stderr_sink = stderr_sink
        self._close_timeout = close_timeout
        self._terminate_timeout = terminate_timeout
        self._close_lock = anyio.Lock()
        self._closed = False
        self._stderr_done = anyio.Event()
        self._check_cancelled = CancelCheck()
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop it runs on, once spawned

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
        started: StartedProcess | None = None,
    ) -> AsyncIterator[StdioClientTransport]:
        """Run ``command *args`` as an MCP server; yield its transport, shut it down on exit.

        ``async with StdioClientTransport.spawn("uvx", ["some-server"]) as transport: ...``

        The server sees only the :data:`INHERITED_ENV` variables of this process plus
        ``env``, and runs in a new session so shutdown reaches every process it started.
        Its stderr is read continuously (a chatty server never blocks): the last
        ``stderr_tail_size`` bytes are kept in :attr:`stderr_tail`, and ``on_stderr``,
        if given, is called with each line (an exception from it ends the context).
        See :meth:`aclose` for the shutdown steps. ``started``: that process, already
        started by :func:`start_process` (``command``, ``args``, ``env`` and ``cwd`` were its).
        """
        if started is None:
            started = start_process(command, args, env=env, cwd=cwd)
        process, stdin, stdout, stderr = started
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
        transport._loop = asyncio.get_running_loop()
        # The helper tasks run in a task group, but the caller's body must not: an exception
        # from the body reaches the caller as itself, not wrapped in an ExceptionGroup.
        tg = anyio.create_task_group()
        await tg.__aenter__()
        try:
            tg.start_soon(transport._drain_stderr)
            tg.start_soon(transport._watch_exit)
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
        data = frame(message)
        if self._check_cancelled.pending(self._loop):
            await self._check_cancelled()
        if self._closed:
            raise TransportClosed("transport closed")
        stdin = self._stdin
        if left := stdin.write_nowait(data):
            await stdin.write_rest(data, left)
        if stdin.error is None and not stdin.closed:
            return
        raise await self._closed_error() from stdin.error

    async def pump(self, handler: Callable[[bytes], bool]) -> None:
        """Hand each message from the server to ``handler`` until it returns ``False``; see
        :meth:`StdioServerTransport.pump`."""
        await pump_lines(
            self._reader,
            self._stdout,
            self.receive,
            lambda: self._closed,
            handler,
            _no_batch,
            self._after_read,
            self._stdin,
        )

    def _after_read(self, count: int) -> None:
        # Several responses in one read woke several callers, who will send their next
        # requests in the coming loop iteration: collect those and write them at once (a
        # callback queued behind the callers). A lone response (sequential calls) is not delayed.
        if count > 1 and not self._closed and self._stdin.begin_batch():
            asyncio.get_running_loop().call_soon(self._stdin.end_batch)

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
        for reader in (self._stdout, self._stderr):
            reader.close()
            os.close(reader.fd)

    def _signal_group(self, sig: signal.Signals) -> None:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, sig)

    async def _wait_exit(self) -> None:
        # Polled (waitpid with WNOHANG), so a grandchild holding the pipes open cannot delay it;
        # the first polls come quickly (a server usually exits within milliseconds of EOF),
        # then every _EXIT_POLL. The end of its stderr (the process exiting closes it) wakes
        # the wait at once and polls restart quickly, instead of up to _EXIT_POLL later.
        delay = 0.002
        stderr_open = True
        while self._process.poll() is None:
            if stderr_open and self._stderr_done.is_set():
                stderr_open, delay = False, 0.001
            if stderr_open:
                with anyio.move_on_after(delay):
                    await self._stderr_done.wait()
            else:
                await anyio.sleep(delay)
            delay = min(delay * 2, _EXIT_POLL)

    async def _watch_exit(self) -> None:
        """Once the server exits, let pending output drain briefly, then fail receive()."""
        await self._exit_signalled()
        await self._wait_exit()  # reaps it: at once after a signalled exit
        await anyio.sleep(_EXIT_DRAIN)
        self._stdout.expire()

    async def _exit_signalled(self) -> None:
        """Return once the server has exited, told by the kernel: by a pidfd where one can be
        opened (Linux 5.3+), else by a thread blocked in ``waitid`` (:func:`_exited`; macOS,
        or a Linux that refuses pidfds, as valgrind's does). The session-long watch then wakes
        no loop every ``_EXIT_POLL`` (under a profiler those polls are charged to each call, as
        many as the calls took time). Where neither exists it returns at once and
        :meth:`_wait_exit` polls. Started before anything awaits, while only this transport
        could have reaped the process."""
        pid = self._process.pid
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            try:
                fd = pidfd_open(pid)
            except OSError:  # not supported here, or already reaped: the thread tells
                pass
            else:
                try:
                    await anyio.wait_readable(fd)
                finally:
                    os.close(fd)
                return
        await _exited(pid)

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


async def _exited(pid: int) -> None:
    """Return once the child ``pid`` has exited (or is not ours to wait for): a daemon thread
    waits in ``waitid`` with ``WNOWAIT``, which leaves the exit status for ``Popen`` to reap,
    and wakes the loop once. Returns at once where ``waitid`` is missing."""
    waitid = getattr(os, "waitid", None)
    if waitid is None:
        return
    loop = asyncio.get_running_loop()
    exited = asyncio.Event()

    def wait() -> None:
        with suppress(OSError):  # ChildProcessError: reaped already
            waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        with suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(exited.set)

    threading.Thread(target=wait, name=f"mcpbind-exit-{pid}", daemon=True).start()
    await exited.wait()


def _no_batch() -> None:
    pass
