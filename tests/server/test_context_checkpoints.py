"""A handler's notifications are checkpoints: each ``ctx.report_progress`` and ``ctx.log``
lets the event loop run other work, whether the message was delivered or dropped.

Found by the soak (issue 28 point 4): a tool sending progress in a loop to a client that had
gone away (its response stream closed, so every send returned at once without suspending) ran
its remaining iterations in one go, holding the event loop for seconds: every other session's
calls waited (p99 7.5 s), and a cancellation of the tool could not land until the loop ended.
No timing here: a ticker task counts the loop iterations it gets while the handler runs.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpbind import Context

pytestmark = pytest.mark.anyio


class GonePeer:
    """A session whose client left: every notification is dropped at once."""

    log_level = "debug"

    async def send_request(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not used")

    async def send_notification(self, method: Any, params: Any) -> None:
        return None

    def peer_has_capability(self, path: tuple[str, ...]) -> bool:
        return False


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_dropped_notifications_let_other_work_run() -> None:
    ctx = Context(peer=GonePeer(), progress_token=1)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    other = asyncio.get_running_loop().create_task(ticker())
    await asyncio.sleep(0)
    start = ticks
    for i in range(500):
        await ctx.report_progress(i, 500)
        await ctx.info(f"step {i}")
    ran = ticks - start
    other.cancel()
    assert ran >= 1000, f"other work ran {ran} times during 1,000 notifications"


async def test_a_handler_sending_to_a_gone_client_can_be_cancelled() -> None:
    ctx = Context(peer=GonePeer(), progress_token=1)
    sent = 0

    async def flood() -> None:
        nonlocal sent
        for i in range(1_000_000):
            await ctx.report_progress(i)
            sent += 1

    task = asyncio.get_running_loop().create_task(flood())
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sent < 10, f"the cancellation landed after {sent} notifications"
