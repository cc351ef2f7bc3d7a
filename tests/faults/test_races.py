"""Ten thousand randomized cancel/complete races through the whole async stack, in memory.

Client <-> Connection <-> core <-> memory transport <-> core <-> Connection <-> Server, with a
tool that completes at once or after a tiny random sleep, and a client that gives up at random
moments: cancel scopes with random deadlines, ``fail_after``, request timeouts, a cancel after
a random number of scheduler checkpoints, and a scope cancelled before the call starts.

What must hold (2025-11-25 basic/index.mdx §Responses, basic/utilities/cancellation.mdx):

- at most one response per request id crosses the wire, and only for ids that were sent;
- at most one ``notifications/cancelled`` per request id;
- every request gets a response or a cancellation (nothing is silently abandoned);
- an uncancelled call always gets its correct result;
- afterwards nothing is left over: no pending or in-flight ids in either core, no waiters or
  handler scopes in either connection, and no tasks beyond the fixed infrastructure ones.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcpbind import LATEST_HANDSHAKE, Client, RequestOptions, RequestTimeout, Server, json_value
from mcpbind import types as t
from mcpbind.server.session import ServerSession
from mcpbind.transports import memory_pair

from .wiretap import Tap

pytestmark = pytest.mark.anyio

CALLS = 10_000
IN_FLIGHT = 64
SEED = 20251125
MODES = ("immediate", "sleep", "move_on", "fail_after", "timeout", "checkpoints", "precancel")

server = Server("races")


@server.tool()
async def work(delay: float) -> int:
    """Answer at once (delay 0) or after a tiny sleep."""
    if delay > 0:
        await anyio.sleep(delay)
    return 7


@dataclass(frozen=True, slots=True)
class Plan:
    """One call: how the tool behaves and when (and how) the client gives up."""

    mode: str
    delay: float  # the tool's sleep; 0 answers at once
    deadline: float  # for move_on / fail_after / timeout
    checkpoints: int  # for checkpoints


def make_plans(seed: int) -> list[Plan]:
    """The calls, fixed by the seed (the interleaving is not: that is the point)."""
    rng = random.Random(seed)
    plans = []
    for _ in range(CALLS):
        mode = rng.choice(MODES)
        delay = 0.0 if mode == "immediate" else rng.choice((0.0, rng.uniform(0, 0.002)))
        # Give up at once, within the first 2 ms, or anywhere in a loaded round trip.
        deadline = rng.choice((0.0, rng.uniform(0, 0.002), rng.uniform(0, 0.25)))
        plans.append(Plan(mode, delay, deadline, rng.randrange(200)))
    return plans


async def one_call(client: Client, plan: Plan, outcomes: Counter[str]) -> None:
    mode = plan.mode
    params = t.CallToolRequestParams(name="work", arguments={"delay": plan.delay})
    result: Any = None
    try:
        if mode in ("immediate", "sleep"):
            result = await client.call_tool(params)
        elif mode == "move_on":
            with anyio.move_on_after(plan.deadline):
                result = await client.call_tool(params)
        elif mode == "fail_after":
            with anyio.fail_after(plan.deadline):
                result = await client.call_tool(params)
        elif mode == "timeout":
            options = RequestOptions(timeout=plan.deadline or 0.0001)
            result = await client.call_tool(params, options=options)
        elif mode == "checkpoints":
            result = await cancel_after_checkpoints(client, params, plan.checkpoints)
        else:  # precancel: the scope is already cancelled when the call starts
            with anyio.CancelScope() as scope:
                scope.cancel()
                result = await client.call_tool(params)
    except (TimeoutError, RequestTimeout):
        outcomes[f"{mode}: gave up"] += 1
        return
    if result is None:
        outcomes[f"{mode}: gave up"] += 1
        return
    assert json_value(result.structured_content) == {"result": 7}, result
    outcomes[f"{mode}: answered"] += 1


async def cancel_after_checkpoints(client: Client, params: t.CallToolRequestParams, n: int) -> Any:
    """The call, cancelled by a sibling task after ``n`` scheduler checkpoints."""
    result: Any = None
    with anyio.CancelScope() as scope:

        async def canceller() -> None:
            for _ in range(n):
                await anyio.lowlevel.checkpoint()
            scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(canceller)
            result = await client.call_tool(params)
            tg.cancel_scope.cancel()
    return result


async def settle(condition: Any, timeout: float = 5.0) -> None:
    """Let in-flight cancellations and handler tasks finish; fail if they never do."""
    with anyio.fail_after(timeout):
        while not condition():  # noqa: ASYNC110 - polling state that has no event to wait on
            await anyio.sleep(0.001)


@pytest.mark.slow
async def test_ten_thousand_cancel_complete_races() -> None:
    plans = make_plans(SEED)
    outcomes: Counter[str] = Counter()
    tasks_before_connect = len(asyncio.all_tasks())

    client_end, server_end = memory_pair()
    client_tap, server_tap = Tap(client_end, keep=False), Tap(server_end, keep=False)
    session = ServerSession(server, server_tap)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        async with Client(client_tap, protocol_version=LATEST_HANDSHAKE) as client:
            conn = client.connection
            assert conn is not None
            # Warm up, then take the baseline: session, two read loops, this task.
            assert json_value((await client.call("work", {"delay": 0})).structured_content) == {
                "result": 7
            }

            def live_tasks() -> int:
                """Tasks, less the idle spare each connection keeps for its handlers."""
                spares = {c.runner.spare_task for c in (conn, session.connection)}
                return len(asyncio.all_tasks() - spares)

            infrastructure = live_tasks()

            calls = iter(plans)
            started = anyio.current_time()

            async def worker() -> None:
                for plan in calls:
                    await one_call(client, plan, outcomes)

            with anyio.fail_after(60):
                async with anyio.create_task_group() as workers:
                    for _ in range(IN_FLIGHT):
                        workers.start_soon(worker)
            elapsed = anyio.current_time() - started

            def quiet() -> bool:
                return (
                    not session.core.inflight_ids()
                    and session.connection.runner.idle
                    and live_tasks() == infrastructure
                )

            await settle(quiet)
            # Nothing left over on either side.
            assert conn.core.pending_ids() == []
            assert conn._waiters == {} and conn.runner.idle
            assert session.core.inflight_ids() == [] and session.core.pending_ids() == []
            assert session.connection._waiters == {} and session.connection.runner.idle
            assert live_tasks() == infrastructure
            # The session still works after all of it.
            assert json_value((await client.call("work", {"delay": 0})).structured_content) == {
                "result": 7
            }
        tg.cancel_scope.cancel()
    await settle(lambda: len(asyncio.all_tasks()) == tasks_before_connect)

    # The wire: at most one response per id, only for sent ids; at most one cancel per id.
    requests = client_tap.requests_out
    doubles = {rid: n for rid, n in client_tap.responses_in.items() if n > 1}
    assert not doubles, f"ids answered more than once: {doubles}"
    assert all(n == 1 for n in server_tap.responses_out.values())
    assert set(client_tap.responses_in) <= set(requests)
    assert all(n == 1 for n in client_tap.cancels_out.values())
    # (A cancel for an id that was never sent is a separate bug: test_precancelled_call_...)
    answered_or_cancelled = client_tap.responses_in + client_tap.cancels_out
    abandoned = [rid for rid in requests if not answered_or_cancelled[rid]]
    assert not abandoned, f"requests with neither response nor cancel: {abandoned[:10]}"

    # Every call ended one way or the other; uncancellable calls were all answered, precancelled
    # ones never; the races really happened (calls given up after their request was sent, and
    # calls that could have been given up but were answered). How many of each depends on the
    # machine's speed, so only their existence is asserted.
    assert sum(outcomes.values()) == CALLS
    assert outcomes["immediate: gave up"] == outcomes["sleep: gave up"] == 0
    assert outcomes["precancel: answered"] == 0
    for mode in ("move_on", "fail_after", "timeout", "checkpoints"):
        assert outcomes[f"{mode}: gave up"] > 0, outcomes
    racy = ("move_on", "fail_after", "timeout", "checkpoints")
    assert sum(outcomes[f"{mode}: answered"] for mode in racy) > 0, outcomes
    assert len(set(client_tap.cancels_out) & set(requests)) > 100
    raced = [rid for rid in client_tap.cancels_out if client_tap.responses_in[rid]]
    print(f"{CALLS} calls in {elapsed:.2f}s; {dict(outcomes)}; cancel+response races: {len(raced)}")


async def test_precancelled_call_sends_nothing() -> None:
    """cancellation.mdx: a cancellation MUST only reference a previously issued request; a call
    whose scope is cancelled before it starts sends neither request nor cancellation."""
    client_end, server_end = memory_pair()
    client_tap = Tap(client_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(ServerSession(server, server_end).run)
        async with Client(client_tap, protocol_version=LATEST_HANDSHAKE) as client:
            before = len(client_tap.sent)
            with anyio.CancelScope() as scope:
                scope.cancel()
                await client.call_tool(t.CallToolRequestParams(name="work", arguments={"delay": 0}))
            await client.ping()
            assert [m.get("method") for m in client_tap.messages()[before:]] == ["ping"]
            assert client.connection is not None and client.connection.core.pending_ids() == []
        tg.cancel_scope.cancel()
