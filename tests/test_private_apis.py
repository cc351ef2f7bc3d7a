"""Private attributes of the standard library and of dependencies that the runtime relies on,
checked on every supported Python so that a release that moves or changes them fails here
rather than in a user's session.

- ``asyncio.tasks._enter_task`` / ``_leave_task`` (``mcpbind._asyncio``: ``start_eager``,
  ``InPlaceStarter``), Python 3.11 only: 3.12 and later use the public
  ``asyncio.Task(..., eager_start=True)``.
- ``anyio._core._eventloop.get_async_backend`` (``mcpbind._asyncio``), with a public fallback;
  anyio is pinned below 5 in pyproject.toml.
- ``anyio._backends._asyncio._task_states`` (a ``WeakKeyDictionary``, read through its ``data``
  dict) and the cancel scope slots ``_cancel_called``, ``_shield``, ``_parent_scope``
  (``CancelCheck.pending``, the synchronous cancel check on every request).
- ``asyncio.tasks._current_tasks`` on Python 3.11 only (``start_eager`` and
  ``CancelCheck.pending``; ``asyncio.current_task`` is a C function from 3.12 on).
- ``asyncio.BaseEventLoop._ready`` (the deque of handles run at the next iteration), where
  ``mcpbind.server.threads`` puts one reused handle instead of a ``call_soon`` per wait.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections import deque
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcpbind import _asyncio


def test_eager_uses_private_asyncio_only_on_3_11() -> None:
    switch = _asyncio.task_switch()
    if sys.version_info >= (3, 12):
        assert switch == (None, None)
        assert "eager_start" in inspect.signature(asyncio.Task).parameters
    else:
        for name, found in zip(("_enter_task", "_leave_task"), switch, strict=True):
            fn = getattr(asyncio.tasks, name)
            assert found is fn
            assert list(inspect.signature(fn).parameters) == ["loop", "task"]
    assert _asyncio.eager_supported()


@pytest.mark.parametrize("from_task", [True, False], ids=["from-task", "from-callback"])
def test_start_eager_runs_the_first_step_at_once_as_the_task(from_task: bool) -> None:
    """The behaviour the private functions (or ``eager_start``) give: the coroutine's first
    step runs before ``start_eager`` returns, with ``current_task()`` being its own task, and
    the caller's task is current again afterwards; the rest runs as that same task."""
    seen: list[Any] = []

    async def handler() -> str:
        seen.append(("first", asyncio.current_task()))
        await asyncio.sleep(0)
        seen.append(("second", asyncio.current_task()))
        return "done"

    async def main() -> None:
        loop = asyncio.get_running_loop()
        started: asyncio.Future[asyncio.Task[Any]] = loop.create_future()

        def start() -> None:
            task = _asyncio.start_eager(loop, handler(), "eager")  # type: ignore[arg-type]
            assert seen == [("first", task)]  # ran already, as the task
            assert task.get_name() == "eager"
            started.set_result(task)

        if from_task:
            caller = asyncio.current_task()
            start()
            assert asyncio.current_task() is caller
        else:
            loop.call_soon(start)
        task = await started
        assert await task == "done"
        assert seen == [("first", task), ("second", task)]

    asyncio.run(main())


def test_start_eager_propagates_an_immediate_exception() -> None:
    async def failing() -> None:
        raise ValueError("boom")

    async def main() -> None:
        task = _asyncio.start_eager(asyncio.get_running_loop(), failing(), "failing")
        with pytest.raises(ValueError, match="boom"):
            await task

    asyncio.run(main())


def test_anyio_backend_lookup_is_where_cancel_check_expects_it() -> None:
    from anyio._core._eventloop import get_async_backend

    assert _asyncio.backend_lookup() is get_async_backend

    async def main() -> None:
        check = _asyncio.CancelCheck()
        await check()  # not cancelled: returns
        with anyio.CancelScope() as scope:
            scope.cancel()
            await check()
            pytest.fail("a cancelled scope must interrupt the check")  # pragma: no cover
        assert scope.cancelled_caught

    anyio.run(main)


def test_cancel_check_pending_reads_anyio_scopes_like_anyio_does() -> None:
    """``CancelCheck.pending`` walks anyio's private task states and scope attributes: it must
    agree with ``checkpoint_if_cancelled`` (cancelled scope, shield, nesting, no scope)."""
    from anyio._backends._asyncio import CancelScope, _task_states

    assert _asyncio.scope_states() is _task_states
    assert type(_task_states.data) is dict  # read as states.data.get(weakref.ref(task))
    if sys.version_info < (3, 12):
        assert _asyncio.current_tasks() is asyncio.tasks._current_tasks  # type: ignore[attr-defined]
    else:
        assert _asyncio.current_tasks() is None
    for name in ("_cancel_called", "_shield", "_parent_scope"):
        assert name in CancelScope.__slots__

    async def main() -> None:
        check = _asyncio.CancelCheck()
        assert not check.pending()
        with anyio.CancelScope() as outer:
            outer.cancel()
            with anyio.CancelScope(shield=True):  # noqa: ASYNC100 - scopes read, not awaited
                assert not check.pending()  # the shield hides the outer cancellation
                with anyio.CancelScope():  # noqa: ASYNC100
                    assert not check.pending()
            assert check.pending()
            with anyio.CancelScope():
                assert check.pending()  # an inner scope does not hide it
                await check()
                pytest.fail("a pending cancellation must interrupt the check")  # pragma: no cover
        assert outer.cancelled_caught
        assert not check.pending()

    anyio.run(main)

    async def outside_any_scope() -> bool:
        return _asyncio.CancelCheck().pending()

    assert asyncio.run(outside_any_scope()) is False  # a task anyio has never seen


def test_asyncio_ready_queue_runs_a_reused_handle_each_time_it_is_appended() -> None:
    """``BaseEventLoop._ready`` (``mcpbind.server.threads``: the pool's per-iteration reset):
    a deque of handles the loop runs at its next iteration, where one handle appended again
    after it ran runs again."""
    runs: list[int] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        ready = loop._ready  # type: ignore[attr-defined]
        assert type(ready) is deque
        handle = asyncio.Handle(lambda: runs.append(len(runs)), (), loop)
        ready.append(handle)
        assert runs == []  # not run at once: at the loop's next iteration
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        ready.append(handle)
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert runs == [0, 1]
