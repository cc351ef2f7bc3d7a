"""A stdio server whose handlers of every kind are still running when the client closes
stdin right after its requests (issue 28, EOF): each takes ``DELAY`` seconds; ``forever``
outlasts the EOF grace."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # this checkout's code, whatever is installed
    ROOT = Path(__file__).resolve().parents[2]
    sys.path[:0] = [str(ROOT / "runtime"), str(ROOT / "generated")]

from mcpbind import Server, serve_stdio
from mcpbind.server.tasks import TaskContext, Tasks

DELAY = 0.3

server = Server("eof", version="1.0.0")
Tasks(server, poll_interval_ms=20)


@server.tool()
def def_tool(x: int) -> int:
    time.sleep(DELAY)
    return x


@server.tool()
async def async_tool(x: int) -> int:
    await asyncio.sleep(DELAY)
    return x


@server.tool(task="optional")
async def task_tool(task: TaskContext) -> str:
    await asyncio.sleep(DELAY)
    return "done"


@server.tool()
async def forever() -> str:
    await asyncio.sleep(3600)
    return "never"


@server.resource("eof://def")
def def_resource() -> str:
    time.sleep(DELAY)
    return "resource"


@server.resource("eof://async")
async def async_resource() -> str:
    await asyncio.sleep(DELAY)
    return "resource"


@server.prompt()
def def_prompt() -> str:
    time.sleep(DELAY)
    return "prompt"


@server.prompt()
async def async_prompt() -> str:
    await asyncio.sleep(DELAY)
    return "prompt"


if __name__ == "__main__":
    serve_stdio(server)
