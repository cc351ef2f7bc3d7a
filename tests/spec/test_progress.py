"""basic/utilities/progress.mdx (2024-11-05, 2025-03-26, 2025-11-25): a progress token in
``_meta`` opts in; the receiver sends notifications/progress with increasing (float)
progress, optional total and message, for that token only, and stops at completion."""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import pytest

from mcpbind import RequestOptions, json_value

from .conftest import Connect
from .helpers import memory_session, text_of

pytestmark = pytest.mark.anyio

Update = tuple[float, float | None, str | None]


def collector() -> tuple[list[Update], Any]:
    updates: list[Update] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    return updates, on_progress


async def test_progress_updates_reach_the_callback(connect: Connect) -> None:
    """progress.mdx §Progress Flow: notifications carry progress and optional total as numbers
    (floats allowed) and an optional message; "The progress value MUST increase with each
    notification"."""
    updates, on_progress = collector()
    async with connect("full") as client:
        args = {"n": 4, "interval": 0.01, "label": "job"}
        result = await client.call("steps", args, options=RequestOptions(on_progress=on_progress))
    assert text_of(result) == "job"
    assert updates == [(i + 0.5, 4.0, f"job step {i}") for i in range(4)]
    assert all(isinstance(p, float) and isinstance(total, float) for p, total, _ in updates)
    assert all(a[0] < b[0] for a, b in itertools.pairwise(updates))


@pytest.mark.memory_only
async def test_progress_token_only_when_requested(connect: Connect) -> None:
    """progress.mdx §Progress Flow: a party that wants progress includes a progressToken in the
    request's ``_meta``; without one the receiver sends none. The total may be omitted
    (§Behavior Requirements 2)."""
    updates, on_progress = collector()
    async with connect("full") as client:
        plain = await client.call("progress_token")
        asked = await client.call("progress_token", options=RequestOptions(on_progress=on_progress))
        again = await client.call("progress_token", options=RequestOptions(on_progress=on_progress))
    assert json_value(plain.structured_content) == {"result": None}
    asked_content = json_value(asked.structured_content)
    again_content = json_value(again.structured_content)
    assert isinstance(asked_content, dict)
    assert isinstance(again_content, dict)
    token, token2 = asked_content["result"], again_content["result"]
    assert isinstance(token, int | str) and isinstance(token2, int | str)
    assert token != token2  # "MUST be unique across all active requests"
    assert updates == [(1.0, None, None), (1.0, None, None)]


@pytest.mark.memory_only
async def test_progress_on_the_wire() -> None:
    """progress.mdx §Progress Flow / §Behavior Requirements 1 / §Implementation Notes: the
    request carries ``_meta.progressToken``; every notification references that token; none is
    sent after the response."""
    updates, on_progress = collector()
    async with memory_session("full") as (client, _session, wire):
        args = {"n": 3, "interval": 0.01, "label": "w"}
        await client.call("steps", args, options=RequestOptions(on_progress=on_progress))
    call = next(m for m in wire.received if m.get("method") == "tools/call")
    token = call["params"]["_meta"]["progressToken"]
    sent = wire.sent
    response_at = next(i for i, m in enumerate(sent) if m.get("id") == call["id"])
    progress_at = [i for i, m in enumerate(sent) if m.get("method") == "notifications/progress"]
    assert len(progress_at) == len(updates) == 3 and max(progress_at) < response_at
    assert [sent[i]["params"] for i in progress_at] == [
        {"progressToken": token, "progress": i + 0.5, "total": 3.0, "message": f"w step {i}"}
        for i in range(3)
    ]


@pytest.mark.memory_only
async def test_concurrent_requests_keep_their_own_progress(connect: Connect) -> None:
    """progress.mdx §Progress Flow: the token "MUST be unique across all active requests", so
    interleaved notifications reach the right caller."""
    updates_a, on_a = collector()
    updates_b, on_b = collector()
    async with connect("full") as client:

        async def run(label: str, on_progress: Any) -> None:
            args = {"n": 5, "interval": 0.01, "label": label}
            await client.call("steps", args, options=RequestOptions(on_progress=on_progress))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "a", on_a)
            tg.start_soon(run, "b", on_b)
    assert [m for _, _, m in updates_a] == [f"a step {i}" for i in range(5)]
    assert [m for _, _, m in updates_b] == [f"b step {i}" for i in range(5)]
