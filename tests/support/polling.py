"""Bounded polling: wait for a condition another thread or task makes true, instead of a
fixed sleep that guesses how long that takes (on a loaded machine, longer than guessed)."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio

__all__ = ["until", "until_async"]

STEP = 0.01


def until(condition: Callable[[], object], timeout: float = 10.0, what: str = "") -> None:
    """Return once ``condition()`` is true; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout} s: {what or condition}")
        time.sleep(STEP)


async def until_async(condition: Callable[[], object], timeout: float = 10.0) -> None:
    """``until`` in a task: the event loop runs meanwhile."""
    with anyio.fail_after(timeout):
        while not condition():  # noqa: ASYNC110 - polls state with no event to wait on
            await anyio.sleep(STEP)
