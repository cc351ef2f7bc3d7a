"""Reading a child process's output line by line with a deadline (a hang fails the test
instead of blocking it)."""

from __future__ import annotations

import os
import select
import time


class LineReader:
    """Lines from ``fd`` (unbuffered: ``os.read``), each within ``timeout`` seconds."""

    def __init__(self, fd: int, timeout: float = 20.0) -> None:
        self.fd = fd
        self.timeout = timeout
        self._buffer = b""

    def readline(self) -> bytes:
        """The next line (with its newline); ``b""`` at EOF; ``TimeoutError`` past the deadline."""
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no line within {self.timeout}s (have {self._buffer[:200]!r})")
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                line, self._buffer = self._buffer, b""
                return line
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line + b"\n"

    @property
    def has_line(self) -> bool:
        """A whole line is buffered (``readline`` returns it without reading)."""
        return b"\n" in self._buffer

    def rest(self) -> list[bytes]:
        """Every line up to EOF."""
        lines = []
        while line := self.readline():
            lines.append(line)
        return lines
