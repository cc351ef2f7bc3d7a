"""Checked by mypy only (tests/typing/test_reveal_lifespan.py): a handler reads the state of
``Server(lifespan=...)`` typed. Each ``reveal_type`` line carries its expected type."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import reveal_type

from mcpbind import Context, Server


class Pool:
    async def fetch(self, key: str) -> str:
        return key


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[Pool]:
    yield Pool()


server = Server("typed", lifespan=lifespan)


@server.tool()
async def lookup(key: str, ctx: Context) -> str:
    pool = ctx.lifespan_state_as(Pool)
    reveal_type(pool)  # expect: reveal_lifespan.Pool
    reveal_type(await pool.fetch(key))  # expect: str
    reveal_type(ctx.lifespan_state)  # expect: Any
    reveal_type(ctx.headers)  # expect: typing.Mapping[str, str] | None
    return await pool.fetch(key)
