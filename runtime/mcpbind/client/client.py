"""``Client``: one isolated session with one server, in either protocol era.

``async with Client(transport) as client:`` connects; every method of the generated
``ServerMethods`` stubs is then typed (``await client.call_tool(...)`` returns a
``CallToolResult``). ``protocol_version`` picks the era: a handshake version runs the
``initialize`` handshake; ``"2026-07-28"`` speaks the stateless era (per-request ``_meta``);
``"auto"`` (the default) probes with ``server/discover`` and falls back to ``initialize`` for
older servers (transports/stdio.mdx, Backward Compatibility). What the server asks of the client (sampling,
elicitation, roots) goes to the handlers given here on both eras: server-to-client requests on
the handshake era, ``InputRequiredResult`` rounds on 2026-07-28; refused unless declared.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, P, R, RequestOptions, json_object
from mcpbind_types.unified.stubs import ServerMethods

from .. import protocol
from .._lazy import LazyModule, lazy_logger
from ..output_schema import OutputSchema
from ..protocol import (
    METHOD_NOT_FOUND,
    McpError,
    NotificationReceived,
    RequestReceived,
    UrlElicitationRequired,
)
from ..versions import AUTO, LATEST_STATELESS
from .cache import INVALIDATES, ResultCache
from .connect import open_location, open_target, parse_location
from .handlers import ClientHandlers, capabilities_of
from .negotiation import Offer, UnsupportedVersion, negotiate, probes
from .outgoing_meta import OutgoingMeta

if TYPE_CHECKING:
    from mcpbind_types.unified import methods as m

    from ..connection import ClientMiddleware, Connection
    from ..launch import ServerLocation
    from ..server.app import Server
    from ..tasks.receiver import TaskReceiver
    from ..transports.base import Transport
    from .listen import Listener
    from .pipeline import Pipeline
    from .subscription import Subscription

__all__ = ["Client", "ClientHandlers", "UnsupportedVersion"]

if not TYPE_CHECKING:  # the method table, imported with the first call (issue 15, cold start)
    m = LazyModule("mcpbind_types.unified.methods", globals(), "m")

logger = lazy_logger("mcpbind.client")


class Client(ServerMethods):
    """A typed MCP client. ``Client(server)`` connects in memory to an mcpbind ``Server``;
    ``Client("python server.py")``, ``Client("server.py")`` and ``Client("https://.../mcp")``
    spawn or reach one as the CLI does (:mod:`mcpbind.transports.launch`); a ``Transport``, or
    a context manager that opens one (``connect_http(url, headers=...)``), is used as given.

    ``protocol_version``: ``"auto"`` (the default) probes with ``server/discover``
    (``probe_timeout``) and falls back to ``initialize`` on the same connection, so each
    server gets the newest era it speaks and application code does not change with it
    (``ping`` becomes a discover, ``logging/setLevel`` a per-request level, sampling,
    elicitation and roots are answered in input rounds, ``listen()`` opts in to change
    notifications in either era). A handshake version (``LATEST_HANDSHAKE``) forces
    ``initialize``; ``"2026-07-28"`` forces the stateless era. ``era`` and
    ``protocol_version`` tell what was chosen; the probe waits at most ``probe_timeout`` and
    never longer than ``timeout``. Stateless-era only: ``cache`` keeps list and read
    results while their ``ttlMs`` says they are fresh; ``max_input_rounds`` bounds the input
    rounds of one request; ``max_reissues`` bounds re-sending a request whose HTTP response
    stream broke; ``log_level`` is sent with every request; over HTTP, tools' ``x-mcp-header``
    parameters are mirrored into ``Mcp-Param-*`` headers. ``listen()`` opts in to change
    notifications (``subscriptions/listen``), delivered to ``handlers.notification``.
    """

    def __init__(
        self,
        transport: str | Server | Transport | contextlib.AbstractAsyncContextManager[Transport],
        *,
        name: str = "mcpbind",
        version: str = "0.1.0",
        handlers: ClientHandlers | None = None,
        protocol_version: str = AUTO,
        timeout: float | None = 60.0,
        enforce_capabilities: bool = True,
        refresh_lists: bool = False,
        cache: bool = True,
        max_input_rounds: int = 8,
        probe_timeout: float | None = 10.0,
        log_level: str | None = None,
        max_reissues: int = 2,
        auth: Any = None,
        middleware: Sequence[ClientMiddleware] = (),
    ) -> None:
        # A bad command line fails here, not on enter.
        self._location: ServerLocation | None = (
            parse_location(transport) if isinstance(transport, str) else None
        )
        self._target = None if isinstance(transport, str) else transport
        #: For a URL or a command line: the HTTP transport's ``auth=`` (an ``httpx2.Auth`` such
        #: as ``mcpbind.auth.client.OAuth``, or a bearer token string).
        self.auth = auth
        #: Around every request this client sends, the first outermost (issue 32).
        self.middleware = list(middleware)
        self.handlers = handlers or ClientHandlers()
        self._info = t.Implementation(name=name, version=version)
        self._offer = protocol_version
        self._timeout = timeout
        self._options = protocol.SessionOptions(enforce_capabilities=enforce_capabilities)
        self._stack = contextlib.AsyncExitStack()
        self._roots: list[t.Root] = list(self.handlers.roots or [])
        self.connection: Connection | None = None
        self.server_info: t.Implementation | None = None
        self.server_capabilities: t.ServerCapabilities | None = None
        self.instructions: str | None = None
        #: With ``refresh_lists``: the server's full lists, fetched after the handshake and
        #: fetched again whenever the server says one changed (``None``: not declared).
        self.refresh_lists = refresh_lists
        self._schemas: dict[str, OutputSchema | None] = {}  # tool -> output schema, lazily
        self.tools: list[t.Tool] | None = None
        self.resources: list[t.Resource] | None = None
        self.prompts: list[t.Prompt] | None = None
        #: ``"handshake"`` or ``"stateless"`` once connected.
        self.era: str | None = None
        #: Stateless era: cached results honouring ``ttlMs`` (``None`` with ``cache=False``).
        self.cache: ResultCache | None = ResultCache() if cache else None
        self.max_input_rounds = max_input_rounds
        self.probe_timeout = probe_timeout
        #: Stateless era: the per-request ``_meta`` fields, the log level, their JSON.
        self._meta = OutgoingMeta(log_level)
        #: Stateless era: how often a request whose response stream broke is re-issued.
        self.max_reissues = max_reissues
        self._transport: Transport | None = None
        #: ``refresh_lists`` on 2026-07-28: the ``subscriptions/listen`` stream feeding it.
        self.lists_subscription: Subscription | None = None
        self._listener: Listener | None = None  # on the first listen()
        #: The 2026-07-28 request pipeline, once that era is negotiated: the stubs' requests
        #: go to it (:meth:`send_request` picks the path once per connection).
        self._pipeline: Pipeline | None = None
        #: URL-mode elicitations seen and not completed yet (elicitation.mdx).
        self._url_elicitations: set[str] = set()
        #: With ``handlers.tasks``, on the handshake era: the tasks run for the server.
        self.task_receiver: TaskReceiver | None = None

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> Client:
        try:
            await self._connect()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def _connect(self) -> None:
        if self._location is not None:
            transport = await open_location(self._location, self._stack, self.auth)
        else:
            assert self._target is not None
            transport = await open_target(self._target, self._stack)
        self._transport = transport
        self._pipeline = self._listener = None  # a client entered again starts afresh
        from ..connection import Connection  # the session machinery, with the first connection

        core = protocol.Session(
            "client", LATEST_STATELESS if probes(self._offer) else None, self._options
        )
        caps = self.capabilities()
        core.set_local_capabilities(caps)
        self._meta.introduce(caps, self._info)
        connection = self.connection = Connection(
            core,
            transport,
            on_request=self._on_request,
            on_notification=self._on_notification,
            default_timeout=self._timeout,
        )
        connection.on_url_elicitation = self._note_url_elicitations
        # issue 32, the one middleware hook of the client: every request, both eras.
        from .middleware import client_layers

        connection.use_middleware(client_layers(self.middleware))
        await self._stack.enter_async_context(connection)
        offer = Offer(
            self._offer, self._info, self._timeout, self.probe_timeout, self.auth is not None
        )
        agreed = await negotiate(connection, offer, self._meta, self._handshake_capabilities)
        self.server_capabilities = agreed.server_capabilities
        self.server_info = agreed.server_info
        self.instructions = agreed.instructions
        self.era = agreed.era
        if agreed.era == "stateless":
            from .pipeline import Pipeline

            tool_headers = getattr(transport, "tool_headers", None)
            self._pipeline = Pipeline(connection, self._meta, self, tool_headers)
        if self.refresh_lists:
            from . import refresh

            await refresh.start(self)

    def _handshake_capabilities(self) -> t.ClientCapabilities:
        """What ``initialize`` declares; with ``handlers.tasks``, the task receiver for the
        server's sampling and elicitation requests is set up here and declared too (the
        handshake era only: 2026-07-28 has no server-to-client requests)."""
        caps = self.capabilities()
        h = self.handlers
        asked = (("sampling/createMessage", h.sampling), ("elicitation/create", h.elicitation))
        methods = {name for name, handler in asked if handler is not None}
        if h.tasks and methods:
            from ..tasks.receiver import TaskReceiver

            receiver = self.task_receiver = TaskReceiver(methods)
            receiver.declare(caps)
            self._conn().core.set_local_capabilities(caps)
            self._stack.push_async_callback(receiver.aclose)
        return caps

    def capabilities(self) -> t.ClientCapabilities:
        return capabilities_of(self.handlers)

    @property
    def protocol_version(self) -> str | None:
        """The protocol version negotiated (``None`` before connecting)."""
        connection = self.connection
        return None if connection is None else connection.core.version

    @property
    def log_level(self) -> str | None:
        """Stateless era: sent as ``io.modelcontextprotocol/logLevel`` on every request."""
        return self._meta.log_level

    @log_level.setter
    def log_level(self, level: str | None) -> None:
        self._meta.log_level = level  # encoded again with the next request

    @property
    def request_meta(self) -> dict[str, Any]:
        """Stateless era: the per-request ``_meta`` fields sent with every request (protocol
        version, client capabilities and info; basic/index.mdx), the log level aside."""
        return self._meta.fields

    @property
    def roots(self) -> list[t.Root]:
        """The roots offered to the server (``handlers.roots``, then :meth:`set_roots`)."""
        return self._roots

    # ------------------------------------------------------------------ the stub funnel
    def send_request(
        self, method: MethodInfo[P, R], params: P | None, options: RequestOptions | None = None
    ) -> Coroutine[Any, Any, R]:
        # Returns the request's coroutine for the stub to await: no frame of its own per call.
        pipeline = self._pipeline
        if pipeline is not None:
            return pipeline.request(method, params, options)
        connection = self.connection
        if connection is None:
            return self._conn().request(method.method, params, options)  # raises
        return connection.request(method.method, params, options, info=method)

    def call_tool(
        self, params: t.CallToolRequestParams, /, *, options: RequestOptions | None = None
    ) -> Coroutine[Any, Any, t.CallToolResult]:
        """Send ``tools/call``. The stub's coroutine handed over without one of its own (the
        funnel returns the request's coroutine): one frame less on every call, either era."""
        return self.send_request(m.C2S_CALL_TOOL, params, options)

    def _note_url_elicitations(self, exc: UrlElicitationRequired) -> None:
        """A -32042 answer names URL elicitations whose completion may be announced later."""
        ids = (e.elicitation_id for e in exc.elicitations)
        self._url_elicitations.update(i for i in ids if isinstance(i, str))

    async def send_notification(self, method: MethodInfo[P, None], params: P | None) -> None:
        await self._conn().notify(method.method, params)

    def _conn(self) -> Connection:
        if self.connection is None:
            raise RuntimeError("use the client as `async with Client(...) as client`")
        return self.connection

    # ------------------------------------------------------------------ conveniences
    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        options: RequestOptions | None = None,
        check_output: bool = True,
    ) -> t.CallToolResult:
        """Call a tool by name; structured content is checked against the tool's output schema
        (fetched once with tools/list) when the tool declares one, in the schema's dialect
        (see :mod:`mcpbind.output_schema`); ``check_output=False`` skips the check."""
        params = t.CallToolRequestParams(name=name)
        if arguments is not None:
            params.arguments = arguments
        result = await self.call_tool(params, options=options)
        if check_output and not result.is_error:
            schema = await self._output_schema(name)
            if schema is not None:
                schema.check(result)
        return result

    async def _output_schema(self, name: str) -> OutputSchema | None:
        if name not in self._schemas:
            async for tool in self.iter_tools():
                schema = tool.output_schema
                if isinstance(schema, msgspec.UnsetType):
                    self._schemas[tool.name] = None
                else:
                    schema = json_object(schema)
                    self._schemas[tool.name] = OutputSchema(
                        tool.name, schema, self.protocol_version
                    )
        return self._schemas.get(name)

    def iter_tools(self) -> AsyncIterator[t.Tool]:
        """Every tool, following ``nextCursor`` through all pages."""
        return self._pages(self.list_tools, "tools")

    def iter_resources(self) -> AsyncIterator[t.Resource]:
        return self._pages(self.list_resources, "resources")

    def iter_resource_templates(self) -> AsyncIterator[t.ResourceTemplate]:
        return self._pages(self.list_resource_templates, "resource_templates")

    def iter_prompts(self) -> AsyncIterator[t.Prompt]:
        return self._pages(self.list_prompts, "prompts")

    async def _pages(
        self, fetch: Callable[[t.PaginatedRequestParams | None], Awaitable[Any]], items: str
    ) -> AsyncIterator[Any]:
        cursor: str | None = None
        while True:
            page = await fetch(_page(cursor))
            for item in getattr(page, items):
                yield item
            cursor = page.next_cursor if isinstance(page.next_cursor, str) else None
            if not cursor:
                return

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        options: RequestOptions | None = None,
        *,
        info: MethodInfo[Any, Any] | None = None,
    ) -> Any:
        """Low level: send any request, custom methods included; the result is plain JSON.
        ``info``: the table row to send it under (an extension's method, such as the tasks
        methods, whose result is kept as plain JSON)."""
        conn = self._conn()
        if conn.core.outbound_method(method) is None:
            conn.core.register_method(protocol.custom_method(method, "client_to_server"))
        pipeline = self._pipeline
        if pipeline is not None:
            params = {
                **(params or {}),
                "_meta": {**self._meta.fields, **((params or {}).get("_meta") or {})},
            }
            return await pipeline.send(method, params, options, info)
        return await conn.request(method, params, options, info=info)

    async def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_uris: Sequence[str] = (),
        task_ids: Sequence[str] = (),
    ) -> Subscription:
        """Opt in to change notifications; they reach ``handlers.notification`` (and
        invalidate the cache). 2026-07-28: a ``subscriptions/listen`` request kept open in
        the background, re-sent if its stream breaks (subscriptions.mdx); returns once the
        server acknowledged it. ``task_ids``: ``notifications/tasks`` for those tasks (the
        tasks extension, declared on this request; SEP-2663 §Task Status Notifications).
        Handshake era: ``resources/subscribe`` per URI (list changes, and a task's
        ``notifications/tasks/status``, arrive anyway). ``await subscription.close()`` ends
        it."""
        if self._listener is None:
            from .listen import Listener

            self._listener = Listener(
                self._conn(), self._pipeline, self._subscribe_uri, self._unsubscribe_uri
            )
        meta: dict[str, Any] | None = None
        wanted: t.SubscriptionFilter
        if task_ids and self._pipeline is not None:
            from ..protocol.meta import CLIENT_CAPABILITIES
            from ..tasks.wire import STATUS_2026, TaskSubscriptionFilter
            from .tasks import with_tasks_extension

            wanted = TaskSubscriptionFilter(task_ids=list(task_ids))
            meta = {CLIENT_CAPABILITIES: with_tasks_extension(self)[CLIENT_CAPABILITIES]}
            self._conn().core.register_method(  # received from now on (an extension's row)
                protocol.custom_method(STATUS_2026, "server_to_client", "notification")
            )
        else:
            wanted = t.SubscriptionFilter()
        if tools_list_changed:
            wanted.tools_list_changed = True
        if prompts_list_changed:
            wanted.prompts_list_changed = True
        if resources_list_changed:
            wanted.resources_list_changed = True
        if resource_uris:
            wanted.resource_subscriptions = list(resource_uris)
        return await self._listener.open(wanted, meta)

    async def _subscribe_uri(self, uri: str) -> None:
        await self.subscribe(t.SubscribeRequestParams(uri=uri))

    async def _unsubscribe_uri(self, uri: str) -> None:
        await self.unsubscribe(t.UnsubscribeRequestParams(uri=uri))

    async def set_roots(self, roots: Sequence[t.Root]) -> None:
        """Replace the roots and tell the server (``notifications/roots/list_changed``)."""
        self._roots = list(roots)
        if self.era != "stateless":  # 2026-07-28: roots travel in each input round instead
            await self._conn().notify("notifications/roots/list_changed", None)

    # ------------------------------------------------------------------ server -> client
    async def _on_request(self, event: RequestReceived) -> Any:
        tasks = self.task_receiver
        if tasks is not None:
            if event.method.startswith("tasks/"):
                return await tasks.serve(event.method, event.params)
            if tasks.wants(event.method, event.params):
                return await tasks.create(event.params, lambda: self._answer(event), self._conn())
        return await self._answer(event)

    async def _answer(self, event: RequestReceived) -> Any:
        h = self.handlers
        if event.method == "ping":
            return {}
        if event.method == "roots/list" and h.roots is not None:
            return t.ListRootsResult(roots=self._roots)
        if event.method == "sampling/createMessage" and h.sampling is not None:
            return await h.sampling(event.params)
        if event.method == "elicitation/create" and h.elicitation is not None:
            eid = getattr(event.params, "elicitation_id", None)
            if isinstance(eid, str):  # URL mode: its completion may be announced later
                self._url_elicitations.add(eid)
            return await h.elicitation(event.params)
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {event.method}")

    async def _on_notification(self, event: NotificationReceived) -> None:
        if event.method == "notifications/elicitation/complete":
            eid = event.params.elicitation_id
            if eid not in self._url_elicitations:  # elicitation.mdx: MUST ignore unknown ids
                logger.debug("ignoring completion of unknown elicitation %r", eid)
                return
            self._url_elicitations.discard(eid)
            if self.handlers.elicitation_complete is not None:
                await self.handlers.elicitation_complete(eid)
        listener = self._listener
        if event.method == "notifications/subscriptions/acknowledged" and listener is not None:
            listener.acknowledged(event.params)
        stale = INVALIDATES.get(event.method)
        if stale is not None and self.cache is not None:
            self.cache.invalidate(stale)
        if event.method == "notifications/message" and self.handlers.logging is not None:
            await self.handlers.logging(event.params)
        elif event.method.endswith("/list_changed"):
            self._schemas.clear()
            kind = event.method.split("/")[1]
            if self.refresh_lists and kind in ("tools", "resources", "prompts"):
                from .refresh import refetch

                # A request cannot wait inside the read loop: refresh in the background.
                self._conn().spawn(lambda: refetch(self, kind))
        if self.handlers.notification is not None:
            await self.handlers.notification(event.method, event.params)

    def peer_has_capability(self, path: tuple[str, ...]) -> bool:
        return protocol.has_capability(self._conn().core.peer_capabilities, path)


def _page(cursor: str | None) -> t.PaginatedRequestParams | None:
    return None if cursor is None else t.PaginatedRequestParams(cursor=cursor)
