"""``checkpoint_if_cancelled`` without finding the async backend on every call.

``anyio.lowlevel.checkpoint_if_cancelled()`` looks the running backend up each time, which costs
as much as the check itself; a request pays it on its hot path. A :class:`CancelCheck` looks the
backend up once (anyio keeps the lookup in a private module; when that is not importable, the
public function is used as is).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio.lowlevel

if TYPE_CHECKING:
    from anyio.abc import AsyncBackend

_get_async_backend: Callable[[], type[AsyncBackend]] | None
try:
    from anyio._core._eventloop import get_async_backend as _get_async_backend
except ImportError:  # pragma: no cover - a future anyio
    _get_async_backend = None

__all__ = ["CancelCheck", "is_cancellation"]


class CancelCheck:
    """``await check()``: raise if the calling task's cancel scope was cancelled. Use within
    one event loop (the backend is found on the first call)."""

    __slots__ = ("_backend",)

    def __init__(self) -> None:
        self._backend: type[AsyncBackend] | None = None

    async def __call__(self) -> None:
        backend = self._backend
        if backend is None:
            if _get_async_backend is None:  # pragma: no cover - a future anyio
                await anyio.lowlevel.checkpoint_if_cancelled()
                return
            backend = self._backend = _get_async_backend()
        await backend.checkpoint_if_cancelled()


def is_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` is the framework's cancellation (or a generator closing), which a
    handler must let through; every other ``BaseException`` of a handler is its failure."""
    cancelled = anyio.get_cancelled_exc_class()
    return isinstance(exc, (asyncio.CancelledError, GeneratorExit, cancelled))
