"""A server whose handlers raise the ``BaseException`` kinds that are not a cancellation of
the server (issue 28 F18), for the memory, stdio, HTTP and tasks tests; run as a script it
serves stdio.

Tools ``raise_<kind>`` (``async def``) and ``raise_<kind>_def`` (``def``, in a thread), with
``kind`` one of :data:`KINDS`; the same as tasks (``task_raise_<kind>[_def]``); a resource
``raise://<kind>`` and a prompt ``raise_<kind>``; ``add`` and ``slow`` (``async``, sleeps
``seconds``), to show the session keeps serving and to keep it busy.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # this checkout's code, whatever is installed
    ROOT = Path(__file__).resolve().parents[2]
    sys.path[:0] = [str(ROOT / "runtime"), str(ROOT / "generated")]

from mcpbind import Server, serve_stdio
from mcpbind.server.tasks import TaskContext, Tasks

KINDS: dict[str, type[BaseException]] = {
    "generator_exit": GeneratorExit,
    "stop_iteration": StopIteration,
    "stop_async_iteration": StopAsyncIteration,
    "keyboard_interrupt": KeyboardInterrupt,
    "system_exit": SystemExit,
    "cancelled": asyncio.CancelledError,  # raised by the tool, nobody cancelled it
}


def _raiser(exc: type[BaseException], name: str, sync: bool) -> Any:
    if sync:

        def raising() -> str:
            raise exc

    else:

        async def raising() -> str:  # type: ignore[misc]
            raise exc

    raising.__name__ = name
    return raising


def _task_raiser(exc: type[BaseException], name: str, sync: bool) -> Any:
    if sync:

        def raising(task: TaskContext) -> str:
            raise exc

    else:

        async def raising(task: TaskContext) -> str:  # type: ignore[misc]
            raise exc

    raising.__name__ = name
    return raising


def make_server() -> Server:
    server = Server("raising", version="1.0.0")
    Tasks(server, poll_interval_ms=20)

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "slept"

    for kind, exc in KINDS.items():
        for suffix, sync in (("", False), ("_def", True)):
            server.tool(name=f"raise_{kind}{suffix}")(_raiser(exc, f"raise_{kind}{suffix}", sync))
            name = f"task_raise_{kind}{suffix}"
            server.tool(name=name, task="optional")(_task_raiser(exc, name, sync))
        server.resource(f"raise://{kind}", name=f"raise_{kind}")(_raiser(exc, kind, True))
        server.prompt(name=f"raise_{kind}")(_raiser(exc, kind, False))
    return server


if __name__ == "__main__":
    serve_stdio(make_server())
