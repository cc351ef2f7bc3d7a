"""One Streamable HTTP session: a ``ServerSession`` driven over an in-process transport whose
``send`` routes each outgoing message to the right SSE stream.

Routing (Streamable HTTP, "Sending Messages to the Server" and "Multiple Connections"): a
response goes to the stream of the POST that carried its request; what a handler emits while
it runs (progress, logs, sampling/elicitation/roots requests) goes to its request's stream
(``mcpbind.runner.current_request_id`` names it); everything else goes to the standalone
GET stream. Each message goes to exactly one stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ...protocol import SessionOptions
from ...runner import current_request_id
from ...server.app import Server
from ...server.session import ServerSession
from ...transports import MessagePump, TransportClosed
from .events import EventStore
from .streams import Item, Outbox, SessionInbox, Stream

__all__ = ["HttpSession", "close_sse_stream", "current_http_session", "new_session_id"]

logger = logging.getLogger("mcpbind.http")

#: The HTTP session whose handler is running in this task (handlers inherit it).
current_http_session: contextvars.ContextVar[HttpSession | None] = contextvars.ContextVar(
    "mcpbind_http_session", default=None
)

_CLOSED: Any = object()
_MAX_FINISHED = 256  # finished-but-undelivered POST streams kept for a resume, per session
_background: set[asyncio.Task[None]] = set()  # streams forgotten in the background
_STORE_LOG_EVERY = 60.0
_store_logged = [float("-inf")]  # when an event store failure was last logged


def _store_failed(exc: Exception) -> None:
    """An event store call failed: logged (one line, at most once a minute), never raised
    into the session."""
    now = time.monotonic()
    if now - _store_logged[0] >= _STORE_LOG_EVERY:
        _store_logged[0] = now
        logger.warning("event store failed, streams go on without it: %r", exc)


class _Peek(msgspec.Struct, gc=False):
    """Just enough of an outgoing message to route it."""

    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET


_PEEK = msgspec.json.Decoder(_Peek)


def new_session_id() -> str:
    """A session id: 256 bits from the OS CSPRNG, URL-safe base64 (visible ASCII, 43 chars)."""
    return secrets.token_urlsafe(32)


def close_sse_stream(retry_ms: int | None = None) -> bool:
    """Close the SSE connection of the request whose handler calls this, without ending the
    stream: the client reconnects (``GET`` + ``Last-Event-ID``) and receives the rest
    (SSE polling, "Sending Messages to the Server" 6). Only with an event store; returns
    whether a connection was closed."""
    session = current_http_session.get()
    rid = current_request_id.get()
    if session is None or rid is None:
        return False
    return session.close_request_stream(rid, retry_ms)


class _Transport(MessagePump):
    """The in-process transport a ``ServerSession`` runs over (whole messages as bytes); it
    pumps (:meth:`HttpSession.pump`), so a POST hands its body to the session directly."""

    __slots__ = ("_session",)

    def __init__(self, session: HttpSession) -> None:
        #: ``None`` once closed: the session holds its connection, which holds this.
        self._session: HttpSession | None = session

    def _open(self) -> HttpSession:
        session = self._session
        if session is None or session.closed:
            raise TransportClosed("session terminated")
        return session

    async def send(self, message: bytes) -> None:
        await self._open().route(message)

    async def receive(self) -> bytes:
        session = self._session
        if session is None:
            raise TransportClosed("session terminated")
        item: bytes = await session.inbound.get()
        if item is _CLOSED:
            session.inbound.put_nowait(_CLOSED)  # every later receive also ends
            raise TransportClosed("session terminated")
        return item

    async def pump(self, handler: Callable[[bytes], bool]) -> None:
        await self._open().pump(handler)

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.closed = True


class HttpSession:
    """The state of one Streamable HTTP session."""

    # Class-level defaults: an idle session holds only what it set (issue 15, memory).
    #: While the read loop waits in :meth:`pump`: its handler (run in the session's context,
    #: as the read loop would: a handler task started there inherits it, not the POST's).
    _push: Callable[[bytes], bool] | None = None
    _context: contextvars.Context | None = None  # the session task's (set by :meth:`start`)
    _push_stopped = False
    _push_failure: BaseException | None = None
    _answering = 0  # requests answered in their POST's task (:meth:`answer`)

    def __init__(
        self,
        server: Server,
        session_id: str | None,
        *,
        principal: object = None,
        event_store: EventStore | None = None,
        retry_ms: int = 1000,
        options: SessionOptions | None = None,
    ) -> None:
        self.id = session_id
        self.principal = principal
        self.store = event_store
        self.retry_ms = retry_ms
        self.closed = False
        self.last_active = self.created = asyncio.get_running_loop().time()
        #: The client's address (per-address session limit).
        self.client_address: str | None = None
        self.inbound = SessionInbox(64)
        # Stream ids: a random per-session prefix and a counter (ownership is checked by
        # lookup in this session, so they need to be unique, not secret).
        self._stream_prefix = secrets.token_hex(6)
        self._stream_count = 0
        self.standalone = Stream(self._next_stream_id(), standalone=True)
        self._streams: dict[str, Stream] = {self.standalone.id: self.standalone}
        #: Finished streams kept for a resume, oldest first (a dict keeps insertion order).
        self._finished: dict[str, None] = {}
        self._by_request: dict[int | str, Stream] = {}
        #: The headers of the POST that carried each request not yet started (taken once,
        #: by the server session as it makes the request's context).
        self._headers: dict[int | str, Mapping[str, str]] = {}
        self.server_session = ServerSession(
            server, _Transport(self), options=options, transport_name="http"
        )
        self.server_session.request_headers = self._headers
        self.task: asyncio.Task[None] | None = None

    def _next_stream_id(self) -> str:
        self._stream_count += 1
        return f"{self._stream_prefix}{self._stream_count:x}"

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> asyncio.Task[None]:
        context = contextvars.copy_context()
        context.run(current_http_session.set, self)
        self._context = context
        self.task = asyncio.get_running_loop().create_task(self._run(), context=context)
        return self.task

    async def _run(self) -> None:
        try:
            await self.server_session.run()
        except Exception:  # pragma: no cover - the session core already contains handler errors
            logger.exception("session %s failed", self.id)
        finally:
            self._shutdown()
            # The task's context holds this session (``current_http_session``): drop the
            # references back to it, so an ended session is freed when the app lets it go,
            # not at the collector's next full collection.
            self._context = None
            self.task = None

    @property
    def version(self) -> str | None:
        """The negotiated protocol version (``None`` before the handshake)."""
        return self.server_session.core.version

    @property
    def attached(self) -> bool:
        """A client connection is open on one of the session's streams: it is not idle."""
        return any(s.outbox is not None for s in self._streams.values())

    @property
    def busy(self) -> bool:
        """A connection is open or a request is still being answered (a JSON-mode request
        has no stream to attach to): the idle timeout does not apply."""
        return bool(self._by_request) or self._answering > 0 or self.attached

    @property
    def initialized(self) -> bool:
        """The client sent ``notifications/initialized`` (the handshake completed)."""
        return self.server_session.initialized.is_set()

    def touch(self) -> None:
        self.last_active = asyncio.get_running_loop().time()

    async def close(self) -> None:
        """Terminate: the session's handlers are cancelled and its streams end."""
        marked = False
        if not self.closed:
            self.closed = True
            with contextlib.suppress(asyncio.QueueFull):
                self.inbound.put_nowait(_CLOSED)  # the session's read loop ends on it
                marked = True
        self._shutdown()
        task = self.task
        if task is not None and task is not asyncio.current_task():
            if not marked and not task.done():
                task.cancel()  # no room for the marker (or closed before): stop it directly
            await asyncio.gather(task, return_exceptions=True)
        await self._forget([*self._streams, *self._finished])
        self._streams.clear()
        self._finished.clear()

    def hand_back(self) -> bool:
        """End the connection of the standalone (``GET``) stream, if one is attached, with
        the ``retry`` delay: the client reconnects and resumes with ``Last-Event-ID``; what
        is sent meanwhile waits in the event store. The session goes on. Whether one was."""
        outbox = self.standalone.outbox
        if outbox is None:
            return False
        outbox.close(self.retry_ms)
        self.standalone.outbox = None
        return True

    def _shutdown(self) -> None:
        self.closed = True
        # JSON-mode streams are only in _by_request: their waiting responses must end too.
        for stream in (*self._streams.values(), *self._by_request.values()):
            if stream.outbox is not None:
                stream.outbox.close()
                stream.outbox = None
        self._by_request.clear()
        self._headers.clear()

    # ------------------------------------------------------------------ client -> server
    def expect(self, request_ids: Iterable[int | str], headers: Mapping[str, str]) -> None:
        """The requests of the POST about to be fed came with these headers (their handlers'
        ``Context.headers``); forgotten once read, answered or cancelled."""
        for rid in request_ids:
            self._headers[rid] = headers

    async def feed(self, body: bytes) -> None:
        """Hand one POST body (a message or a 2025-03-26 batch) to the session: straight to
        the connection's handler while its read loop waits in :meth:`pump` (a request's
        handler starts in this step, as it would from the read loop), else queued behind
        the bodies the read loop has still to take."""
        self.touch()
        push = self._push
        if push is None or self.closed:
            await self.inbound.put(body)
            return
        assert self._context is not None
        try:
            if self._context.run(push, body):
                return
        except BaseException as exc:  # the read loop raises it, as it would its own
            self._push_failure = exc
        # The rest of this body's events need the read loop: later bodies queue behind it.
        self._push = None
        self._push_stopped = True
        self.inbound.wake()

    @property
    def at_rest(self) -> bool:
        """The read loop waits with nothing queued: a request may be answered in place."""
        return self._push is not None and not self.closed

    async def answer(
        self, body: bytes, request_id: int | str, headers: Mapping[str, str]
    ) -> bytes | None:
        """Answer a POST that is one request (``request_id``, carried with ``headers``) in
        the POST's own task, and return the encoded response (``None``: cancelled, or the
        session ended): for JSON mode, where nothing but the response goes on the POST's
        stream (what the handler emits goes to the GET stream). Only while :attr:`at_rest`,
        so requests stay in order with what came before; the connection's runner applies its
        table, bounds and cancellation as to any request (:meth:`Connection.answer_here`).
        The session is :attr:`busy` meanwhile, and touched when the request is answered."""
        current_http_session.set(self)  # the POST's task runs the handler
        expected = self._headers
        expected[request_id] = headers
        self._answering += 1
        try:
            return await self.server_session.connection.answer_here(body)
        finally:
            self._answering -= 1
            expected.pop(request_id, None)  # refused before its context was made
            self.touch()

    async def pump(self, handler: Callable[[bytes], bool]) -> None:
        """The session's read loop (``MessagePump``): the queued bodies go to ``handler``,
        then, while it waits, each POST hands its own to it (:meth:`feed`). Returns once
        ``handler`` refuses a body (the rest of its events are the read loop's to await)."""
        inbound = self.inbound
        while True:
            while (item := inbound.pop()) is not None:
                if item is _CLOSED:
                    inbound.put_nowait(_CLOSED)  # every later pump also ends
                    raise TransportClosed("session terminated")
                if not handler(item):
                    return
            if self.closed:
                raise TransportClosed("session terminated")
            self._push = handler
            try:
                await inbound.wait()
            finally:
                self._push = None
            if self._push_failure is not None:
                failure, self._push_failure = self._push_failure, None
                raise failure
            if self._push_stopped:
                self._push_stopped = False
                return

    def open_stream(self, request_ids: list[int | str], *, json: bool) -> Stream | None:
        """A stream for a POST carrying these requests; ``None`` if an id is already in flight."""
        if any(rid in self._by_request for rid in request_ids):
            return None
        stream = Stream(self._next_stream_id(), pending=set(request_ids), json=json)
        for rid in request_ids:
            self._by_request[rid] = stream
        if not json:
            self._streams[stream.id] = stream
        return stream

    def cancel_request(self, request_id: object) -> None:
        """The client cancelled this request: its stream will get no response from it."""
        if not isinstance(request_id, int | str) or isinstance(request_id, bool):
            return
        self._headers.pop(request_id, None)
        stream = self._by_request.pop(request_id, None)
        if stream is not None:
            stream.pending.discard(request_id)
            if not stream.pending:
                self._forget_soon(self._finish(stream))

    # ------------------------------------------------------------------ server -> client
    async def route(self, message: bytes) -> None:
        try:
            peek = _PEEK.decode(message)
        except msgspec.DecodeError:  # pragma: no cover - the core only sends valid JSON
            peek = _Peek()
        if isinstance(peek.method, UnsetType) and not isinstance(peek.id, UnsetType):
            rid = peek.id
            if self._headers and rid is not None:
                self._headers.pop(rid, None)  # answered before its handler ran (refused)
            stream = self._by_request.pop(rid, None) if rid is not None else None
            if stream is None:
                logger.debug("response %r has no open request stream; sent on the GET stream", rid)
                stream = self.standalone
            else:
                stream.pending.discard(rid)
            await self._deliver(stream, message)
            if not stream.standalone and not stream.pending:
                gone = self._finish(stream)
                if gone:
                    await self._forget(gone)
            return
        rid = current_request_id.get()
        stream = self._by_request.get(rid) if rid is not None else None
        if stream is None or stream.json:
            stream = self.standalone
        await self._deliver(stream, message)

    async def _deliver(self, stream: Stream, message: bytes) -> None:
        n = 0
        if self.store is not None and not stream.json:
            n = stream.n = stream.n + 1
            try:
                await self.store.store_event(stream.id, n, message)
            except Exception as exc:
                # A store that fails loses a resume, never the live stream (Streamable HTTP,
                # "Resumability and Redelivery": replaying is a server's option; the event
                # keeps its id, so a resume from before it is refused as a gap, not wrong).
                _store_failed(exc)
        item: Item = (n, message)
        while stream.outbox is not None and stream.outbox.full:
            await stream.outbox.room()  # backpressure: the client is not reading its stream
        if stream.outbox is None or not stream.outbox.put(item):
            stream.outbox = None
            stream.backlog.append(item)

    def _finish(self, stream: Stream) -> list[str]:
        """The stream got its last response. Returns the streams whose stored events can
        go now (with an event store): this one if it was delivered (a connection took it
        whole; a resume of it is refused from now on), or the oldest undelivered one kept
        past the bound. So Redis holds the events of live streams only (issue 30)."""
        stream.done = True
        if stream.outbox is not None:
            stream.outbox.close()
            stream.outbox = None
            self._streams.pop(stream.id, None)
            if self.store is not None and not stream.json:
                return [stream.id]
        elif not stream.json and self.store is not None:
            # Undelivered: keep it for a resume (bounded), else forget it.
            self._finished[stream.id] = None
            gone = []
            while len(self._finished) > _MAX_FINISHED:
                old = next(iter(self._finished))
                del self._finished[old]
                self._streams.pop(old, None)
                gone.append(old)
            return gone
        else:
            self._streams.pop(stream.id, None)
        return []

    async def _forget(self, stream_ids: list[str]) -> None:
        if self.store is not None:
            for stream_id in stream_ids:
                try:
                    await self.store.forget_stream(stream_id)
                except Exception as exc:  # left to the store's own expiry
                    _store_failed(exc)

    def _forget_soon(self, stream_ids: list[str]) -> None:
        """:meth:`_finish`'s streams to forget, from a caller that cannot wait."""
        if self.store is not None and stream_ids:
            task = asyncio.get_running_loop().create_task(self._forget(stream_ids))
            _background.add(task)
            task.add_done_callback(_background.discard)

    async def release(self, stream: Stream) -> None:
        """A finished stream resumed (and so handed over whole, or refused): its stored
        events can go; a later resume of it is refused, as for one delivered at once."""
        if stream.done and self.store is not None:
            self._finished.pop(stream.id, None)
            self._streams.pop(stream.id, None)
            await self._forget([stream.id])

    def close_request_stream(self, request_id: int | str, retry_ms: int | None) -> bool:
        stream = self._by_request.get(request_id)
        if stream is None or stream.json or self.store is None or stream.outbox is None:
            return False
        stream.outbox.close(retry_ms if retry_ms is not None else self.retry_ms)
        stream.outbox = None
        return True

    # ------------------------------------------------------------------ connections
    def attach(self, stream: Stream, outbox: Outbox) -> None:
        """Connect ``outbox`` to a live stream and hand it what was sent meanwhile."""
        stream.outbox = outbox
        for item in stream.take_backlog():
            outbox.put(item)
        if stream.done:
            outbox.close()
            stream.outbox = None
            self._streams.pop(stream.id, None)
            self._finished.pop(stream.id, None)

    def detach(self, stream: Stream, outbox: Outbox) -> None:
        """A connection ended; later messages wait in the backlog and the event store."""
        if stream.outbox is outbox:
            stream.outbox = None
        self.touch()

    def stream(self, stream_id: str) -> Stream | None:
        """This session's stream with that id (``None`` for another session's)."""
        return self._streams.get(stream_id)

    def resume(self, stream: Stream, outbox: Outbox) -> None:
        """Attach for a replay: the backlog is covered by the store, so it is dropped."""
        stream.take_backlog()
        self.attach(stream, outbox)
