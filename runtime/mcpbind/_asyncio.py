"""The asyncio backend: the runtime's asyncio-specific helpers, in one module.

mcpbind runs on asyncio (anyio stays as the task-group and cancel-scope API on top of it;
trio is not supported). What is here:

- :func:`start_eager`: start a task eagerly, its first step at once, as that task, in its
  context. Most request handlers finish without ever waiting (an echo tool, a list, a
  lookup); started eagerly, the response is written in the event-loop iteration that read
  the request. A handler that does wait carries on as the task it already was. Python 3.12
  has this built in (``Task(..., eager_start=True)``); on 3.11 the first step runs here with
  the task swapped in as the loop's current task (private ``asyncio.tasks._enter_task`` /
  ``_leave_task``), and the task's own first step resumes the coroutine where that left it.
- :class:`CancelCheck`: ``checkpoint_if_cancelled`` with the anyio backend looked up once
  (private ``anyio._core._eventloop.get_async_backend``), and a synchronous test for it
  (private ``anyio._backends._asyncio._task_states`` and cancel scope attributes); anyio is
  pinned below 5 and tests/test_private_apis.py fails when they move.
- :func:`is_cancellation`: whether a handler's exception is a real cancellation of its task.
- :class:`Raised`, :func:`carried`: a handler's exception that a task or future cannot carry.
- :class:`Flag`: an event that costs no waiter queue until a task waits on it.
- :func:`choose_loop`: the event loop a server runs on, uvloop when installed (``"auto"``).
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ._lazy import LazyModule

if TYPE_CHECKING:
    import asyncio
    import weakref

    from anyio.abc import AsyncBackend
else:  # imported when a loop first uses it, not with mcpbind (issue 15, cold start)
    asyncio = LazyModule("asyncio", globals())
    weakref = LazyModule("weakref", globals())

__all__ = [
    "CancelCheck",
    "Flag",
    "InPlaceStarter",
    "LoopChoice",
    "Raised",
    "backend_lookup",
    "carried",
    "choose_loop",
    "current_tasks",
    "eager_supported",
    "is_cancellation",
    "start_eager",
]

LoopChoice = Literal["auto", "asyncio", "uvloop"]
_T = TypeVar("_T")

_TaskSwitch = Callable[["asyncio.AbstractEventLoop", "asyncio.Task[Any]"], None]

# Private asyncio functions, used on 3.11 only (3.12 has ``eager_start``), looked up at the
# first start_eager (asyncio is not imported with this module); if a 3.11 release lacked
# them, tasks would start the ordinary way. tests/test_private_apis.py checks them.
_switch: tuple[_TaskSwitch | None, _TaskSwitch | None] | None = None
_tasks: dict[Any, Any] | Literal[False] | None = False  # current_tasks(), once looked up


def task_switch() -> tuple[_TaskSwitch | None, _TaskSwitch | None]:
    """``asyncio.tasks._enter_task`` and ``_leave_task`` on 3.11 (each ``None`` if missing),
    ``(None, None)`` on 3.12 and later."""
    global _switch
    if _switch is None:
        if sys.version_info < (3, 12):
            tasks = asyncio.tasks
            _switch = getattr(tasks, "_enter_task", None), getattr(tasks, "_leave_task", None)
        else:
            _switch = None, None
    return _switch


def eager_supported() -> bool:
    """Whether :func:`start_eager` starts eagerly here (otherwise it creates a plain task)."""
    enter, leave = task_switch()
    return sys.version_info >= (3, 12) or (enter is not None and leave is not None)


_PENDING, _YIELDED, _RETURNED, _RAISED, _RUNNING = range(5)


def _cancel_awaited(waited: Any, exc: BaseException) -> None:
    """A task cancelled while it waits cancels what it waits on, then its coroutine gets the
    exception: the same for a first step run before its task's."""
    if (
        isinstance(exc, asyncio.CancelledError)
        and isinstance(waited, asyncio.Future)
        and not waited.done()
    ):
        waited.cancel()


class _Resumed(Coroutine[Any, Any, Any]):
    """The coroutine a 3.11 eager task runs: replays what the eager first step ended with (a
    value to wait on, a result or an exception), then forwards everything to ``coro``."""

    __slots__ = ("_coro", "_outcome", "_state")

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._coro = coro
        self._state = _PENDING
        self._outcome: Any = None

    def first_step(self) -> None:
        """Run ``coro`` up to its first suspension (or its end), and remember how it stopped."""
        try:
            self._outcome = self._coro.send(None)
        except StopIteration as stop:
            self._state, self._outcome = _RETURNED, stop.value
        except BaseException as exc:  # re-raised by the task's own first step
            self._state, self._outcome = _RAISED, exc
        else:
            self._state = _YIELDED

    def send(self, value: Any) -> Any:
        state = self._state
        if state == _RUNNING:
            return self._coro.send(value)
        outcome, self._outcome = self._outcome, None
        if state == _YIELDED:
            self._state = _RUNNING
            return outcome  # the task waits on it, as if the coroutine had just yielded it
        if state == _RETURNED:
            self._state = _RUNNING
            raise StopIteration(outcome)
        if state == _RAISED:
            self._state = _RUNNING
            raise outcome
        self._state = _RUNNING  # never stepped eagerly: an ordinary first step
        return self._coro.send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        exc = typ if val is None else val
        if self._state == _YIELDED:
            # Cancelled before the task's first step: as for a task cancelled while waiting,
            # the awaited future is cancelled too, then the coroutine gets the exception.
            waited, self._outcome = self._outcome, None
            _cancel_awaited(waited, exc)
        elif self._state in (_RETURNED, _RAISED):
            self._state, self._outcome = _RUNNING, None
            raise exc  # the coroutine is finished already; the task just ends with it
        self._state = _RUNNING
        return self._coro.throw(exc)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, Any]:  # pragma: no cover - tasks use send/throw
        raise TypeError("_Resumed is driven by its task, not awaited")


def start_eager(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, None], name: str
) -> asyncio.Task[None]:
    """Create a task named ``name`` for ``coro`` (in a copy of the current context) and run its
    first step now. Call from a task or a callback running on ``loop``. (A name given costs
    nothing; an unnamed task formats ``Task-<n>``, about 1.5k instructions per request.)"""
    if sys.version_info >= (3, 12):
        return asyncio.Task(coro, loop=loop, name=name, eager_start=True)  # type: ignore[call-arg,unused-ignore]
    _enter_task, _leave_task = _switch or task_switch()
    if _enter_task is None or _leave_task is None:
        return loop.create_task(coro, name=name)
    global _tasks
    if _tasks is False:
        _tasks = current_tasks()
    # None when called from a loop callback
    current = _tasks.get(loop) if _tasks is not None else asyncio.current_task(loop)
    context = contextvars.copy_context()
    resumed = _Resumed(coro)
    task: asyncio.Task[None]
    if loop.get_task_factory() is None:  # what create_task does then, minus its checks
        task = asyncio.Task(resumed, loop=loop, name=name, context=context)
    else:
        task = loop.create_task(resumed, name=name, context=context)
    if current is not None:
        _leave_task(loop, current)
    _enter_task(loop, task)
    try:
        context.run(resumed.first_step)
    finally:
        _leave_task(loop, task)
        if current is not None:
            _enter_task(loop, current)
    return task


_IDLE = 5  # a carrier's state while it carries nothing


def _first_step(coro: Coroutine[Any, Any, Any]) -> tuple[int, Any]:
    """Run ``coro`` up to its first suspension (or its end): how it stopped, and with what."""
    try:
        return _YIELDED, coro.send(None)
    except StopIteration as stop:
        return _RETURNED, stop.value
    except BaseException as exc:  # re-raised by the task that carries it
        return _RAISED, exc


class _Carrier(Coroutine[Any, Any, Any]):
    """The coroutine of a spare task: idle (waiting on a gate future) until it is given a
    coroutine whose first step ran in place; then it replays how that step ended, as
    :class:`_Resumed` does, and runs every later step in that coroutine's own context."""

    __slots__ = ("_context", "_coro", "_gate", "_loop", "_outcome", "_state")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._state = _IDLE
        self._coro: Coroutine[Any, Any, Any] | None = None
        self._context: contextvars.Context | None = None
        self._outcome: Any = None
        self._gate: asyncio.Future[None] | None = None

    def carry(
        self, coro: Coroutine[Any, Any, Any], context: contextvars.Context, state: int, outcome: Any
    ) -> None:
        """Take over ``coro``, whose first step (run in ``context``) ended as ``state``."""
        self._coro, self._context, self._state, self._outcome = coro, context, state, outcome
        gate = self._gate
        if gate is not None and not gate.done():  # the task waits: wake it to go on
            gate.set_result(None)

    def send(self, value: Any) -> Any:
        state = self._state
        if state == _RUNNING:
            return self._context.run(self._coro.send, value)  # type: ignore[union-attr]
        if state == _IDLE:  # the task's first step, before it was given anything: wait
            gate = self._gate = self._loop.create_future()
            gate._asyncio_future_blocking = True
            return gate
        outcome, self._outcome = self._outcome, None
        self._state = _RUNNING
        if state == _YIELDED:
            return outcome  # the task waits on it, as if the coroutine had just yielded it
        if state == _RETURNED:
            raise StopIteration(outcome)
        raise outcome

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        exc = typ if val is None else val
        state = self._state
        if state == _IDLE:
            raise exc  # cancelled while carrying nothing: the spare task just ends
        if state == _YIELDED:
            # Cancelled before it went on: as for a task cancelled while waiting, the awaited
            # future is cancelled too, then the coroutine gets the exception.
            waited, self._outcome = self._outcome, None
            _cancel_awaited(waited, exc)
        elif state in (_RETURNED, _RAISED):
            self._state, self._outcome = _RUNNING, None
            raise exc
        self._state = _RUNNING
        return self._context.run(self._coro.throw, exc)  # type: ignore[union-attr]

    def close(self) -> None:
        if self._coro is not None:
            self._coro.close()

    def __await__(self) -> Generator[Any, None, Any]:  # pragma: no cover - tasks use send/throw
        raise TypeError("_Carrier is driven by its task, not awaited")


class InPlaceStarter:
    """Starts coroutines (request handlers) with their first step run at once, in place, and
    a task made for the few that suspend.

    Most handlers finish without ever waiting; a task each (as :func:`start_eager` makes)
    costs about a quarter of a stdio server's instructions per ``tools/call`` (its creation,
    its scheduled step, its registration, the garbage it leaves). Here a coroutine's first
    step runs in a copy of the current context with the loop's current task being a *spare*
    task; a coroutine that finishes there needs no task at all, and the spare serves the
    next one. One that suspends is handed to the spare, which carries it on from there as
    its task (every later step in the coroutine's own context), and the next start makes a
    new spare. So ``asyncio.current_task()``, anyio cancel scopes and ``asyncio.timeout``
    see, from the first step on, the task that the coroutine will go on in.

    A spare cancelled during a first step that finished (the handler cancelled its own
    task) is dropped: it ends cancelled and a new spare serves the next coroutine.

    On 3.11 only (the private task switch, as :func:`start_eager`); elsewhere :meth:`start`
    is :func:`start_eager`. Call :meth:`close` when done: it cancels the idle spare.
    """

    __slots__ = ("_enter", "_leave", "_loop", "_name", "_spare")

    def __init__(self, loop: asyncio.AbstractEventLoop, name: str) -> None:
        self._loop = loop
        self._name = name
        self._spare: tuple[asyncio.Task[Any], _Carrier] | None = None
        enter, leave = task_switch()
        global _tasks
        if _tasks is False:
            _tasks = current_tasks()
        if _tasks is None or loop.get_task_factory() is not None:
            enter = leave = None  # a custom task factory: tasks made the ordinary way
        self._enter, self._leave = enter, leave

    @property
    def spare(self) -> asyncio.Task[Any] | None:
        """The idle spare task (``None`` until the next start makes one)."""
        return None if self._spare is None else self._spare[0]

    @property
    def in_place(self) -> bool:
        """Whether first steps run in place here (else each coroutine gets an eager task)."""
        return self._enter is not None and self._leave is not None

    def start(self, coro: Coroutine[Any, Any, _T]) -> asyncio.Task[_T] | None:
        """Run ``coro``'s first step now; the task carrying it on, or ``None`` if it finished
        (or failed: then a task ends with its exception, as one started eagerly would)."""
        enter, leave = self._enter, self._leave
        loop = self._loop
        if enter is None or leave is None:
            return start_eager(loop, coro, self._name)  # type: ignore[arg-type,return-value]
        spare = self._spare
        if spare is None:
            carrier = _Carrier(loop)
            spare = self._spare = (asyncio.Task(carrier, loop=loop, name=self._name), carrier)
        task = spare[0]
        current = _tasks.get(loop)  # type: ignore[union-attr]  # None from a loop callback
        context = contextvars.copy_context()
        if current is not None:
            leave(loop, current)
        enter(loop, task)
        try:
            state, outcome = context.run(_first_step, coro)
        finally:
            leave(loop, task)
            if current is not None:
                enter(loop, current)
        if state == _RETURNED:
            if task.cancelling():
                self._spare = None  # cancelled by the finished coroutine: it ends so
            return None
        self._spare = None
        spare[1].carry(coro, context, state, outcome)
        return task

    def close(self) -> None:
        """Cancel the idle spare task (the owner starts nothing more)."""
        spare, self._spare = self._spare, None
        if spare is not None:
            spare[0].cancel()


# ---------------------------------------------------------------------------- cancel checks


def backend_lookup() -> Callable[[], type[AsyncBackend]] | None:
    """anyio's private ``get_async_backend`` (``None`` if a future anyio moved it), imported
    at the first check: anyio's low-level modules are not imported with mcpbind."""
    try:
        from anyio._core._eventloop import get_async_backend
    except ImportError:  # pragma: no cover - a future anyio (the pin and the test catch it)
        return None
    return get_async_backend


def current_tasks() -> dict[Any, Any] | None:
    """On 3.11, where ``asyncio.current_task`` is a Python function, the dict it reads
    (private ``asyncio.tasks._current_tasks``: loop -> task), or ``None`` if missing; ``None``
    on 3.12 and later (a C function there)."""
    if sys.version_info >= (3, 12):
        return None
    tasks = getattr(asyncio.tasks, "_current_tasks", None)
    return tasks if isinstance(tasks, dict) else None


def scope_states() -> Any:
    """anyio's private per-task state table on asyncio (``_task_states``: task -> state with
    ``cancel_scope``; scopes with ``_cancel_called``, ``_shield``, ``_parent_scope``), or
    ``None`` if a future anyio moved it; imported at the first check."""
    try:
        from anyio._backends._asyncio import _task_states
    except ImportError:  # pragma: no cover - a future anyio (the pin and the test catch it)
        return None
    return _task_states


class CancelCheck:
    """``await check()``: raise if the calling task's cancel scope was cancelled. Use within
    one event loop (the backend is found on the first call: the public
    ``anyio.lowlevel.checkpoint_if_cancelled`` looks it up on every call, which costs as much
    as the check itself on a request's hot path).

    On a hot path, ``if check.pending(): await check()``: :meth:`pending` walks the task's
    cancel scopes as anyio's check does, but with no coroutine and no property calls (most
    of a call's cost when nothing is cancelled); ``await check()`` then raises."""

    __slots__ = ("_backend", "_states")

    def __init__(self) -> None:
        self._backend: type[AsyncBackend] | None = None
        self._states: Any = None

    def pending(self, loop: asyncio.AbstractEventLoop | None = None) -> bool:
        """Whether a cancel scope around the calling task (inside its innermost shield) was
        cancelled, so that ``await self()`` would raise; ``True`` when it cannot tell.
        ``loop``: the running loop, when the caller holds it (looking it up is a ``getpid``
        system call on 3.11, about a third of the check)."""
        states = self._states
        if states is None:
            states = self._states = scope_states()
            if states is None:  # pragma: no cover - a future anyio: always check
                return True
        global _tasks
        if _tasks is False:
            _tasks = current_tasks()
        if loop is None:
            loop = asyncio.get_running_loop()
        task = _tasks.get(loop) if _tasks is not None else asyncio.current_task(loop)
        if task is None:
            return False
        # states.get(task), without its Python frame (the table is a WeakKeyDictionary)
        state = states.data.get(weakref.ref(task))
        scope = None if state is None else state.cancel_scope
        while scope is not None:
            if scope._cancel_called:
                return True
            if scope._shield:
                return False
            scope = scope._parent_scope
        return False

    async def __call__(self) -> None:
        backend = self._backend
        if backend is None:
            get_async_backend = backend_lookup()
            if get_async_backend is None:  # pragma: no cover - a future anyio
                import anyio.lowlevel

                await anyio.lowlevel.checkpoint_if_cancelled()
                return
            backend = self._backend = get_async_backend()
        await backend.checkpoint_if_cancelled()


def is_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` is a real cancellation of the running task (the peer's cancel, a
    session or server ending), which a handler must let through; every other
    ``BaseException`` of a handler is its failure, answered with an error (issue 28 F18):

    - ``CancelledError`` while nobody cancelled the task (``cancelling() == 0``): one the
      handler raised itself, or of a future someone else cancelled, leaked out of it;
    - ``GeneratorExit``: asyncio never closes a running task's coroutine (it cancels it),
      so one that reaches here was raised by the handler (or a generator it drove);
    - ``KeyboardInterrupt`` / ``SystemExit``: asyncio turns Ctrl-C into a cancellation of
      the main task, and a thread never gets one, so these were raised by the handler
      (``sys.exit()`` in a wrapped CLI, argparse): its request fails, the server serves on;
    - ``StopIteration`` is a ``RuntimeError`` by then in a coroutine (PEP 479) and in a
      thread (``threads.py``); ``StopAsyncIteration`` is an ordinary ``Exception``.
    """
    if not isinstance(exc, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0


class Raised:
    """A handler's exception carried out of a task or a future as its *result*, to be raised
    again by whoever awaits it (:func:`carried`, :meth:`reraise`), because the task or future
    cannot carry it (issue 28 F18): ``StopIteration`` (``set_exception`` refuses it);
    ``GeneratorExit`` (a task throws an awaited future's exception into its coroutine, and a
    thrown ``GeneratorExit`` closes every coroutine in the await chain instead of reaching
    their error handling); ``CancelledError`` (it would read as the awaiting task being
    cancelled); ``KeyboardInterrupt`` and ``SystemExit`` (a task re-raises them out of the
    event loop, which ends the server)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error

    @staticmethod
    def reraise(value: Any) -> Any:
        """``value``, or its carried exception raised."""
        if type(value) is Raised:
            raise value.error
        return value


def carried(error: BaseException) -> bool:
    """Whether ``error`` must travel as :class:`Raised` rather than as a task's or future's
    exception (anything but an ordinary ``Exception`` other than ``StopIteration``)."""
    return not isinstance(error, Exception) or isinstance(error, StopIteration)


# ---------------------------------------------------------------------------- Flag


class Flag:
    """``set()``, ``is_set()`` and ``await wait()``, like ``asyncio.Event``, but the event (and
    its waiter queue, about 0.8 KB) is built on the first ``wait``: a per-session flag is
    mostly only set and read."""

    __slots__ = ("_event", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: asyncio.Event | None = None

    def set(self) -> None:
        self._set = True
        if self._event is not None:
            self._event.set()

    def is_set(self) -> bool:
        return self._set

    async def wait(self) -> None:
        if self._event is None:
            self._event = asyncio.Event()
            if self._set:
                self._event.set()
        await self._event.wait()


# ---------------------------------------------------------------------------- the loop


def module_installed(name: str) -> bool:
    """Whether ``name`` can be imported (found, not imported)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def choose_loop(loop: str = "auto", *, installed: Callable[[str], bool] = module_installed) -> str:
    """The event loop a server runs on: ``"auto"`` picks uvloop when installed (not on
    Windows), else asyncio; a forced ``"uvloop"`` that is missing is an error. uvloop's
    scheduling is C where asyncio's is Python (``call_soon``, a task's steps): a stdio server
    spends about 13% fewer instructions per ``tools/call`` with 32 in flight, 23% fewer one at
    a time (callgrind, issue 15)."""
    if loop not in ("auto", "asyncio", "uvloop"):
        raise ValueError(f"loop must be 'auto', 'asyncio' or 'uvloop', not {loop!r}")
    uvloop_ok = sys.platform != "win32" and installed("uvloop")
    if loop == "auto":
        return "uvloop" if uvloop_ok else "asyncio"
    if loop == "uvloop" and not uvloop_ok:
        raise ImportError(
            "loop='uvloop' needs uvloop (not on Windows): pip install 'mcpbind[http]'"
        )
    return loop
