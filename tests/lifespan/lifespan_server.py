"""A server with a lifespan, run as a script: ``stdio`` or ``http`` (``serve_http`` on a free
port), its lifespan failing at start with ``fail``."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcpbind import Context, Server, serve_stdio


class Pool:
    def __init__(self) -> None:
        self.opened = 1


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[Pool]:
    if "fail" in sys.argv:
        raise ConnectionRefusedError("database at 127.0.0.1:9 refused the connection")
    yield Pool()


server = Server("pooled", lifespan=lifespan)


@server.tool()
def opened(ctx: Context) -> int:
    return ctx.lifespan_state_as(Pool).opened


if __name__ == "__main__":
    if "http" in sys.argv:
        from mcpbind.http import serve_http

        serve_http(server, port=0)
    else:
        serve_stdio(server)
