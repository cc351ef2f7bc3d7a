"""Starting a stdio server process, synchronously (2025-11-25 basic/transports.mdx §stdio):
its argv, its environment and our non-blocking ends of its pipes.

Apart from :mod:`.process` (the transport that talks to the process on the event loop) so that
the CLI starts a server having imported only this and ``subprocess``: anyio and the rest of the
client's end are imported while the server starts (issue 15, cold start of ``mcpbind ls``).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import NamedTuple

__all__ = ["INHERITED_ENV", "StartedProcess", "start_process"]

INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""The only variables a spawned server inherits, so secrets in our environment stay here."""


class StartedProcess(NamedTuple):
    """A server process started before the event loop (:func:`start_process`), and our
    non-blocking ends of its stdio pipes, for ``StdioClientTransport.spawn(started=...)``."""

    process: subprocess.Popen[bytes]
    stdin: int
    stdout: int
    stderr: int

    def discard(self) -> None:
        """Kill a started process no transport took over, and close our pipe ends."""
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for fd in (self.stdin, self.stdout, self.stderr):
            os.close(fd)


def start_process(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> StartedProcess:
    """Start ``command *args`` as :meth:`StdioClientTransport.spawn` would, synchronously: a
    caller that has no event loop yet (the CLI) starts the server first, and the server
    starts while the caller imports the rest (issue 15, cold start of ``mcpbind ls``)."""
    inherited = {name: os.environ[name] for name in INHERITED_ENV if name in os.environ}
    return StartedProcess(*_open_process([command, *args], {**inherited, **(env or {})}, cwd))


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
