"""The soak benchmark's server: one mcpbind ``Server`` over Streamable HTTP (both eras), on
one uvicorn worker (``bench/http/peers/_serve.py``, the HTTP benchmark's runner).

Tools: ``echo`` (the measured call), ``slow`` (cancelled by the clients), ``count`` (a ``def``
tool, run on the tool-thread pool). A background task marks the resource ``soak://tick``
updated and the tool list changed every 100 ms, so listen and GET streams always have
something to deliver (and slow readers fall behind).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http" / "peers"))

from _serve import serve

from mcpbind import Server


def build_server() -> Server:
    server = Server("soak", version="1.0.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep (the clients cancel it)."""
        await asyncio.sleep(seconds)
        return "slept"

    @server.tool()
    def count(n: int) -> int:
        """A ``def`` tool: a little CPU in a pool thread."""
        return sum(range(n))

    @server.resource("soak://tick", mime_type="text/plain")
    def tick() -> str:
        return "tick"

    return server


def build_app(args: argparse.Namespace) -> tuple[Any, str]:
    from mcpbind.http import StreamableHTTPApp

    server = build_server()
    # Every soak client connects from 127.0.0.1: the per-address session cap (100) would
    # count them all as one client, so it is off here (as behind a proxy).
    app = StreamableHTTPApp(server, path="/mcp", sse_keepalive=5.0, max_sessions_per_client=None)

    async def churn() -> None:
        while True:
            await asyncio.sleep(0.1)
            server.resource_updated("soak://tick")
            server._changed("tools")

    async def with_churn(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan" and not hasattr(with_churn, "task"):
            with_churn.task = asyncio.get_running_loop().create_task(churn())  # type: ignore[attr-defined]
        await app(scope, receive, send)

    return with_churn, "sse"


if __name__ == "__main__":
    serve(__doc__.splitlines()[0], build_app)
