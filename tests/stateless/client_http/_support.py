"""Start a server of serve.py on 127.0.0.1 (uvicorn) and always stop it by its PID."""

from __future__ import annotations

import json
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

    @property
    def url(self) -> str:
        return self.base + "/mcp"

    def log(self) -> list[dict[str, Any]]:
        """Every request the mock server saw (headers lowercased, JSON body)."""
        entries: list[dict[str, Any]] = json.loads(httpx2.get(self.base + "/admin/log").content)
        return entries

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [e for e in self.log() if e.get("body", {}).get("method") == method]

    def clear(self) -> None:
        httpx2.post(self.base + "/admin/clear")


@contextmanager
def server(kind: str) -> Iterator[Running]:
    with spawn_server(SERVE, kind) as (process, base):
        yield Running(process, base)
