"""One client's session with a ``Server``: the handshake, the built-in methods, the handler
contexts, and the notifications a session sends (list changes, resource updates, logging).

``serve(server, transport)`` runs a session until the client goes away; ``serve_stdio(server)``
is the ``python -m`` entry for a stdio server.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import sys
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, RequestOptions

from .._asyncio import Flag, LoopChoice, choose_loop
from .._lazy import LazyModule, lazy_logger
from ..connection import Connection, ConnectionClosed
from ..protocol import (
    METHOD_NOT_FOUND,
    McpError,
    NotificationReceived,
    RequestId,
    RequestReceived,
    Session,
    SessionOptions,
    custom_method,
    has_capability,
)
from ..runner import current_request_id
from ..transports import Transport, TransportClosed
from . import threads
from .app import Server
from .context import Context
from .dispatch import Encoded, encoded, run_request
from .lifespan import STARTUP_FAILURE, LifespanError, held
from .limits import server_inflight
from .listen_hub import LISTEN, ListenHub
from .middleware import TransportName, session_started
from .principal import Principal, current_principal
from .sessionless_mode import initialize_result

if TYPE_CHECKING:
    from mcpbind_types.unified import methods as m
else:  # the method table (and the types) imported at the first use (issue 15, cold start)
    m = LazyModule("mcpbind_types.unified.methods", globals(), "m")

__all__ = ["ServerSession", "serve", "serve_stdio"]

logger = lazy_logger("mcpbind.server")

_CLOSED = (TransportClosed, anyio.BrokenResourceError, anyio.ClosedResourceError)

THREAD_GRACE = 2.0
"""Seconds the requests still running at stdin EOF get to send their answers (the client
closed its input but may still read), and then seconds ``serve`` waits, once the client is
gone, for ``def`` tools still running."""

_LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
    "prompts": "notifications/prompts/list_changed",
}


#: Methods the session answers itself, before the server's handlers.
_SESSION_METHODS = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)


class ServerSession:
    """The server side of one connection. Implements the handler context's ``Peer``."""

    def __init__(
        self,
        server: Server,
        transport: Transport,
        *,
        options: SessionOptions | None = None,
        debounce: float = 0.05,
        transport_name: TransportName | None = None,
    ) -> None:
        self.server = server
        #: What carries this session (``None``: in memory), for the session metrics.
        self.transport_name = transport_name
        if server.debug and not (options is not None and options.debug):
            # Server(debug=True) and SessionOptions(debug=True) are the same switch.
            options = msgspec.structs.replace(options or SessionOptions(), debug=True)
        self.core = Session("server", None, options)
        self.core.set_local_capabilities(server.capabilities())
        for name in server.custom:
            if name not in m.CLIENT_TO_SERVER:
                self.core.register_method(custom_method(name, "client_to_server"))
        #: 2026-07-28 requests on this connection (until ``initialize``): the core accepts
        #: them by that era's rules, and they run like any other request. A server serving no
        #: 2026-07-28 version still has the era: it answers such a request -32022 with the
        #: versions it serves (basic/versioning.mdx), not "server not initialized".
        #: The server's encoded 2026-07-28 identity and era, refreshed with the core's.
        self._encoded: Encoded = encoded(server)
        self.core.stateless = self._encoded.era
        self.connection = Connection(
            self.core, transport, on_request=self._on_request, on_notification=self._on_notification
        )
        self.connection.shared_limit = server_inflight(server)
        self.connection.eof_grace = THREAD_GRACE  # stdin EOF: running handlers still answer
        #: 2026-07-28 requests answered on this connection (for tests and metrics).
        self.served = 0
        #: This connection's ``subscriptions/listen`` streams (created on first use).
        self.hub: ListenHub | None = None
        #: The caller's newest principal, set by an auth layer (a refreshed or stepped-up
        #: token); ``None``: the principal of the request that opened the session.
        self.principal: Principal | None = None
        self.log_level: str | None = None
        #: ``Context.session_state`` of every request of this session.
        self.state: dict[str, Any] = {}
        self.subscriptions: set[str] = set()
        #: The headers of the HTTP request that carried each request not yet started, by id
        #: (filled by an HTTP transport, taken as the request's context is made); ``None``:
        #: not over HTTP.
        self.request_headers: dict[RequestId, Mapping[str, str]] | None = None
        self.client_info: t.Implementation | None = None
        self.initialized = Flag()
        self._debounce = debounce
        self._dirty: set[str] = set()
        self._flush_scheduled = False

    # ------------------------------------------------------------------ Peer (for Context)
    async def send_request(
        self,
        method: MethodInfo[Any, Any],
        params: Any,
        options: RequestOptions | None = None,
        *,
        key: str | None = None,
    ) -> Any:
        return await self.connection.request(method.method, params, options, info=method)

    async def send_notification(self, method: MethodInfo[Any, None], params: Any) -> None:
        await self.connection.notify(method.method, params)

    def peer_has_capability(self, path: tuple[str, ...]) -> bool:
        return has_capability(self.core.peer_capabilities, path)

    # ------------------------------------------------------------------ eras
    @property
    def era(self) -> str | None:
        """``"handshake"`` after ``initialize``, ``"stateless"`` once a 2026-07-28 request was
        answered, else ``None``."""
        if self.core.version is not None:
            return "handshake"
        return "stateless" if self.served else None

    def close_listeners(self) -> None:
        """End this connection's listen subscriptions gracefully (their final result)."""
        if self.hub is not None:
            self.hub.close_all()

    # ------------------------------------------------------------------ running
    async def run(self) -> None:
        """Serve until the client disconnects."""
        unsubscribe = self.server.on_change(self._mark_changed)
        # OpenTelemetry's session metrics, when active.
        ended = session_started(self.server.active_middleware, self.transport_name)
        failure: BaseException | None = None
        try:
            async with self.connection:
                try:
                    await self.connection.wait_closed()
                finally:
                    # Before the connection's task group ends: a change announced while it
                    # closes must not reach a session that can start no task (it raised in
                    # the caller of ``Server.resource_updated``/``tool()`` and skipped the
                    # other sessions).
                    unsubscribe()
        except BaseException as exc:
            failure = exc
            raise
        finally:
            unsubscribe()
            if ended is not None:
                ended(self.core.version, failure)

    async def ping(self, timeout: float | None = None) -> None:
        """Ping the client (``ping`` works both ways)."""
        await self.connection.request("ping", None, RequestOptions(timeout=timeout))

    async def notify_resource_updated(self, uri: str) -> None:
        """``notifications/resources/updated`` if this client subscribed to ``uri``."""
        if uri in self.subscriptions and not self.connection.closed:
            try:
                await self.connection.notify(
                    m.S2C_RESOURCE_UPDATED.method, t.ResourceUpdatedNotificationParams(uri=uri)
                )
            except ConnectionClosed:
                return  # the session ended meanwhile (found by the cluster soak), as _flush

    # ------------------------------------------------------------------ list_changed
    def _mark_changed(self, what: str, uri: str | None = None) -> None:
        # A first tool, prompt or resource: new caps.
        self._encoded = encoded(self.server)
        self.core.stateless = self._encoded.era
        if not self.initialized.is_set() or not self.connection.started:
            return  # before the handshake the client will list anyway
        if what == "updated":
            if uri is not None and uri in self.subscriptions:
                self._start_unrelated(self.notify_resource_updated, uri)
            return
        self._dirty.add(what)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._start_unrelated(self._flush)

    def _start_unrelated(self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        """Start ``fn`` as a task related to no request.

        A change is often made from inside a handler, whose context names its request
        (``current_request_id``); a task started there would inherit it, and the transport
        would route the notification onto that request's response stream (HTTP: the POST's
        SSE stream, which may end before the notification is written) instead of the
        session's own channel (the GET stream).
        """
        context = contextvars.copy_context()
        context.run(current_request_id.set, None)
        context.run(self.connection.spawn, functools.partial(fn, *args))

    async def _flush(self) -> None:
        await anyio.sleep(self._debounce)  # many registrations -> one notification per list
        self._flush_scheduled = False
        dirty, self._dirty = self._dirty, set()
        declared = self.core.local_capabilities
        for what in sorted(dirty):
            # Only kinds declared (with listChanged) at the handshake: a kind registered later
            # is invisible to this client until it reconnects.
            if has_capability(declared, (what, "listChanged")) and not self.connection.closed:
                try:
                    await self.connection.notify(_LIST_CHANGED[what], None)
                except ConnectionClosed:
                    return  # the session ended meanwhile (found by the soak benchmark)

    # ------------------------------------------------------------------ dispatch
    async def _on_notification(self, event: NotificationReceived) -> None:
        if event.method == "notifications/initialized":
            self.initialized.set()
        handler = self.server.notification_handlers.get(event.method)
        if handler is not None:
            ctx = Context(
                peer=self,
                protocol_version=self.core.version,
                session_state=self.state,
                lifespan_state=self.server.lifespan_state,
            )
            await handler(event.params, ctx)

    def _on_request(self, event: RequestReceived) -> Awaitable[Any]:
        """The coroutine that answers ``event``: the handler's own, so a request costs no
        frame here while it runs (the connection awaits it)."""
        method = event.method
        meta = event.meta
        if meta is not None:
            # A 2026-07-28 request, accepted by the core with the era's rules: its handler
            # runs with a stateless context; what it emits goes out unless the client
            # cancelled it (_emit).
            self.served += 1
            if method == LISTEN:
                return self._listen(event)
            return run_request(
                self.server,
                event.id,
                method,
                event.params,
                meta,
                enc=self._encoded,
                emit_for=self._emit,
                debug=self.core.options.debug,
            )
        handler = self.server.handlers.get(method)
        if handler is None or method in _SESSION_METHODS:
            if not self.server.active_middleware:
                return self._session_request(event)
            # Middleware sees the requests the session answers itself too.
            handler = self.server.layered(method, lambda _p, _c: self._session_request(event))
        ctx = Context(
            peer=self,
            protocol_version=self.core.version,
            request_id=event.id,
            progress_token=event.progress_token,
            is_cancelled=lambda: self.connection.is_cancelled(event.id),
            session_state=self.state,
            debug_errors=self.core.options.debug,
            principal=self.principal or current_principal.get(),
            headers=None
            if (carried := self.request_headers) is None
            else carried.pop(event.id, None),
            lifespan_state=self.server.lifespan_state,
        )
        return handler(event.params, ctx)

    async def _session_request(self, event: RequestReceived) -> Any:
        """A request the session answers itself (or an unknown method)."""
        method = event.method
        if method == "initialize":
            return self._initialize(event.params)
        if method == "ping":
            return {}
        if method == "logging/setLevel":
            self.log_level = event.params.level
            return {}
        if method == "resources/subscribe":
            self.subscriptions.add(event.params.uri)
            return {}
        if method == "resources/unsubscribe":
            self.subscriptions.discard(event.params.uri)
            return {}
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")

    async def _emit(self, rid: RequestId, message: bytes) -> None:
        """Send a notification of 2026-07-28 request ``rid`` unless the client cancelled it."""
        connection = self.connection
        if not connection.is_cancelled(rid):
            with contextlib.suppress(ConnectionClosed, *_CLOSED):
                await connection.send(message)

    async def _listen(self, event: RequestReceived) -> Any:
        """``subscriptions/listen`` on this connection (subscriptions.mdx): the
        acknowledgement, then tagged notifications until ``notifications/cancelled`` names it
        (its handler is cancelled) or the connection ends; ``close_listeners()`` ends it with
        the final result (Graceful Closure)."""
        if self.hub is None:
            self.hub = ListenHub(self.server)
        sub = self.hub.subscribe(event.id, msgspec.json.encode(event.params))
        try:
            await self.connection.send(sub.acknowledgement())
            while (message := await sub.next()) is not None:
                await self.connection.send(message)
            return sub.final_value()
        finally:
            self.hub.close(sub)

    def _initialize(self, params: t.InitializeRequestParams) -> t.InitializeResult:
        self.client_info = params.client_info
        return initialize_result(self.server, params, self.server.capabilities())


async def serve(server: Server, transport: Transport, **options: Any) -> None:
    """Run one session of ``server`` over ``transport`` until the client goes away. A
    handler's uncaught exception is logged with its traceback on stderr unless the
    application configured logging itself (``mcpbind.server.logs``)."""
    from .logs import log_to_stderr

    log_to_stderr()
    async with held(server):  # the server's lifespan, once per process (LifespanError)
        await ServerSession(server, transport, **options).run()
    if threads.on_asyncio():
        # The client is gone; ``def`` tools still running were told (``ctx.cancelled``) and
        # get a short grace to finish their side effects; then the server ends without them.
        left = await threads.drain(THREAD_GRACE)
        if left:
            logger.warning(
                "%d tool thread(s) still running after %ss; not waited for", left, THREAD_GRACE
            )


def serve_stdio(
    server: Server,
    *,
    max_message_size: int | None = None,
    write_high_water: int | None = None,
    loop: LoopChoice = "auto",
) -> None:
    """Serve ``server`` over stdin/stdout (the stdio transport); returns on stdin EOF.
    ``max_message_size``: the longest message line read (default 16 MiB); the client's cap
    (``StdioClientTransport.spawn(max_message_size=...)``) bounds what it reads back.
    ``write_high_water``: bytes of answers a client leaves unread before no more requests are
    read (default 1 MiB; see ``StdioServerTransport``).
    ``loop``: the event loop, as for ``serve_http`` (``"auto"``: uvloop when installed).
    A ``Server(lifespan=...)`` that fails at start: one line on stderr, exit status 3."""
    from ..transports import DEFAULT_MAX_MESSAGE_SIZE, StdioServerTransport
    from ..transports.stdio.fdio import DEFAULT_WRITE_HIGH_WATER

    use_uvloop = choose_loop(loop) == "uvloop"

    async def main() -> None:
        transport = StdioServerTransport(
            max_message_size=max_message_size or DEFAULT_MAX_MESSAGE_SIZE,
            write_high_water=write_high_water or DEFAULT_WRITE_HIGH_WATER,
        )
        await serve(server, transport, transport_name="stdio")

    try:
        anyio.run(main, backend_options={"use_uvloop": use_uvloop})
    except KeyboardInterrupt:  # pragma: no cover - interactive
        sys.exit(130)
    except LifespanError as exc:  # one line, nothing served (docs/snippets/exit-codes.md)
        print(exc, file=sys.stderr, flush=True)
        sys.exit(STARTUP_FAILURE)
