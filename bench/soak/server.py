"""The soak benchmark's server: one mcpbind ``Server`` over Streamable HTTP (both eras), on
one uvicorn worker (``bench/http/peers/_serve.py``, the HTTP benchmark's runner; ``run.py``
picks the stack with ``--http``).

Tools: ``echo`` (the measured call), ``slow`` (cancelled by the clients), ``count`` (a ``def``
tool, run on the tool-thread pool), ``flood`` (``n`` progress notifications and ``n`` log
messages as fast as the server sends them, for the flooding and the non-reading clients). A background task marks the resource ``soak://tick``
updated every ``--tick`` seconds (100 ms: its subscribers, the listen and GET slow readers,
always have something to deliver and fall behind) and adds or removes a tool every
``--list-changed`` seconds (5 s: every session with a GET stream or a listen subscription gets
``notifications/tools/list_changed``, as from a server whose tools change now and then).
SIGUSR1 prints every thread's stack on stderr (``run.py`` asks before it kills a hung server).
``--redis URL`` makes it one worker of a cluster on that Redis (``RedisCluster``: the session
registry advertising ``--port``, the event store, the notification bus), and ``--no-churn``
leaves the changes to another worker (their notifications reach this one's clients on the bus).
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import logging
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http" / "peers"))

from _serve import serve

from mcpbind import Context, Server


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

    @server.tool()
    async def flood(n: int, ctx: Context) -> int:
        """Send ``n`` progress notifications and ``n`` log messages, then answer ``n``."""
        for i in range(n):
            await ctx.report_progress(i, n)
            await ctx.info(f"flood {i}")
        return n

    @server.resource("soak://tick", mime_type="text/plain")
    def tick() -> str:
        return "tick"

    return server


def build_app(args: argparse.Namespace) -> tuple[Any, str]:
    from mcpbind.http import StreamableHTTPApp

    server = build_server()
    options: dict[str, Any] = {}
    if args.redis:  # a worker of a cluster (run.py --workers): what `mcpbind serve --redis` builds
        from mcpbind.http import RedisCluster

        advertise = f"http://127.0.0.1:{args.port}/mcp"
        options = RedisCluster(server, args.redis, advertise).app_options()
    # Every soak client connects from 127.0.0.1: the per-address session cap (100) would
    # count them all as one client, so it is off here (as behind a proxy).
    app = StreamableHTTPApp(
        server, path="/mcp", sse_keepalive=5.0, max_sessions_per_client=None, **options
    )
    if args.no_churn:
        return app, "sse"

    def extra() -> str:
        """A tool that comes and goes."""
        return "extra"

    async def churn() -> None:
        changed = time.monotonic()
        while True:
            await asyncio.sleep(args.tick)
            try:
                server.resource_updated("soak://tick")
                if time.monotonic() - changed >= args.list_changed:
                    changed = time.monotonic()
                    if "extra" in server.tools:
                        server.remove_tool("extra")
                    else:
                        server.tool()(extra)
            except Exception:  # a ticker that dies in silence starves every stream
                logging.getLogger("soak").exception("announcing a change failed")

    async def with_churn(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan" and not hasattr(with_churn, "task"):
            with_churn.task = asyncio.get_running_loop().create_task(churn())  # type: ignore[attr-defined]
        await app(scope, receive, send)

    return with_churn, "sse"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tick", type=float, default=0.1, help="seconds between updates")
    parser.add_argument("--list-changed", type=float, default=5.0, help="seconds between changes")
    parser.add_argument("--redis", help="a cluster worker sharing the Redis at this URL")
    parser.add_argument(
        "--no-churn", action="store_true", help="announce no changes (another worker does)"
    )


if __name__ == "__main__":
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    serve(__doc__.splitlines()[0], build_app, add_arguments)
