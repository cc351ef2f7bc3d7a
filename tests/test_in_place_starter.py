"""``InPlaceStarter``: a request handler's first step runs in place; a task carries on only
the handlers that suspend, and it is the task the first step already ran as."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcpbind._asyncio import InPlaceStarter

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("starter_test_var", default="unset")


def run(main: Any) -> Any:
    return asyncio.run(main())


async def _in_place() -> bool:
    return InPlaceStarter(asyncio.get_running_loop(), "probe").in_place


IN_PLACE = asyncio.run(_in_place())
in_place_only = pytest.mark.skipif(
    not IN_PLACE, reason="3.12 and later: handlers start as eager tasks (start_eager)"
)


@in_place_only
def test_a_handler_that_finishes_needs_no_task_and_keeps_its_context_to_itself() -> None:
    seen: list[Any] = []

    async def handler(name: str) -> None:
        VAR.set(name)
        seen.append((name, asyncio.current_task(), VAR.get()))

    async def main() -> None:
        starter = InPlaceStarter(asyncio.get_running_loop(), "handler")
        outer = asyncio.current_task()
        assert starter.start(handler("a")) is None
        assert starter.start(handler("b")) is None
        assert asyncio.current_task() is outer  # the caller's task is current again
        assert VAR.get() == "unset"  # what the handlers set stayed in their own contexts
        starter.close()

    run(main)
    (_, task_a, var_a), (_, task_b, var_b) = seen
    assert (var_a, var_b) == ("a", "b")
    assert isinstance(task_a, asyncio.Task) and task_a is task_b  # the spare, reused


@pytest.mark.parametrize("from_task", [True, False], ids=["from-task", "from-callback"])
def test_a_handler_that_suspends_goes_on_as_the_task_its_first_step_ran_as(
    from_task: bool,
) -> None:
    seen: list[Any] = []

    async def handler() -> str:
        VAR.set("mine")
        seen.append(asyncio.current_task())
        await asyncio.sleep(0)
        seen.append(asyncio.current_task())
        await asyncio.sleep(0.01)
        seen.append((asyncio.current_task(), VAR.get()))
        return "done"

    async def main() -> None:
        loop = asyncio.get_running_loop()
        starter = InPlaceStarter(loop, "handler")
        started: asyncio.Future[asyncio.Task[Any] | None] = loop.create_future()
        if from_task:
            started.set_result(starter.start(handler()))
        else:
            loop.call_soon(lambda: started.set_result(starter.start(handler())))
        task = await started
        assert task is not None and task.get_name() == "handler"
        assert await task == "done"
        assert seen == [task, task, (task, "mine")]
        assert VAR.get() == "unset"
        # The next handler gets a new spare, also once the old spare waited idle first.
        await asyncio.sleep(0)
        second = starter.start(handler())
        assert second is not None and second is not task
        assert await second == "done"
        starter.close()

    run(main)


@in_place_only
def test_an_idle_spare_carries_a_handler_that_suspends_later() -> None:
    """The spare parks (its own first step) before it is given anything; a later handler
    that suspends still goes on in it, and its result and exceptions reach the task."""

    async def quick() -> None:
        pass

    async def slow(fail: bool) -> str:
        await asyncio.sleep(0.01)
        if fail:
            raise ValueError("boom")
        return "slow"

    async def main() -> None:
        starter = InPlaceStarter(asyncio.get_running_loop(), "handler")
        assert starter.start(quick()) is None
        await asyncio.sleep(0.01)  # the spare's own step ran: it waits for work
        task = starter.start(slow(False))
        assert task is not None
        assert await task == "slow"
        assert starter.start(quick()) is None
        await asyncio.sleep(0.01)
        failing = starter.start(slow(True))
        assert failing is not None
        with pytest.raises(ValueError, match="boom"):
            await failing
        starter.close()

    run(main)


@pytest.mark.parametrize(
    "parked", [False, pytest.param(True, marks=in_place_only)], ids=["fresh-spare", "parked-spare"]
)
def test_cancelling_a_carried_handler_interrupts_its_wait(parked: bool) -> None:
    events: list[str] = []

    async def handler(waited: asyncio.Future[None]) -> None:
        try:
            await waited
        except asyncio.CancelledError:
            events.append("cancelled")
            raise

    async def main() -> None:
        loop = asyncio.get_running_loop()
        starter = InPlaceStarter(loop, "handler")
        if parked:
            assert starter.start(_finished()) is None
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        waited: asyncio.Future[None] = loop.create_future()
        task = starter.start(handler(waited))
        assert task is not None
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert waited.cancelled()
        assert events == ["cancelled"]
        starter.close()

    run(main)


async def _finished() -> None:
    pass


def test_anyio_cancel_scopes_entered_in_the_first_step_work() -> None:
    """A timeout scope entered before the first suspension belongs to the carrying task."""
    outcome: list[str] = []

    async def handler() -> None:
        with anyio.move_on_after(0.01) as scope:
            await anyio.sleep(5)
        outcome.append("timed out" if scope.cancelled_caught else "slept")
        with anyio.fail_after(5):
            await anyio.lowlevel.checkpoint()
        outcome.append("done")

    async def main() -> None:
        starter = InPlaceStarter(asyncio.get_running_loop(), "handler")
        task = starter.start(handler())
        assert task is not None
        await asyncio.wait_for(task, 2)
        starter.close()

    anyio.run(main)
    assert outcome == ["timed out", "done"]


@in_place_only
def test_a_handler_that_cancels_its_own_task_and_finishes_retires_the_spare() -> None:
    tasks: list[Any] = []

    async def self_cancelling() -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.append(task)
        task.cancel()

    async def later() -> str:
        tasks.append(asyncio.current_task())
        await asyncio.sleep(0)
        return "unaffected"

    async def main() -> None:
        starter = InPlaceStarter(asyncio.get_running_loop(), "handler")
        assert starter.start(self_cancelling()) is None
        task = starter.start(later())
        assert task is not None and task is not tasks[0]
        assert await task == "unaffected"
        await asyncio.sleep(0)
        assert tasks[0].cancelled()
        starter.close()

    run(main)


def test_a_first_step_that_raises_ends_a_task_with_the_exception() -> None:
    async def failing() -> None:
        raise KeyError("at once")

    async def main() -> None:
        starter = InPlaceStarter(asyncio.get_running_loop(), "handler")
        task = starter.start(failing())
        assert task is not None
        with pytest.raises(KeyError):
            await task
        starter.close()

    run(main)


@in_place_only
def test_close_cancels_the_idle_spare() -> None:
    async def main() -> None:
        starter = InPlaceStarter(asyncio.get_running_loop(), "handler")
        spare: list[Any] = []

        async def handler() -> None:
            spare.append(asyncio.current_task())

        assert starter.start(handler()) is None
        await asyncio.sleep(0)
        starter.close()
        await asyncio.sleep(0)
        assert spare[0].cancelled()

    run(main)
