"""``StreamableHTTPApp``: the Streamable HTTP transport (2025-03-26, 2025-06-18, 2025-11-25) as
a pure ASGI application, mountable in Starlette, FastAPI or any ASGI stack.

Every check that can refuse a request runs before anything is allocated for it: Host and
Origin, method, Content-Type, Accept and declared size from the headers; then the body read
(capped, with a deadline) and its classification, which tells a 2026-07-28 stateless request
from a handshake-era one; then the protocol version header and the session id. Only an
accepted ``initialize`` creates a session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..._lazy import lazy_logger
from ...protocol import INVALID_REQUEST, SessionOptions
from ...protocol.classify import Classified, classify_body, decoded_body
from ...server.app import Server
from ...server.lifespan import LifespanClaim
from ...versions import HANDSHAKE_VERSIONS, HEADERLESS_VERSION, era_of
from ._asgi import (
    Headers,
    Receive,
    RequestHeaders,
    Scope,
    Send,
    accepts,
    client_address,
    media_type,
    receive_body,
    send_error,
    send_response,
    serve_lifespan,
    take_lifespan,
)
from .auth_hook import AuthHook, scope_principal
from .endpoint_settings import EndpointSettings, SharedSettings
from .events import EventStore, format_event_id, parse_event_id
from .http_session import HttpSession, new_session_id
from .responses import (
    SESSION_NOT_FOUND,
    refuse_client_session,
    refuse_new_session,
    reply_json,
    reply_sse,
    sessions_of,
)
from .security import refusal
from .streams import MAX_PENDING, Outbox, OutboxOnDemand, Stream

if TYPE_CHECKING:
    from .per_request import PerRequestEndpoint

logger = lazy_logger("mcpbind.http")


class NotificationBus(Protocol):
    """Carries change notifications between the workers of one server (see
    :mod:`mcpbind.http.server.redis_bus`)."""

    @property
    def started(self) -> bool: ...

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...


class SessionRegistry(Protocol):
    """Which worker owns each session, and forwarding to it (see
    :mod:`mcpbind.http.server.redis_sessions`)."""

    async def claim(self, session_id: str) -> bool:
        """Record a new session as this worker's; ``False``: the registry is unreachable."""
        ...

    def used(self, session_id: str) -> None: ...

    def release(self, session_id: str) -> None: ...

    def hand_back(self) -> int:
        """Shutdown: end the streams relayed through this worker (their clients resume
        elsewhere); how many."""
        ...

    async def forward(
        self, scope: Scope, receive: Receive, send: Send, session_id: str, body: bytes
    ) -> bool:
        """Answer a request for a session held elsewhere; ``False``: nobody has it."""
        ...

    async def aclose(self) -> None: ...


__all__ = ["AuthHook", "StreamableHTTPApp", "scope_principal", "streamable_http_app"]

_SUPPORTED = frozenset(HANDSHAKE_VERSIONS)
_JSON = b"application/json"


class StreamableHTTPApp(SharedSettings):
    """Serve one ``mcpbind.Server`` over Streamable HTTP. See the module docstring.

    ``sessionless``: the 2025 revisions without sessions; each POST is served on its own (no
    GET stream, no DELETE).
    ``allowed_hosts``/``allowed_origins``: DNS-rebinding allowlists (default: loopback names
    when bound to loopback). ``max_body_size``: 413 beyond it. ``max_sessions``: 503 beyond it.
    ``idle_timeout``: seconds without traffic before a session is dropped. ``event_store``:
    makes SSE streams resumable (``Last-Event-ID``) and enables SSE polling.
    ``json_response``: answer requests with one JSON body instead of an SSE stream. ``path``:
    only this path is served (404 elsewhere); ``None`` serves whatever path it is mounted at.
    ``body_timeout``: seconds to receive a whole body (408 after). ``retry_ms``: the SSE
    ``retry`` field. ``sse_keepalive``: seconds between comments on an idle GET stream.
    ``principal``: maps an ASGI scope to the authenticated principal a session is bound to.
    ``max_sessions_per_client``: sessions one client address may hold (503 beyond; ``None``
    behind a proxy that hides client addresses), and its 2026-07-28 listen streams too. ``init_timeout``: seconds a session may
    stay without ``notifications/initialized`` before it is dropped.
    ``auth``: the bearer-token check run first (``mcpbind.auth.server.ResourceServer``).
    ``trusted_proxies``: addresses or networks of the reverse proxies in front; a request from
    one is counted and logged as coming from the client its ``X-Forwarded-For`` names
    (:mod:`mcpbind.http.server.proxies`); that header from anyone else is ignored.
    ``bus``: relays the server's change notifications to and from the other workers
    (``RedisNotificationBus``); started with the first request, closed by ``aclose()``.
    ``registry``: records which worker owns each session, so a request for a session held by
    another worker is forwarded there (``RedisSessionRegistry``); closed by ``aclose()``.
    """

    def __init__(
        self,
        server: Server,
        *,
        sessionless: bool = False,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        max_body_size: int = 4 * 1024 * 1024,
        max_sessions: int = 1000,
        idle_timeout: float | None = 1800.0,
        event_store: EventStore | None = None,
        json_response: bool = False,
        path: str | None = None,
        body_timeout: float | None = 30.0,
        retry_ms: int = 1000,
        sse_keepalive: float | None = 15.0,
        principal: Callable[[Scope], object] = scope_principal,
        session_options: SessionOptions | None = None,
        max_sessions_per_client: int | None = 100,
        init_timeout: float | None = 10.0,
        auth: AuthHook | None = None,
        trusted_proxies: Iterable[str] | None = None,
        bus: NotificationBus | None = None,
        registry: SessionRegistry | None = None,
    ) -> None:
        self.settings = EndpointSettings.of(
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            trusted_proxies=trusted_proxies,
            max_body_size=max_body_size,
            max_sessions=max_sessions,
            body_timeout=body_timeout,
            sse_keepalive=sse_keepalive,
            principal=principal,
            session_options=session_options,
            max_sessions_per_client=max_sessions_per_client,
            init_timeout=init_timeout,
            auth=auth,
        )
        self.server = server
        self.sessionless = sessionless
        self.idle_timeout = idle_timeout
        self.event_store = event_store
        self.json_response = json_response
        self.path = path.rstrip("/") or "/" if path is not None else None
        self.retry_ms = retry_ms
        self.bus = bus
        self.registry = registry
        #: Live sessions by id. Public for inspection (tests, metrics); do not mutate.
        self.sessions: dict[str, HttpSession] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._allow = b"POST" if sessionless else b"GET, POST, DELETE"
        #: This app's hold on the server's lifespan (``mcpbind.server.lifespan``).
        self.lifespan = LifespanClaim(server)
        #: The 2026-07-28 requests and their listen streams (built on the first one).
        self._per_request: PerRequestEndpoint | None = None

    # ------------------------------------------------------------------ ASGI entry
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            bus, settings = self.bus, self.settings
            if bus is not None and not bus.started:
                await bus.start()
            if settings.proxies is not None:
                settings.admit(scope)
            if (
                not self.lifespan.taken
                and self.server.lifespan is not None
                and not await take_lifespan(self.lifespan, send)
            ):
                return  # answered 503: the lifespan failed to start
            if settings.auth is not None:
                checked = await settings.auth(self, scope, receive, send)
                if checked is None:
                    return  # answered by the auth check (401, 403, the metadata)
                receive = checked
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await serve_lifespan(receive, send, self.aclose, self.lifespan.take)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1003})

    def hand_back(self) -> bool:
        """The first step of a clustered worker's graceful shutdown (no new connections come
        now): end the long-lived streams so their clients reconnect through the balancer to
        the other workers, and resume there: the ``GET`` streams of this worker's sessions
        and those relayed through it (``Last-Event-ID`` replays from the shared event
        store), and the 2026-07-28 listen streams, which end without their final result so
        the client listens again (with a ``bus``; without one they end with it: no other
        worker would tell that client of this server's changes). Sessions and requests in flight go on; :meth:`aclose` ends
        them. ``False``, doing nothing, for a server that is not one of several workers (no
        ``bus`` nor ``registry``): there the streams end with the sessions, as before."""
        if self.bus is None and self.registry is None:
            return False
        for session in list(self.sessions.values()):
            session.hand_back()
        if self.registry is not None:
            self.registry.hand_back()
        if self._per_request is not None:
            if self.bus is not None:
                self._per_request.hand_back()
            else:  # no other worker relays this server's changes: a graceful end, as alone
                self._per_request.close()
        return True

    async def aclose(self) -> None:
        """Terminate every session (their handlers are cancelled); the app stays usable."""
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        if self._per_request is not None:
            self._per_request.close()  # listen streams end with their final result
        if self.bus is not None:
            await self.bus.aclose()
        if self.registry is not None:
            await self.registry.aclose()
        sessions = list(self.sessions.values())
        self.sessions.clear()
        for session in sessions:
            await session.close()
        await self.lifespan.drop()

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.path is not None and scope["path"].rstrip("/") != self.path.rstrip("/"):
            await send_error(send, 404, INVALID_REQUEST, "Not Found")
            return
        headers = Headers(scope["headers"])
        if (refused := refusal(self.settings.policy, scope, headers)) is not None:
            await send_error(send, refused[0], INVALID_REQUEST, refused[1])
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send, headers)
        elif method == "GET" and not self.sessionless:
            await self._get(send, receive, headers, scope)
        elif method == "DELETE" and not self.sessionless:
            await self._delete(send, receive, headers, scope)
        else:
            await send_error(
                send,
                405,
                INVALID_REQUEST,
                f"Method Not Allowed: use {self._allow.decode()}",
                [(b"allow", self._allow)],
            )

    def session_of(self, scope: Scope) -> HttpSession | None:
        """The live session the request's ``Mcp-Session-Id`` names, if any (any principal's)."""
        session_id = Headers(scope["headers"]).get(b"mcp-session-id")
        return None if session_id is None else self.sessions.get(session_id.strip())

    # ------------------------------------------------------------------ shared checks
    def _version_error(self, headers: Headers) -> str | None:
        version = headers.get(b"mcp-protocol-version")
        if version is not None and version.strip() not in _SUPPORTED:
            return f"Bad Request: unsupported MCP-Protocol-Version {version!r}"
        return None

    async def _lookup(
        self, send: Send, headers: Headers, scope: Scope, receive: Receive, body: bytes = b""
    ) -> HttpSession | None:
        """The request's session, or ``None`` after answering 400 (no id) / 404 (unknown),
        or after the ``registry`` had the session's owner answer it."""
        session_id = headers.get(b"mcp-session-id")
        if session_id is None:
            await send_error(send, 400, INVALID_REQUEST, "Bad Request: Mcp-Session-Id required")
            return None
        session = self.sessions.get(session_id.strip())
        if self.registry is not None:
            if session is None:
                if await self.registry.forward(scope, receive, send, session_id.strip(), body):
                    return None
            else:
                self.registry.used(session_id.strip())
        # Another principal's session is indistinguishable from an unknown one.
        if session is None or session.closed or session.principal != self.settings.principal(scope):
            await send_error(send, 404, SESSION_NOT_FOUND, "Session not found")
            return None
        version = headers.get(b"mcp-protocol-version")
        if version is not None and session.version not in (None, version.strip()):
            message = (
                f"Bad Request: MCP-Protocol-Version {version.strip()!r} is not the negotiated "
                f"version {session.version!r}"
            )
            await send_error(send, 400, INVALID_REQUEST, message)
            return None
        return session

    async def _checked_session(
        self, send: Send, headers: Headers, scope: Scope, receive: Receive
    ) -> HttpSession | None:
        """A GET's or DELETE's session, or ``None`` after answering 400 (unsupported
        ``MCP-Protocol-Version``, no id) or 404 (unknown session)."""
        if (error := self._version_error(headers)) is not None:
            await send_error(send, 400, INVALID_REQUEST, error)
            return None
        return await self._lookup(send, headers, scope, receive)

    # ------------------------------------------------------------------ POST
    async def _post(self, scope: Scope, receive: Receive, send: Send, headers: Headers) -> None:
        if media_type(headers.get(b"content-type")) != "application/json":
            await send_error(
                send, 415, INVALID_REQUEST, "Unsupported Media Type: use application/json"
            )
            return
        accept = headers.get(b"accept")
        if not accepts(accept, "application/json") or (
            not self.json_response and not accepts(accept, "text/event-stream")
        ):
            await send_error(
                send,
                406,
                INVALID_REQUEST,
                "Not Acceptable: Accept must list application/json and text/event-stream",
            )
            return
        body = await receive_body(
            send, receive, headers, self.settings.max_body_size, self.settings.body_timeout
        )
        if body is None:
            return
        classified = classify_body(body, self.settings.max_depth)
        if classified.error is not None:
            code, message = classified.error
            await send_error(send, 400, code, message)
            return
        if classified.era == "stateless" or _stateless_header(headers, classified):
            era = self._per_request or self.per_request  # (the property builds it once)
            await era.serve(scope, receive, send, headers, classified)
            return
        if (error := self._version_error(headers)) is not None:
            await send_error(send, 400, INVALID_REQUEST, error)
            return
        if self.sessionless:
            await self._post_sessionless(send, receive, headers, classified)
            return
        if classified.initialize:
            if headers.get(b"mcp-session-id") is not None:
                await send_error(
                    send, 400, INVALID_REQUEST, "Bad Request: initialize must not carry a session"
                )
                return
            if len(self.sessions) >= self.settings.max_sessions:
                await refuse_new_session(send)
                return
            address = client_address(scope)
            cap = self.settings.max_sessions_per_client
            if cap is not None and sessions_of(self.sessions.values(), address) >= cap:
                await refuse_client_session(send)
                return
            session = self._create_session(scope)
            session.client_address = address
            if self.registry is not None and not await self._claimed(session, send):
                return
        else:
            found = await self._lookup(send, headers, scope, receive, body)
            if found is None:
                return
            session = found
            if classified.batch and not era_of(session.version).batches:
                await send_error(
                    send,
                    400,
                    INVALID_REQUEST,
                    f"Invalid Request: JSON-RPC batches are not supported in {session.version}",
                )
                return
        await self._dispatch(session, send, receive, body, classified, headers)
        if classified.initialize and session.version is None and session.id is not None:
            # The handshake failed (the client got the error): the session never began.
            self.sessions.pop(session.id, None)
            await session.close()

    def _create_session(self, scope: Scope) -> HttpSession:
        session_id = new_session_id()
        while session_id in self.sessions:  # pragma: no cover - 256 random bits
            session_id = new_session_id()
        session = HttpSession(
            self.server,
            session_id,
            principal=self.settings.principal(scope),
            event_store=self.event_store,
            retry_ms=self.retry_ms,
            options=self.settings.session_options,
        )
        self.sessions[session_id] = session
        task = session.start()
        task.add_done_callback(lambda _t: self._forget(session))
        timed = self.idle_timeout is not None or self.settings.init_timeout is not None
        if timed and self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap())
        return session

    async def _claimed(self, session: HttpSession, send: Send) -> bool:
        """Record a new session in the registry; ``False`` after answering 503 (and ending
        the session) when the registry cannot be reached."""
        assert self.registry is not None and session.id is not None
        if not await self.registry.claim(session.id):
            self.sessions.pop(session.id, None)
            await session.close()
            await send_error(
                send,
                503,
                INVALID_REQUEST,
                "Service Unavailable: the session registry cannot be reached",
                [(b"retry-after", b"1")],
            )
            return False
        return True

    def _forget(self, session: HttpSession) -> None:
        if self.registry is not None and session.id is not None:
            self.registry.release(session.id)
        if session.id is not None and self.sessions.get(session.id) is session:
            del self.sessions[session.id]

    async def _dispatch(
        self,
        session: HttpSession,
        send: Send,
        receive: Receive,
        body: bytes,
        classified: Classified,
        headers: Headers,
    ) -> None:
        """Feed an accepted body to its session and answer the POST (202, JSON or SSE)."""
        extra = [] if session.id is None else [(b"mcp-session-id", session.id.encode())]
        body = decoded_body(body, classified)  # the core takes the envelope decoded here
        if not classified.request_ids:
            await session.feed(body)
            for rid in classified.cancelled:
                session.cancel_request(rid)
            await send_response(send, 202, b"", extra)
            return
        # What the requests' handlers read as ``Context.headers``.
        fields = RequestHeaders(headers.raw)
        here = not classified.batch and session.at_rest
        if not here:
            session.expect(classified.request_ids, fields)  # run in the session's task
        if self.json_response and here:
            # One request, nothing before it still being read: answered in this task.
            answered = await session.answer(body, classified.request_ids[0], fields)
            if answered is None and session.closed:
                await send_error(send, 404, SESSION_NOT_FOUND, "Session terminated")
            elif answered is None:
                # The client cancelled the request (cancellation.mdx: no response is sent
                # for it); the session goes on: a 404 would make the client start a new one
                # (transports.mdx §Session Management).
                await send_response(send, 202, b"", extra)
            else:
                await send_response(send, 200, answered, extra, _JSON)
            return
        stream = session.open_stream(classified.request_ids, json=self.json_response)
        if stream is None:
            await send_error(send, 400, INVALID_REQUEST, "Invalid Request: request id in use")
            return
        version = session.version or classified.requested_version or HEADERLESS_VERSION
        priming = self.event_store is not None and era_of(version).priming_events
        if here and not self.json_response:
            rid = classified.request_ids[0]
            await self._sse_here(session, stream, send, receive, extra, priming, body, rid, fields)
            return
        outbox = Outbox(MAX_PENDING, blocking=True)
        session.attach(stream, outbox)
        await session.feed(body)
        for rid in classified.cancelled:
            session.cancel_request(rid)
        if self.json_response:
            await reply_json(session, stream, outbox, send, extra, classified.batch)
        else:
            await self._reply_sse(session, stream, outbox, send, receive, extra, priming=priming)

    async def _sse_here(
        self,
        session: HttpSession,
        stream: Stream,
        send: Send,
        receive: Receive,
        extra: list[tuple[bytes, bytes]],
        priming: bool,
        body: bytes,
        request_id: int | str,
        headers: Mapping[str, str],
    ) -> None:
        """One request (``body``, carried with ``headers``) on a session at rest, SSE: its
        handler runs in this task, as in JSON mode. What it emits goes to its stream, whose writer task starts with the first event
        (or the stream's closing), so events leave as they come; else it is answered here."""

        def write() -> Coroutine[Any, Any, None]:
            return self._reply_sse(session, stream, outbox, send, receive, extra, priming=priming)

        writers: list[asyncio.Task[None]] = []  # started by the first event or the closing
        outbox = OutboxOnDemand(lambda: writers.append(asyncio.ensure_future(write())))
        session.attach(stream, outbox)
        try:
            answered = await session.answer(body, request_id, headers)
            outbox.start = None  # the answer, queued next, is written below if no writer runs
            if answered is None:
                outbox.close()  # cancelled, or the session ended: no answer comes
            else:
                await session.route(answered)  # to the stream (closing it) and the event store
            if not writers:
                await write()
        finally:
            for writer in writers:
                if not outbox.closed:
                    writer.cancel()  # left by an exception: the response ends here
                await asyncio.gather(writer, return_exceptions=True)

    async def _reply_sse(
        self,
        session: HttpSession,
        stream: Stream,
        outbox: Outbox,
        send: Send,
        receive: Receive,
        extra: list[tuple[bytes, bytes]],
        *,
        priming: bool = False,
        last: int = 0,
        replay: list[tuple[int, bytes]] | None = None,
    ) -> None:
        """Answer with ``stream`` as SSE; with an event store it opens with the priming event
        (an id and empty data, from 2025-11-25 on) or at least the ``retry`` field."""
        head = b""
        if priming:
            head = b"id: %s\nretry: %d\ndata: \n\n" % (
                format_event_id(stream.id, 0).encode(),
                self.retry_ms,
            )
        elif self.event_store is not None:
            head = b"retry: %d\n\n" % self.retry_ms
        await reply_sse(
            session,
            stream,
            outbox,
            send,
            receive,
            extra,
            head=head,
            last=last,
            replay=replay or (),
            keepalive=self.settings.sse_keepalive if stream.standalone else None,
        )

    async def _post_sessionless(
        self, send: Send, receive: Receive, headers: Headers, classified: Classified
    ) -> None:
        """Sessionless mode: no session; each request is answered on its own, by the same
        ``answer`` as a 2026-07-28 request, at the version the POST names (see
        :mod:`mcpbind.server.sessionless_mode`). Notifications and responses are accepted and
        ignored: nothing is left for them to reach."""
        if not classified.request_ids:
            await send_response(send, 202)
            return
        header = headers.get(b"mcp-protocol-version")
        version = None if classified.initialize else (header or HEADERLESS_VERSION).strip()
        if classified.batch and not era_of(version).batches:
            message = f"Invalid Request: JSON-RPC batches are not supported in {version}"
            await send_error(send, 400, INVALID_REQUEST, message)
            return
        era = self.per_request
        await era.sessionless(
            receive, send, headers, classified, version, self.settings.session_options
        )

    @property
    def per_request(self) -> PerRequestEndpoint:
        """The app's 2026-07-28 endpoint (``_meta`` carries the protocol version, no
        session): see :mod:`mcpbind.http.server.per_request`."""
        era = self._per_request
        if era is None:
            from .per_request import PerRequestEndpoint  # the 2026 machinery loads on first use

            era = self._per_request = PerRequestEndpoint(
                self.server,
                principal=self.settings.principal,
                json_response=self.json_response,
                sse_keepalive=self.settings.sse_keepalive,
                max_listens_per_client=self.settings.max_sessions_per_client,
                options=self.settings.session_options,
            )
        return era

    # ------------------------------------------------------------------ GET
    async def _get(self, send: Send, receive: Receive, headers: Headers, scope: Scope) -> None:
        if not accepts(headers.get(b"accept"), "text/event-stream"):
            await send_error(send, 406, INVALID_REQUEST, "Not Acceptable: use text/event-stream")
            return
        session = await self._checked_session(send, headers, scope, receive)
        if session is None:
            return
        extra = [(b"mcp-session-id", session.id.encode())] if session.id else []
        last_event_id = headers.get(b"last-event-id")
        if last_event_id is not None and self.event_store is not None:
            await self._resume(session, send, receive, extra, last_event_id.strip())
            return
        stream = session.standalone
        if stream.outbox is not None:
            await send_error(
                send,
                409,
                INVALID_REQUEST,
                "Conflict: a GET stream is already open for this session",
            )
            return
        outbox = Outbox(MAX_PENDING)
        session.attach(stream, outbox)
        await self._reply_sse(session, stream, outbox, send, receive, extra)

    async def _resume(
        self,
        session: HttpSession,
        send: Send,
        receive: Receive,
        extra: list[tuple[bytes, bytes]],
        last_event_id: str,
    ) -> None:
        """GET + ``Last-Event-ID``: replay that one stream after the id, then keep it live."""
        assert self.event_store is not None
        parsed = parse_event_id(last_event_id)
        stream = session.stream(parsed[0]) if parsed is not None else None
        if parsed is None or stream is None or parsed[1] > stream.n:  # the last: not sent
            await send_error(send, 404, INVALID_REQUEST, "Not Found: unknown Last-Event-ID")
            return
        if stream.outbox is not None:
            # The client resumes, so the connection still attached is one it has given up on
            # (dropped before the server noticed): the resume takes the stream over.
            stream.outbox.close()
            stream.outbox = None
        outbox = Outbox(MAX_PENDING, blocking=not stream.standalone)
        session.resume(stream, outbox)  # attach first: nothing sent from now on is missed
        events: list[tuple[int, bytes]] | None = []
        unreachable = False
        if parsed[1] < stream.n:  # else the client has them all: nothing to read
            try:
                events = await self.event_store.events_after(stream.id, parsed[1])
            except Exception as exc:
                logger.warning("event store unreachable for a resume: %r", exc)
                unreachable = True
        await session.release(stream)  # a finished stream: handed over now, or refused
        if unreachable:
            session.detach(stream, outbox)
            await send_error(
                send,
                503,
                INVALID_REQUEST,
                "Service Unavailable: the event store cannot be reached",
                [(b"retry-after", b"1")],
            )
            return
        if events is None:
            session.detach(stream, outbox)
            await send_error(
                send, 404, INVALID_REQUEST, "Not Found: events after Last-Event-ID expired"
            )
            return
        await self._reply_sse(
            session, stream, outbox, send, receive, extra, last=parsed[1], replay=events
        )

    # ------------------------------------------------------------------ DELETE
    async def _delete(self, send: Send, receive: Receive, headers: Headers, scope: Scope) -> None:
        session = await self._checked_session(send, headers, scope, receive)
        if session is None:
            return
        if session.id is not None:
            self.sessions.pop(session.id, None)
        await session.close()
        await send_response(send, 200)

    # ------------------------------------------------------------------ idle sessions
    async def _reap(self) -> None:
        timeouts = [t for t in (self.idle_timeout, self.settings.init_timeout) if t is not None]
        period = max(0.05, min(min(timeouts) / 4, 30.0))
        while True:
            await asyncio.sleep(period)
            await self._reap_once()

    async def _reap_once(self) -> None:
        """Terminate the sessions idle for longer than ``idle_timeout`` (no open stream), and
        those without ``notifications/initialized`` ``init_timeout`` after they began."""
        now = asyncio.get_running_loop().time()
        idle = -1.0 if self.idle_timeout is None else now - self.idle_timeout
        unborn = -1.0 if self.settings.init_timeout is None else now - self.settings.init_timeout
        stale = [
            s
            for s in self.sessions.values()
            if (s.last_active < idle and not s.busy) or (s.created < unborn and not s.initialized)
        ]
        for session in stale:
            if session.id is not None:
                self.sessions.pop(session.id, None)
            await session.close()


def _stateless_header(headers: Headers, classified: Classified) -> bool:
    """A single message the stateless era answers though ``classify_body`` did not mark it:
    ``MCP-Protocol-Version`` names a 2026-07-28-era version (a request without ``_meta`` is
    malformed there), or an ``initialize`` carrying the modern ``_meta``."""
    if classified.batch:
        return False
    if classified.initialize and classified.meta_version is not None:
        return True  # a modern request named "initialize": the stateless era answers -32601
    version = headers.get(b"mcp-protocol-version")
    return version is not None and era_of(version.strip()).stateless and not classified.initialize


def streamable_http_app(server: Server, **options: Any) -> StreamableHTTPApp:
    """``StreamableHTTPApp(server, **options)``, for symmetry with ``serve_http``."""
    return StreamableHTTPApp(server, **options)
