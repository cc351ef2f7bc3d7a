"""The one runner of inbound requests, for every entry (issue 29).

Whatever carried a request (a connection's read loop over stdio, memory or a busy HTTP session;
an HTTP session at rest answering in the POST's own task; a 2026-07-28 POST or a 2025
sessionless POST with no session at all), once it is accepted it is run here, by one
:class:`Runner`:

- the **in-flight table**: each running request by its key (its JSON-RPC id on a session), so a
  ``notifications/cancelled`` right behind its request finds it;
- the **bounds**: ``limit`` per runner (a session's ``max_inflight``) and an
  :class:`InflightLimit` shared by every runner of one server; beyond either the request is
  answered "Server busy" at once and nothing runs for it;
- **cancellation**: :meth:`Runner.cancel` interrupts exactly that request, whose answer is then
  never sent; a cancellation that is not ours (the runner's owner shutting down) propagates;
- **running the handler**: the entry's handler (the server layer's: it builds the era's peer
  and context) with :data:`current_request_id` set, in a task of its own (:meth:`Runner.start`)
  or in the caller's (:meth:`Runner.run_here`);
- **mapping the outcome**: a result is encoded, a handler's exception (``SystemExit`` included,
  not a cancellation) becomes an error response, logged with its traceback unless it is an
  ``McpError`` (an answer chosen on purpose), and a result that cannot be encoded becomes an
  error too. How bytes are made is the :class:`Replies` the runner was given: the protocol
  core of a connection (which also keeps its at-most-once answer rule and the handshake
  state) or :class:`PlainReplies` for a request without a session.
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import msgspec

from ._asyncio import InPlaceStarter, is_cancellation, start_eager
from ._lazy import LazyModule, lazy_logger
from .protocol import INTERNAL_ERROR, McpError, RequestId, RequestReceived, error_for_exception
from .protocol.wire import encode_error, encode_result
from .transports import TransportClosed

if TYPE_CHECKING:
    import asyncio

    import anyio
else:  # imported when a loop first uses it, not with mcpbind (issue 15, cold start)
    asyncio, anyio = LazyModule("asyncio", globals()), LazyModule("anyio", globals())

__all__ = [
    "Answer",
    "InflightLimit",
    "PlainReplies",
    "Replies",
    "Request",
    "RequestHandler",
    "Runner",
    "current_request_id",
]

logger = lazy_logger("mcpbind.connection")
#: Where a handler's uncaught exception is logged, with its traceback, by the side it ran on.
_FAILURES = {"server": lazy_logger("mcpbind.server"), "client": lazy_logger("mcpbind.client")}

#: The id of the inbound request whose handler runs in this task (``None`` outside one): a
#: transport that multiplexes streams (Streamable HTTP) sends what the handler emits on it.
current_request_id: contextvars.ContextVar[RequestId | None] = contextvars.ContextVar(
    "mcpbind_current_request_id", default=None
)

#: The entry's handler: the awaitable that answers an accepted request (the server layer builds
#: the era's peer and context in it).
RequestHandler = Callable[[RequestReceived], Awaitable[Any]]


class Request(Protocol):
    """What the runner reads of a request: its id and method (a connection's
    ``RequestReceived``, or an HTTP entry's own record of one POSTed request)."""

    @property
    def id(self) -> RequestId: ...

    @property
    def method(self) -> str: ...


_R = TypeVar("_R", bound=Request)

_GONE = (TransportClosed, OSError)  # anyio's closed-stream errors are added at first use


class InflightLimit:
    """A count of inbound requests in flight shared by several runners (one server's), and its
    bound."""

    __slots__ = ("count", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0


class Replies(Protocol):
    """How a runner turns a request's outcome into the bytes of its answer. ``None``: nothing
    is to be sent (the request was already answered, or is unknown)."""

    @property
    def role(self) -> str:
        """``"server"`` or ``"client"``: where a handler's failure is logged."""
        ...

    def result(self, request_id: RequestId, result: Any) -> bytes | None: ...

    def error(self, request_id: RequestId, error: McpError) -> bytes | None: ...

    def error_for(self, exc: BaseException) -> McpError:
        """The error answer for a handler's exception (its text only in debug mode)."""
        ...

    def forget(self, request_id: RequestId) -> None:
        """The request ends unanswered (its peer cancelled it)."""
        ...


class PlainReplies:
    """:class:`Replies` for requests without a session (one HTTP POST): plain JSON-RPC
    encoding; error ``data`` that cannot be encoded is left out, code and message still go.
    ``debug``: asked on each failure whether its exception's text goes to the client."""

    __slots__ = ("debug",)

    role = "server"

    def __init__(self, debug: Callable[[], bool] = lambda: False) -> None:
        self.debug = debug

    def result(self, request_id: RequestId, result: Any) -> bytes | None:
        return encode_result(request_id, result)

    def error(self, request_id: RequestId, error: McpError) -> bytes | None:
        try:
            return encode_error(request_id, error)
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            logger.error(
                "data of error %s could not be encoded, sent without it: %s", error.code, exc
            )
            return encode_error(request_id, McpError(error.code, error.message))

    def error_for(self, exc: BaseException) -> McpError:
        return error_for_exception(exc, self.debug())

    def forget(self, request_id: RequestId) -> None:
        pass


class Answer(msgspec.Struct, frozen=True):
    """What :meth:`Runner.run_here` made of a request: its encoded answer (``None``: nothing
    is to be sent, the request was cancelled or the runner closed), the error it carries, if
    any, and whether it is the "Server busy" refusal."""

    data: bytes | None
    error: McpError | None = None
    busy: bool = False


_CANCELLED = Answer(None)
_ABSENT: Any = object()


class Runner:
    """Runs the inbound requests of one session (or of one server's sessionless requests): the
    in-flight table, the bounds, cancellation, the handler, the answer.

    ``send`` (for :meth:`start`) writes an answer; a peer gone meanwhile is logged, not raised.
    ``limit``: requests of this runner in flight at once (``None``: only the shared bound);
    ``shared``: the bound shared with the other runners of the same server."""

    def __init__(
        self,
        replies: Replies,
        handler: RequestHandler,
        *,
        limit: int | None = None,
        shared: InflightLimit | None = None,
    ) -> None:
        self.replies = replies
        self.handler = handler
        self.limit = limit if limit is not None else float("inf")
        self.shared = shared
        #: Running requests by key (``None`` while an eagerly started handler takes its first
        #: step); and those the peer cancelled.
        self._running: dict[Any, asyncio.Task[Any] | None] = {}
        self._cancelled: set[Any] = set()
        self._refusals: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._starter: InPlaceStarter | None = None
        self._send: Callable[[bytes], Awaitable[None]] = _unbound_send
        #: No request runs any more, and one still running ends unanswered if interrupted.
        self.closed = False

    # ------------------------------------------------------------------ lifecycle
    def bind(
        self, loop: asyncio.AbstractEventLoop, send: Callable[[bytes], Awaitable[None]]
    ) -> None:
        """Run handlers on ``loop`` (a task only for those that wait) and send answers with
        ``send``; before the first :meth:`start`."""
        self._loop = loop
        self._starter = InPlaceStarter(loop, "mcpbind handler")
        self._send = send

    def close(self) -> None:
        """The owner closed (the peer is gone): no request starts from now on, and those
        running are interrupted; their interruption ends in the runner."""
        self.closed = True
        for key, running in list(self._running.items()):
            if running is not None:
                self._interrupt(key, running)

    async def stop(self) -> None:
        """:meth:`close`, then wait for the interrupted requests to end. The handler is dropped:
        its owner holds this runner (a cycle otherwise)."""
        tasks = self.running_tasks()
        self.close()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._starter is not None:
            self._starter.close()
        self.handler = _closed_handler

    @property
    def spare_task(self) -> asyncio.Task[Any] | None:
        """The idle task kept to run the next handler that waits (``InPlaceStarter``)."""
        return None if self._starter is None else self._starter.spare

    def inflight(self) -> list[Any]:
        """The keys (ids, on a session) of the requests running now."""
        return list(self._running)

    def running_tasks(self) -> list[asyncio.Task[Any]]:
        """The tasks of the requests running now (not those still in their first step)."""
        return [task for task in self._running.values() if task is not None]

    # ------------------------------------------------------------------ state
    @property
    def idle(self) -> bool:
        """No request is running."""
        return not self._running

    def __len__(self) -> int:
        return len(self._running)

    def is_cancelled(self, key: object) -> bool:
        """Whether this request was cancelled by its peer (its handler is being interrupted)."""
        return key in self._cancelled

    def has_room(self, needed: int = 1) -> bool:
        """Whether ``needed`` more requests fit under both bounds."""
        shared = self.shared
        return len(self._running) + needed <= self.limit and (
            shared is None or shared.count + needed <= shared.limit
        )

    def busy_error(self, needed: int = 1) -> McpError:
        """The "Server busy" refusal, naming the bound that is reached."""
        shared = self.shared
        if len(self._running) + needed > self.limit or shared is None:
            limit, scope = self.limit, "session"
        else:
            limit, scope = shared.limit, "server"
        if needed > 1 and shared is not None:
            return McpError(
                INTERNAL_ERROR,
                f"Server busy: a batch of {needed} requests does not fit in the {shared.limit} "
                f"in flight allowed on this server ({shared.count} running)",
            )
        return McpError(
            INTERNAL_ERROR, f"Server busy: {limit} requests in flight on this {scope}; retry later"
        )

    # ------------------------------------------------------------------ entries
    def start(self, event: RequestReceived) -> None:
        """Run ``event`` in a task of its own (its first step at once, in place) and send its
        answer; refused at once, "Server busy", beyond a bound."""
        shared = self.shared
        if len(self._running) >= self.limit or (
            shared is not None and shared.count >= shared.limit
        ):
            self.send_soon(self.replies.error(event.id, self.busy_error()))
            return
        if shared is not None:
            shared.count += 1
        # The entry exists before the handler starts, so a cancel right behind its request
        # finds it; a handler done in its first step (no task) removes it (``_run``'s finally).
        self._running[event.id] = None
        assert self._starter is not None, "Runner.bind() first"
        task = self._starter.start(self._run(event))
        if task is not None and event.id in self._running:
            self._running[event.id] = task

    async def _run(self, event: RequestReceived) -> None:
        """Run the handler and send its answer: one coroutine per request (hot path)."""
        rid = event.id
        current_request_id.set(rid)
        try:
            try:
                result = await self.handler(event)
            except BaseException as exc:  # SystemExit from a handler fails its request, not us
                if is_cancellation(exc):
                    raise
                data = self._failed(event, rid, exc)
            else:
                try:
                    data = self.replies.result(rid, result)
                except (TypeError, ValueError, msgspec.EncodeError) as exc:
                    data = self._unencodable(event, rid, exc).data
            if data is not None:
                try:
                    await self._send(data)
                except (*_GONE, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    logger.debug("peer gone before the response could be sent")
        except asyncio.CancelledError:
            if rid not in self._cancelled and not self.closed:
                raise  # not ours to swallow
        finally:
            self._done(rid)

    async def run_here(
        self,
        event: _R,
        handler: Callable[[_R], Awaitable[Any]] | None = None,
        *,
        key: object = None,
        reserved: bool = False,
    ) -> Answer:
        """Run ``event`` in the calling task and return its answer instead of sending it: for
        an entry that answers each request on a response of its own (an HTTP POST). The same
        table, bounds, cancellation (:meth:`cancel` with ``key`` cancels the calling task;
        that cancellation ends here) and mapping as :meth:`start`. ``handler``: instead of the
        runner's; ``key``: the request's key in the table when ids may repeat (requests of
        different clients), else its id; ``reserved``: its slot of the shared bound was taken
        with :meth:`reserve`."""
        if self.closed:
            return _CANCELLED
        shared = self.shared
        running = self._running
        if len(running) >= self.limit or (
            not reserved and shared is not None and shared.count >= shared.limit
        ):
            error = self.busy_error()
            return Answer(self.replies.error(event.id, error), error, True)
        rid = event.id
        if key is None:
            key = rid
        task = asyncio.current_task(self._loop)  # its loop given: no getpid() on 3.11
        assert task is not None
        counted = None if reserved else shared  # the bound this request's slot is taken from
        if counted is not None:
            counted.count += 1
        running[key] = task
        run: Callable[[Any], Awaitable[Any]] = handler or self.handler
        token = current_request_id.set(rid)
        try:
            result = await run(event)
        except BaseException as exc:  # SystemExit from a handler fails its request, not us
            if not is_cancellation(exc):
                return self._failure(event, rid, exc)
            if key not in self._cancelled and not self.closed:
                raise  # not ours to swallow
            task.uncancel()  # ours: the peer cancelled the request, or the runner closed
            return _CANCELLED
        else:
            try:
                return Answer(self.replies.result(rid, result))
            except (TypeError, ValueError, msgspec.EncodeError) as exc:
                return self._unencodable(event, rid, exc)
        finally:
            current_request_id.reset(token)
            running.pop(key, None)
            if counted is not None:
                counted.count -= 1
            if self._cancelled:
                self._forget_cancelled(key)

    def reserve(self, needed: int) -> McpError | None:
        """Take ``needed`` slots of the shared bound at once (a batch that fits whole or not at
        all), for requests run with ``reserved=True``; the refusal if they do not fit. Give
        them back with :meth:`unreserve`."""
        if not self.has_room(needed):
            return self.busy_error(needed)
        if self.shared is not None:
            self.shared.count += needed
        return None

    def unreserve(self, needed: int) -> None:
        if self.shared is not None:
            self.shared.count -= needed

    def cancel(self, key: object) -> None:
        """The peer cancelled this request: interrupt its handler; its answer is never sent."""
        running = self._running.get(key)
        if running is not None:
            self._cancelled.add(key)
            self._interrupt(key, running)

    # ------------------------------------------------------------------ answers
    def _failed(
        self, event: Any, rid: RequestId, exc: BaseException, failure: list[McpError] | None = None
    ) -> bytes | None:
        """The error answer for a handler's exception (``None`` once the peer cancelled it);
        the error also goes into ``failure``, when given."""
        if rid in self._cancelled:
            return None
        replies = self.replies
        if not isinstance(exc, McpError):  # an McpError is an answer chosen on purpose
            _FAILURES[replies.role].error("handler for %s failed", event.method, exc_info=exc)
        error = replies.error_for(exc)
        if failure is not None:
            failure.append(error)
        return replies.error(rid, error)

    def _failure(self, event: Any, rid: RequestId, exc: BaseException) -> Answer:
        """:meth:`_failed` as :meth:`run_here` returns it (nothing to send once cancelled)."""
        failure: list[McpError] = []
        data = self._failed(event, rid, exc, failure)
        return Answer(data, failure[0] if failure else None) if data is not None else _CANCELLED

    def _unencodable(self, event: Any, rid: RequestId, exc: BaseException) -> Answer:
        """The error answer for a handler's result that cannot be encoded."""
        logger.error("result of %s could not be encoded: %s", event.method, exc)
        error = self.replies.error_for(exc)
        return Answer(self.replies.error(rid, error), error)

    def send_soon(self, data: bytes | None) -> None:
        """Send an answer made at once (a refusal) from its own task, started eagerly so that
        it is written in order with the answers around it, while the reader goes on reading
        even if a peer that does not read makes the write wait."""
        if data is None:
            return
        assert self._loop is not None, "Runner.bind() first"
        task = start_eager(self._loop, self._write(data), "mcpbind reply")
        self._refusals.add(task)
        task.add_done_callback(self._refusals.discard)

    async def _write(self, data: bytes) -> None:
        try:
            await self._send(data)
        except (*_GONE, anyio.BrokenResourceError, anyio.ClosedResourceError):
            logger.debug("peer gone before the response could be sent")

    # ------------------------------------------------------------------ bookkeeping
    def _interrupt(self, key: object, running: asyncio.Task[Any]) -> None:
        running.cancel()
        # A task cancelled before its first step never runs (not even its ``finally``), so
        # its bookkeeping is done here; a started one does it in ``_run``.
        if _not_started(running):
            self._done(key)

    def _done(self, key: Any) -> None:
        if self._running.pop(key, _ABSENT) is not _ABSENT and self.shared is not None:
            self.shared.count -= 1
        if self._cancelled:
            self._forget_cancelled(key)

    def _forget_cancelled(self, key: Any) -> None:
        if key in self._cancelled:
            self._cancelled.discard(key)
            self.replies.forget(key)


async def _unbound_send(data: bytes) -> None:  # pragma: no cover - start() asserts bind()
    raise RuntimeError("Runner.bind() first")


async def _closed_handler(event: RequestReceived) -> Any:  # pragma: no cover - none after close
    raise McpError(INTERNAL_ERROR, "Connection closed")


def _not_started(task: asyncio.Task[Any]) -> bool:
    coro = task.get_coro()
    return inspect.iscoroutine(coro) and inspect.getcoroutinestate(coro) == inspect.CORO_CREATED
