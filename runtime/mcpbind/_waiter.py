"""One request a connection sent, awaiting its outcome (``Connection.request``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import msgspec

from mcpbind_types._common import RequestOptions

from .protocol import McpError

if TYPE_CHECKING:
    import asyncio

__all__ = ["Waiter"]


class Waiter(msgspec.Struct):
    """One request we sent, awaiting its outcome on an asyncio future (cheaper than an
    ``anyio.Event``); a Struct: built in C, no ``__init__`` frame per request."""

    method: str
    options: RequestOptions | None
    started: float
    timeout: float | None
    #: Awaited by the caller (directly: no coroutine of its own on the hot path).
    future: asyncio.Future[None]
    result: Any = None
    error: McpError | None = None
    deadline: float = math.inf  # when it times out (loop time), while it has a timeout
    timed_out: bool = False
    done: bool = False  # set once: result, error or timeout

    def set(self) -> None:
        if self.done:
            return
        self.done = True
        if not self.future.done():
            self.future.set_result(None)
