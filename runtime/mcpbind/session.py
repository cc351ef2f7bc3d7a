"""The async driver of one connection: the sans-I/O core plus a transport plus tasks.

``Connection`` reads messages in one task, hands them to the core, resolves waiting callers,
runs inbound requests as concurrent tasks (each in its own cancel scope, so an inbound
``notifications/cancelled`` interrupts exactly that handler), and fails every pending call at
once when the transport closes. Every cancellation path is explicit: a caller's cancel scope,
a timeout, an inbound cancel, and the peer going away.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
from anyio.abc import TaskGroup

from mcpbind_types._common import RequestOptions

from .deadlines import Deadlines
from .protocol import (
    CONNECTION_CLOSED,
    INVALID_REQUEST,
    REQUEST_TIMEOUT,
    Cancelled,
    ErrorReceived,
    McpError,
    NotificationReceived,
    Outgoing,
    ProgressReceived,
    RequestId,
    RequestReceived,
    ResponseReceived,
    Session,
)
from .transports import MessageTooLarge, Transport, TransportClosed

__all__ = [
    "Connection",
    "ConnectionClosed",
    "NotificationHandler",
    "PeerError",
    "RequestHandler",
    "RequestTimeout",
    "current_request_id",
]

logger = logging.getLogger("mcpbind.session")

#: The id of the inbound request whose handler is running in this task (``None`` outside one).
#: A transport that multiplexes streams (Streamable HTTP) reads it to send what a handler
#: emits (progress, logs, requests to the client) on that request's own response stream.
current_request_id: contextvars.ContextVar[RequestId | None] = contextvars.ContextVar(
    "mcpbind_current_request_id", default=None
)

RequestHandler = Callable[[RequestReceived], Awaitable[Any]]
NotificationHandler = Callable[[NotificationReceived], Awaitable[None]]


class PeerError(McpError):
    """The peer answered one of our requests with this error."""


class ConnectionClosed(McpError):
    """The connection ended (the peer died or closed it) before the request was answered."""

    def __init__(self, reason: str | None) -> None:
        super().__init__(CONNECTION_CLOSED, f"Connection closed: {reason or 'closed'}")


class RequestTimeout(McpError):
    """A request got no response within its timeout; the peer was sent a cancellation."""

    def __init__(self, method: str, seconds: float) -> None:
        super().__init__(REQUEST_TIMEOUT, f"Request {method} timed out after {seconds:.3g}s")


class _Signal:
    """A one-shot event: an asyncio future on asyncio (several times cheaper to make than an
    ``anyio.Event``), an ``anyio.Event`` elsewhere."""

    __slots__ = ("_event", "_future", "_set")

    def __init__(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self._set = False
        self._future: asyncio.Future[None] | None = None
        self._event: anyio.Event | None = None
        if loop is not None:
            self._future = loop.create_future()
        else:
            self._event = anyio.Event()

    def set(self) -> None:
        if self._set:
            return
        self._set = True
        if self._future is not None:
            if not self._future.done():
                self._future.set_result(None)
        elif self._event is not None:
            self._event.set()

    def is_set(self) -> bool:
        return self._set

    async def wait(self) -> None:
        if self._future is not None:
            await self._future
        elif self._event is not None:
            await self._event.wait()


@dataclass(slots=True)
class _Waiter:
    method: str
    options: RequestOptions | None
    done: _Signal
    result: Any = None
    error: McpError | None = None
    started: float = 0.0
    timeout: float | None = None
    timed_out: bool = False


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
        self._on_request = on_request
        self._on_notification = on_notification
        self.default_timeout = default_timeout
        self._waiters: dict[RequestId, _Waiter] = {}
        #: Running inbound handlers: an asyncio task (on asyncio) or the handler's cancel scope.
        self._handlers: dict[RequestId, asyncio.Task[None] | anyio.CancelScope] = {}
        self._cancelled: set[RequestId] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tg: TaskGroup | None = None
        self._closed = anyio.Event()
        self._tokens = itertools.count(1)
        self._deadlines: Deadlines[RequestId] = Deadlines(self._expire)
        self.close_reason: str | None = None

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> Connection:
        try:
            # On asyncio a handler runs as a plain task: five times cheaper to start than an
            # anyio task, still cancellable, and awaited here before the connection closes.
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._read_loop)
        self._tg.start_soon(self._deadlines.run)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        try:
            await self._tg.__aexit__(None, None, None)
        finally:
            with anyio.CancelScope(shield=True):
                await self._stop_handlers()
            self._fail_all("Connection closed")
            with anyio.CancelScope(shield=True):
                await self.transport.aclose()

    def _now(self) -> float:
        return self._loop.time() if self._loop is not None else anyio.current_time()

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``fn`` in the connection's task group (it ends with the connection); for work a
        notification triggers that must not block the read loop, such as a request."""
        assert self._tg is not None, "the connection is not running"
        self._tg.start_soon(fn)

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

    async def request(
        self, method: str, params: Any = None, options: RequestOptions | None = None
    ) -> Any:
        """Send a request and wait for its result (raises McpError for an error response)."""
        if self.closed:
            raise ConnectionClosed(self.close_reason)
        await anyio.lowlevel.checkpoint_if_cancelled()  # a cancelled caller sends nothing
        token: int | str | None = None
        if options is not None and (options.on_progress or options.reset_timeout_on_progress):
            token = next(self._tokens)
        request_id, data = self.core.send_request(method, params, progress_token=token)
        timeout = (
            options.timeout
            if options is not None and options.timeout is not None
            else self.default_timeout
        )
        waiter = _Waiter(method, options, _Signal(self._loop), started=self._now(), timeout=timeout)
        self._waiters[request_id] = waiter
        if timeout is not None:
            self._arm(request_id, waiter, waiter.started)
        sent = False
        try:
            try:
                await self.send(data)
            except (TransportClosed, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                self.core.cancel(request_id)  # forget it; nothing reached the peer
                raise ConnectionClosed(str(exc) or self.close_reason) from None
            sent = True
            await waiter.done.wait()
            if waiter.timed_out:
                await self._cancel_remote(request_id, "timeout")
                raise RequestTimeout(method, self._now() - waiter.started)
        except BaseException:
            # The caller was cancelled: tell the peer (only about a request it received).
            if not waiter.done.is_set() and request_id in self._waiters:
                if sent:
                    with anyio.CancelScope(shield=True):
                        await self._cancel_remote(request_id, "cancelled by the caller")
                else:
                    self.core.cancel(request_id)
            raise
        finally:
            self._waiters.pop(request_id, None)
            self._deadlines.disarm(request_id)
        error = waiter.error
        if error is not None:
            if type(error) is McpError:
                raise PeerError(error.code, error.message, error.data)
            raise error
        return waiter.result

    async def _cancel_remote(self, request_id: RequestId, reason: str) -> None:
        self._waiters.pop(request_id, None)
        data = self.core.cancel(request_id, reason)
        if data is not None and not self.closed:
            with contextlib.suppress(
                TransportClosed, anyio.BrokenResourceError, anyio.ClosedResourceError
            ):
                await self.send(data)

    def _arm(self, request_id: RequestId, waiter: _Waiter, start: float) -> None:
        """(Re)start the request's timeout from ``start``, never past its total cap."""
        assert waiter.timeout is not None
        deadline = start + waiter.timeout
        opts = waiter.options
        if opts is not None and opts.max_total_timeout is not None:
            deadline = min(deadline, waiter.started + opts.max_total_timeout)
        self._deadlines.arm(request_id, deadline)

    def _expire(self, request_id: RequestId) -> None:
        waiter = self._waiters.get(request_id)
        if waiter is not None and not waiter.done.is_set():
            waiter.timed_out = True
            waiter.done.set()

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
        try:
            while True:
                try:
                    data = await self.transport.receive()
                except MessageTooLarge as exc:
                    await self.send(
                        _error_bytes(INVALID_REQUEST, f"Message too large: over {exc.limit} bytes")
                    )
                    continue
                for event in self.core.receive(data):
                    await self._dispatch(event)
        except (
            TransportClosed,
            anyio.EndOfStream,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
        ) as exc:
            reason = str(exc) or "peer closed the connection"
        finally:
            self.close_reason = reason
            self._fail_all(reason)
            self._closed.set()
            for scope in list(self._handlers.values()):
                scope.cancel()

    def _fail_all(self, reason: str) -> None:
        error = ConnectionClosed(reason)
        for ev in self.core.fail_all(error):
            self._resolve(ev.id, error=ev.error)
        for waiter in self._waiters.values():
            if not waiter.done.is_set():
                waiter.error = error
                waiter.done.set()

    def _resolve(
        self, rid: RequestId, *, result: Any = None, error: McpError | None = None
    ) -> None:
        waiter = self._waiters.get(rid)
        if waiter is None or waiter.done.is_set():
            return
        waiter.result, waiter.error = result, error
        waiter.done.set()

    async def _dispatch(self, event: object) -> None:
        if isinstance(event, ResponseReceived):
            self._resolve(event.id, result=event.result)
        elif isinstance(event, ErrorReceived):
            self._resolve(event.id, error=event.error)
        elif isinstance(event, Outgoing):
            await self.send(event.data)
        elif isinstance(event, RequestReceived):
            # The handle exists before the handler starts, so a cancellation that arrives right
            # behind its request (same read buffer) still finds it.
            if self._loop is not None:
                task = self._loop.create_task(self._run_handler(event, None))
                # A task cancelled before its first step never runs its ``finally``: the
                # bookkeeping is done by a done-callback instead.
                task.add_done_callback(functools.partial(self._on_handler_done, event.id))
                self._handlers[event.id] = task
            else:
                assert self._tg is not None
                scope = anyio.CancelScope()
                self._handlers[event.id] = scope
                self._tg.start_soon(self._run_handler, event, scope)
        elif isinstance(event, Cancelled):
            running = self._handlers.get(event.request_id)
            if running is not None:
                self._cancelled.add(event.request_id)
                running.cancel()
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
        if (
            opts.reset_timeout_on_progress
            and waiter.timeout is not None
            and not waiter.done.is_set()
        ):
            self._arm(rid, waiter, self._now())
        if opts.on_progress is not None:
            try:
                await opts.on_progress(event.progress, event.total, event.message)
            except Exception:
                logger.exception("progress callback failed")

    def is_cancelled(self, request_id: RequestId) -> bool:
        """Whether the peer cancelled this inbound request (its handler is being interrupted)."""
        return request_id in self._cancelled

    async def _run_handler(self, event: RequestReceived, scope: anyio.CancelScope | None) -> None:
        current_request_id.set(event.id)
        try:
            if scope is None:
                await self._handle(event)
            else:
                with scope:
                    await self._handle(event)
        except asyncio.CancelledError:
            if event.id not in self._cancelled and not self.closed:
                raise  # not ours to swallow
        finally:
            if scope is not None:
                self._handler_done(event.id)

    def _on_handler_done(self, request_id: RequestId, _task: asyncio.Task[None]) -> None:
        self._handler_done(request_id)

    def _handler_done(self, request_id: RequestId) -> None:
        self._handlers.pop(request_id, None)
        if request_id in self._cancelled:
            self._cancelled.discard(request_id)
            self.core.release(request_id)

    async def _handle(self, event: RequestReceived) -> None:
        try:
            result = await self._on_request(event)
        except Exception as exc:
            if event.id not in self._cancelled:
                await self._answer(
                    self.core.send_error(event.id, self.core.error_for_exception(exc))
                )
            return
        try:
            data = self.core.send_response(event.id, result)
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            logger.error("result of %s could not be encoded: %s", event.method, exc)
            data = self.core.send_error(event.id, self.core.error_for_exception(exc))
        await self._answer(data)

    async def _stop_handlers(self) -> None:
        """Cancel the handlers still running (the peer is gone) and wait for them to end."""
        tasks = [h for h in self._handlers.values() if isinstance(h, asyncio.Task)]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _answer(self, data: bytes | None) -> None:
        try:
            await self.send(data)
        except (TransportClosed, anyio.BrokenResourceError, anyio.ClosedResourceError):
            logger.debug("peer gone before the response could be sent")


def _error_bytes(code: int, message: str) -> bytes:
    return msgspec.json.encode(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    )
