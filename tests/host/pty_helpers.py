"""Driving ``mcpbind host`` in a pseudo-terminal, as a person at a keyboard would."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

_ANSI = re.compile(rb"\x1b(?:\[[0-9;?]*[A-Za-z]|[()][0-9A-Za-z]|[=>])")


def screen_text(seen: bytearray) -> bytes:
    """What was written to the terminal without its escape sequences (prompt_toolkit draws
    the prompt with them)."""
    return _ANSI.sub(b"", bytes(seen))


def read_until(fd: int, needle: bytes, seen: bytearray, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while needle not in screen_text(seen):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{needle!r} not seen; got:\n{seen.decode(errors='replace')}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                chunk = b""
            if not chunk:
                raise AssertionError(f"EOF before {needle!r}:\n{seen.decode(errors='replace')}")
            seen.extend(chunk)


def wait_exit(pid: int, fd: int, timeout: float = 20.0) -> int:
    """Wait for the child, draining its terminal output so it never blocks writing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            with contextlib.suppress(OSError):
                os.read(fd, 4096)
    raise AssertionError("the host did not exit")


def spawn_host(config: Path, history: Path | None = None) -> tuple[int, int]:
    """``mcpbind host --config CONFIG`` in a new pseudo-terminal: (pid, terminal fd). The
    terminal is an xterm that does not answer cursor position requests (prompt_toolkit would
    wait for the answer), with the shell's history in ``history``."""
    argv = [sys.executable, "-m", "mcpbind.cli", "host", "--config", str(config)]
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "200"}
    env["MCPBIND_HOST_HISTORY"] = str(history or config.with_name("history"))
    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes the host
        # Ctrl-C is SIGINT, which a test run started as a background job ignores (and its
        # children inherit that): the host must get the terminal's default.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execve(sys.executable, argv, env)
    return pid, fd


class HostTerminal:
    """``mcpbind host`` in a pseudo-terminal: ``send`` keys, ``expect`` screen text (each
    expectation consumes the output up to its match, so the next one waits for new output)."""

    def __init__(self, config: Path, history: Path) -> None:
        self.pid, self.fd = spawn_host(config, history)
        self.seen = bytearray()

    def send(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def expect(self, needle: bytes, timeout: float = 30.0) -> bytes:
        """Wait for ``needle``; the screen text before it."""
        read_until(self.fd, needle, self.seen, timeout)
        text = screen_text(self.seen)
        before, _, after = text.partition(needle)
        self.seen[:] = after
        return before

    def quit(self) -> int:
        self.send(b"quit\r")
        return self.wait()

    def wait(self) -> int:
        """Wait for the host to exit (after ``quit`` or Ctrl-D); its exit code."""
        status = wait_exit(self.pid, self.fd)
        self.pid = 0
        return os.waitstatus_to_exitcode(status)

    def close(self) -> None:
        if self.pid:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        os.close(self.fd)
