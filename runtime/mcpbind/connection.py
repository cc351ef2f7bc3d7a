"""The async driver of one connection: the sans-I/O core plus a transport plus tasks; the
JSON-RPC peer's job.

``Connection`` reads messages in one task, hands them to the core, resolves waiting callers,
times our requests out, hands the peer's requests to its :class:`~mcpbind.runner.Runner` (which
runs them, bounds them, cancels them on ``notifications/cancelled`` and sends their answers),
and fails every pending call at once when the transport closes. Every cancellation path is
explicit: a caller's cancel scope, a timeout, an inbound cancel, and the peer going away.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from mcpbind_types._common import MethodInfo, RequestOptions

from ._asyncio import CancelCheck, Flag
from ._lazy import LazyModule, lazy_logger
from .peer_errors import ConnectionClosed, PeerError, RequestTimeout, raised_for
from .protocol import (
    Cancelled,
    ErrorReceived,
    Event,
    McpError,
    NotificationReceived,
    Outgoing,
    ProgressReceived,
    RequestId,
    RequestReceived,
    ResponseReceived,
    Session,
    UrlElicitationRequired,
)
from .runner import InflightLimit, RequestHandler, Runner
from .transports import MessagePump, MessageTooLarge, Transport, TransportClosed

if TYPE_CHECKING:
    import asyncio

    import anyio
else:  # imported when a loop first uses it, not with mcpbind (issue 15, cold start)
    asyncio, anyio = LazyModule("asyncio", globals()), LazyModule("anyio", globals())

__all__ = [
    "ClientMiddleware",
    "Connection",
    "ConnectionClosed",
    "NotificationHandler",
    "OutgoingCall",
    "PeerError",
    "RequestTimeout",
    "SendNext",
    "Waiter",
]

logger = lazy_logger("mcpbind.connection")

NotificationHandler = Callable[[NotificationReceived], Awaitable[None]]


class Waiter(msgspec.Struct):
    """One request we sent, awaiting its outcome on an asyncio future."""

    method: str
    options: RequestOptions | None
    started: float
    timeout: float | None
    #: Awaited by the caller.
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


class OutgoingCall(msgspec.Struct):
    """One request a connection sends, as a client middleware sees it: the method, its params
    (typed, or a dict; ``None`` without), the request options and the method's table row if
    the caller gave one, and the connection that sends it. Pass a changed copy on
    (``msgspec.structs.replace(call, params=...)``) to change what is sent."""

    method: str
    params: Any
    options: RequestOptions | None
    info: MethodInfo[Any, Any] | None
    connection: Connection


SendNext = Callable[[OutgoingCall], Awaitable[Any]]
"""The rest of a client middleware chain: the next middleware, or the send itself."""

ClientMiddleware = Callable[[OutgoingCall, SendNext], Awaitable[Any]]
"""``async def middleware(call, send_next) -> result``: around every outgoing request."""


def _send_call(call: OutgoingCall) -> Awaitable[Any]:
    return call.connection.exchange(call.method, call.params, call.options, call.info)


def _link(layer: ClientMiddleware, send_next: SendNext) -> SendNext:
    def step(call: OutgoingCall) -> Awaitable[Any]:
        return layer(call, send_next)

    return step


async def _through(chain: SendNext, call: OutgoingCall) -> Any:
    return await chain(call)


class _CoreReplies:
    """The protocol core as the runner's :class:`~mcpbind.runner.Replies`: its answers keep the
    core's at-most-once rule and the handshake state. Bound methods held as attributes: no
    frame of its own per answer."""

    __slots__ = ("error", "error_for", "forget", "result", "role")

    def __init__(self, core: Session) -> None:
        self.role = core.role
        self.result = core.send_response
        self.error = core.send_error
        self.error_for = core.error_for_exception
        self.forget = core.release


class Connection:
    """One session over one transport. Use as ``async with Connection(...) as conn``."""

    def __init__(
        self,
        core: Session,
        transport: Transport,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler | None = None,
        default_timeout: float | None = 60.0,
    ) -> None:
        self.core = core
        self.transport = transport
        self._on_notification = on_notification
        self.default_timeout = default_timeout
        self._waiters: dict[RequestId, Waiter] = {}
        #: Client middleware around every request sent (:meth:`use_middleware`), and its chain.
        self.middleware: tuple[ClientMiddleware, ...] = ()
        self._outgoing: SendNext | None = None
        #: Runs the peer's requests: the one in-flight table, bounds, cancellation, answers.
        self.runner = Runner(_CoreReplies(core), on_request, limit=core.options.max_inflight)
        self._loop: asyncio.AbstractEventLoop  # set on entry (``async with``)
        self._check_cancelled = CancelCheck()
        self._tg: anyio.abc.TaskGroup | None = None
        self._reader: asyncio.Task[None] | None = None  # the read loop
        self._closed = Flag()
        self._is_closed = False  # mirrors _closed, read on every request
        self._tokens = itertools.count(1)
        #: The loop's clock (``time.monotonic`` itself when the loop reads that).
        self._clock: Callable[[], float] = time.monotonic
        #: Request timeouts: one timer at the earliest deadline of the requests in flight (when
        #: it was set), which expires the requests due and sets itself again for the next one;
        #: a request arms nothing unless its deadline comes before the timer's.
        self._timer: asyncio.TimerHandle | None = None
        self._due = math.inf  # when the timer fires
        #: Events of the last message the read loop still has to dispatch, in order.
        self._backlog: list[Event] = []
        self.close_reason: str | None = None
        #: The transport's declared features (``MessagePump``), read once when it starts.
        self._pump: MessagePump | None = None
        self._send_checks_cancellation = False
        #: Told of each -32042 answer to one of our requests before it is raised to the caller.
        self.on_url_elicitation: Callable[[UrlElicitationRequired], None] | None = None
        #: Seconds the handlers still running at the end of the peer's input get to finish
        #: and send their answers, on a transport that ``writes_after_eof`` (then cancelled).
        self.eof_grace = 0.0
        self._writes_after_eof = False

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> Connection:
        self._loop = asyncio.get_running_loop()
        self.runner.bind(self._loop, self.transport.send)
        if type(self._loop).time is not asyncio.BaseEventLoop.time:
            self._clock = self._loop.time
        transport = self.transport
        if isinstance(transport, MessagePump):
            self._pump = transport
            self._send_checks_cancellation = transport.send_checks_cancellation
            self._writes_after_eof = transport.writes_after_eof
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        # A plain task, like the handlers: an anyio task also holds a cancel scope and an
        # event, most of what an idle session holds.
        self._reader = self._loop.create_task(self._read_loop())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._tg is not None
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
        self._tg.cancel_scope.cancel()
        failure: BaseException | None = None
        try:
            await self._tg.__aexit__(None, None, None)
        finally:
            if reader is not None:
                with anyio.CancelScope(shield=True):
                    await asyncio.wait([reader])
                if not reader.cancelled():
                    failure = reader.exception()  # a bug in the read loop is not swallowed
            with anyio.CancelScope(shield=True):
                await self.runner.stop()  # the owner's handler is dropped (a cycle otherwise)
            self._fail_all("Connection closed")
            with anyio.CancelScope(shield=True):
                await self.transport.aclose()
            self._on_notification = None  # the owner holds this connection (a cycle otherwise)
        if failure is not None:
            raise failure

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``fn`` in the connection's task group (it ends with the connection); for work a
        notification triggers that must not block the read loop, such as a request."""
        assert self._tg is not None, "the connection is not running"
        self._tg.start_soon(fn)

    @property
    def started(self) -> bool:
        """Entered (``async with``): :meth:`spawn` works (until it exits)."""
        return self._tg is not None

    @property
    def idle(self) -> bool:
        """No handler is running and no request of ours awaits its response."""
        return self.runner.idle and not self._waiters

    @property
    def shared_limit(self) -> InflightLimit | None:
        """Requests in flight across connections (a server's sessions), if bounded."""
        return self.runner.shared

    @shared_limit.setter
    def shared_limit(self, shared: InflightLimit | None) -> None:
        self.runner.shared = shared

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    # ------------------------------------------------------------------ sending
    async def send(self, data: bytes | None) -> None:
        # Transports write each message whole even when several tasks send at once.
        if data is not None:
            await self.transport.send(data)

    def request(
        self,
        method: str,
        params: Any = None,
        options: RequestOptions | None = None,
        *,
        info: MethodInfo[Any, Any] | None = None,
    ) -> Coroutine[Any, Any, Any]:
        """Send a request and wait for its result (raises McpError for an error response).
        ``info``: the table row to send it under (a task-augmented call's result type).
        Every outgoing request passes here, through the :attr:`middleware` chain if any
        (:meth:`use_middleware`); the coroutine is returned for the caller to await."""
        if self._outgoing is None:
            return self.exchange(method, params, options, info)
        return _through(self._outgoing, OutgoingCall(method, params, options, info, self))

    def use_middleware(self, layers: Sequence[ClientMiddleware]) -> None:
        """Run every request this connection sends through ``layers`` (the first outermost);
        ``()``: none (the request path is then exactly :meth:`exchange`)."""
        chain: SendNext | None = None
        if layers:
            chain = _send_call
            for layer in reversed(layers):
                chain = _link(layer, chain)
        self._outgoing = chain
        self.middleware = tuple(layers)

    async def exchange(
        self,
        method: str,
        params: Any = None,
        options: RequestOptions | None = None,
        info: MethodInfo[Any, Any] | None = None,
    ) -> Any:
        """:meth:`request` past the middleware: send the request, wait for its answer."""
        if self._is_closed:
            raise ConnectionClosed(self.close_reason)
        if not self._send_checks_cancellation and self._check_cancelled.pending(self._loop):
            await self._check_cancelled()  # a cancelled caller sends nothing
        token: int | str | None = None
        if options is not None and (options.on_progress or options.reset_timeout_on_progress):
            token = next(self._tokens)
        request_id, data = self.core.send_request(method, params, progress_token=token, info=info)
        timeout = None if options is None else options.timeout
        if timeout is None:
            timeout = self.default_timeout
        started = self._clock()
        waiter = Waiter(method, options, started, timeout, asyncio.Future(loop=self._loop))
        self._waiters[request_id] = waiter
        if timeout is not None:
            if options is None:  # _arm's steps, copied (make bench-inlines, test_inlines)
                waiter.deadline = deadline = started + timeout
                if deadline < self._due:
                    self._set_timer(deadline)
            else:
                self._arm(waiter, started)
        try:
            try:
                await self.transport.send(data)  # send's, copied: data is never None
            except (TransportClosed, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                self.core.cancel(request_id)  # forget it; nothing reached the peer
                raise ConnectionClosed(str(exc) or self.close_reason) from None
            await waiter.future
            if waiter.timed_out:
                await self._cancel_remote(request_id, "timeout")
                raise RequestTimeout(method, self._clock() - waiter.started)
        except BaseException:
            # The caller was cancelled: tell the peer. A request cancelled while the
            # transport was still writing it may have gone out in part, and is then written
            # whole (a message is never torn): it is cancelled as a sent one (a cancel of an
            # id the peer never received is ignored, cancellation.mdx). The notification goes
            # out in the background, after whatever is queued before it: a peer that does not
            # read must not keep the cancelled caller waiting.
            if not waiter.done and request_id in self._waiters:
                self._waiters.pop(request_id, None)
                cancel = self.core.cancel(request_id, "cancelled by the caller")
                if cancel is not None and not self.closed:
                    self.runner.send_soon(cancel)
            raise
        finally:
            self._waiters.pop(request_id, None)
        if waiter.error is not None:
            raised = raised_for(waiter.error)
            if isinstance(raised, UrlElicitationRequired) and self.on_url_elicitation is not None:
                self.on_url_elicitation(raised)
            raise raised
        return waiter.result

    async def _cancel_remote(self, request_id: RequestId, reason: str) -> None:
        self._waiters.pop(request_id, None)
        data = self.core.cancel(request_id, reason)
        if data is not None and not self.closed:
            with contextlib.suppress(
                TransportClosed, anyio.BrokenResourceError, anyio.ClosedResourceError
            ):
                await self.send(data)

    def _arm(self, waiter: Waiter, start: float) -> None:
        """(Re)start the request's timeout from ``start``, never past its total cap."""
        assert waiter.timeout is not None
        deadline = start + waiter.timeout
        opts = waiter.options
        if opts is not None and opts.max_total_timeout is not None:
            deadline = min(deadline, waiter.started + opts.max_total_timeout)
        waiter.deadline = deadline
        if deadline < self._due:
            self._set_timer(deadline)

    def _set_timer(self, when: float) -> None:
        if self._timer is not None:  # it was due later
            self._timer.cancel()
        self._due, self._timer = when, self._loop.call_at(when, self._expire_due)

    def _expire_due(self) -> None:
        """The timer: time out the requests whose deadline has passed, and set the timer for
        the earliest deadline still ahead (a scan of the requests in flight, once per
        earliest deadline: nothing per request)."""
        self._timer = None
        self._due = math.inf
        now = self._clock()
        ahead = math.inf
        for waiter in list(self._waiters.values()):
            if waiter.done:
                continue
            if waiter.deadline <= now:
                waiter.timed_out = True
                waiter.set()
            elif waiter.deadline < ahead:
                ahead = waiter.deadline
        if ahead < math.inf:
            self._set_timer(ahead)

    async def notify(self, method: str, params: Any = None) -> None:
        if self.closed:
            raise ConnectionClosed(self.close_reason)
        try:
            await self.send(self.core.send_notification(method, params))
        except (TransportClosed, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise ConnectionClosed(str(exc) or self.close_reason) from None

    # ------------------------------------------------------------------ receiving
    async def _read_loop(self) -> None:
        reason = "Connection closed"
        at_eof = False
        try:
            transport = self.transport
            # A transport that can push (stdio) hands messages to ``_take`` straight from the
            # event loop's read callback; ``_take`` handles what needs no waiting and stops
            # the pump to leave the rest to this loop.
            pump = self._pump.pump if self._pump is not None else None
            runner = self.runner
            while True:
                try:
                    if pump is not None:
                        await pump(self._take)
                    else:
                        self._backlog = self.core.receive(await transport.receive())
                except MessageTooLarge as exc:
                    # Answered on its id when readable; a response fails its call at once.
                    self._backlog = self.core.refuse_oversized(exc.head, exc.tail, exc.limit)
                backlog, self._backlog = self._backlog, []
                for event in backlog:
                    # _dispatch's two common branches, copied: no coroutine per event
                    # (make bench-inlines; tied to _dispatch by tests/test_inlines.py).
                    kind = type(event)
                    if kind is ResponseReceived:
                        self._resolve(event.id, result=event.result)  # type: ignore[union-attr]
                    elif kind is RequestReceived:
                        runner.start(event)  # type: ignore[arg-type]
                    else:
                        await self._dispatch(event)
        except (
            TransportClosed,
            anyio.EndOfStream,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
        ) as exc:
            reason = str(exc) or "peer closed the connection"
            at_eof = True
        finally:
            self.close_reason = reason
            try:  # stdin at EOF, stdout open (``printf '<request>\\n' | server``): answer
                running = self.runner.running_tasks()
                if at_eof and self._writes_after_eof and running and self.eof_grace > 0:
                    self._fail_all(reason, owed=True)
                    self._is_closed = True  # the handlers' own requests fail from here on
                    await asyncio.wait(running, timeout=self.eof_grace)
            finally:
                self._fail_all(reason)
                self._is_closed = True
                self._closed.set()
                self.runner.close()

    def _take(self, data: bytes) -> bool:
        """The pump's handler: handle one message's events that need no waiting (responses,
        requests, cancellations) at once; at the first that does, keep it and the rest in
        the backlog for the read loop and stop the pump (``False``)."""
        events = self.core.receive(data)
        for index, event in enumerate(events):
            kind = type(event)
            if kind is ResponseReceived:  # _resolve's steps, copied (make bench-inlines)
                waiter = self._waiters.get(event.id)  # type: ignore[union-attr]
                if waiter is not None and not waiter.done:
                    waiter.result, waiter.done = event.result, True  # type: ignore[union-attr]
                    if not waiter.future.done():  # (cancelled with its caller)
                        waiter.future.set_result(None)
            elif kind is RequestReceived:
                self.runner.start(event)  # type: ignore[arg-type]
            elif kind is ErrorReceived:
                self._resolve(event.id, error=event.error)  # type: ignore[union-attr]
            elif kind is Cancelled:
                self.runner.cancel(event.request_id)  # type: ignore[union-attr]
            elif kind is Outgoing:
                self.runner.send_soon(event.data)  # type: ignore[union-attr]
            else:
                self._backlog = events[index:]
                return False
        return True

    def _fail_all(self, reason: str, *, owed: bool = False) -> None:
        """Fail our requests waiting for answers; ``owed``: the peer's requests are still
        owed theirs (the session stays open for them), else it closes."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._due = None, -math.inf  # no timer is set again
        error = ConnectionClosed(reason)
        for ev in self.core.fail_pending(error) if owed else self.core.fail_all(error):
            self._resolve(ev.id, error=ev.error)
        for waiter in self._waiters.values():
            if not waiter.done:
                waiter.error = error
                waiter.set()

    def _resolve(
        self, rid: RequestId, *, result: Any = None, error: McpError | None = None
    ) -> None:
        waiter = self._waiters.get(rid)
        if waiter is None or waiter.done:
            return
        waiter.result, waiter.error = result, error
        waiter.set()

    async def _dispatch(self, event: object) -> None:
        if isinstance(event, ResponseReceived):
            self._resolve(event.id, result=event.result)
        elif isinstance(event, ErrorReceived):
            self._resolve(event.id, error=event.error)
        elif isinstance(event, Outgoing):
            self.runner.send_soon(event.data)
        elif isinstance(event, RequestReceived):
            self.runner.start(event)
        elif isinstance(event, Cancelled):
            self.runner.cancel(event.request_id)
        elif isinstance(event, ProgressReceived):
            await self._progress(event)
        elif isinstance(event, NotificationReceived) and self._on_notification is not None:
            try:
                await self._on_notification(event)
            except Exception:
                logger.exception("notification handler for %s failed", event.method)

    async def _progress(self, event: ProgressReceived) -> None:
        rid = event.request_id
        waiter = self._waiters.get(rid) if rid is not None else None
        if rid is None or waiter is None or waiter.options is None:
            return
        opts = waiter.options
        if opts.reset_timeout_on_progress and waiter.timeout is not None and not waiter.done:
            self._arm(waiter, self._clock())
        if opts.on_progress is not None:
            try:
                await opts.on_progress(event.progress, event.total, event.message)
            except Exception:
                logger.exception("progress callback failed")

    def is_cancelled(self, request_id: RequestId) -> bool:
        """Whether the peer cancelled this inbound request (its handler is being interrupted)."""
        return self.runner.is_cancelled(request_id)

    async def answer_here(self, data: bytes) -> bytes | None:
        """Handle one message that is a single request in the calling task instead of a task
        of its own, and return its encoded answer instead of sending it (``None``: nothing is
        to be sent, the peer cancelled the request or the connection closed). For a transport
        that answers each request on a response of its own (Streamable HTTP in JSON mode);
        call it while the read loop has nothing left to dispatch, so messages stay in order.
        The same accept step as the read loop, and the same runner (:meth:`Runner.run_here`):
        an inbound ``notifications/cancelled`` cancels the calling task, and that
        cancellation ends here."""
        if self._is_closed:
            return None
        answer: bytes | None = None
        for event in self.core.receive(data):
            if isinstance(event, RequestReceived):
                answer = (await self.runner.run_here(event)).data
            elif isinstance(event, Outgoing):
                answer = event.data  # refused by the core
            else:  # pragma: no cover - one request yields one of the two
                await self._dispatch(event)
        return answer
