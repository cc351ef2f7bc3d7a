"""Start a test server process (serve.py) and always stop it by its PID."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from support.live_server import spawn_server

SERVE = str(Path(__file__).resolve().parent / "serve.py")


@dataclass
class Running:
    process: subprocess.Popen[bytes]
    base: str
    kind: str = ""

    @property
    def url(self) -> str:
        return self.base + "/mcp"

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def log(self) -> list[dict[str, Any]]:
        """Every request a logging server (fault, mock) saw (headers lowercased, JSON body)."""
        entries: list[dict[str, Any]] = json.loads(httpx2.get(self.base + "/admin/log").content)
        return entries

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [e for e in self.log() if e.get("body", {}).get("method") == method]

    def clear(self) -> None:
        httpx2.post(self.base + "/admin/clear")


@contextmanager
def server(kind: str, port: int | None = None) -> Iterator[Running]:
    """``python serve.py KIND``, on ``port`` if given (to restart a server where it was)."""
    args = (kind,) if port is None else (kind, str(port))
    with spawn_server(SERVE, *args) as (process, base):
        yield Running(process, base, kind)
