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
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import anyio
import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, P, R, RequestOptions, json_object, json_value
from mcpbind_types.unified import methods as m
from mcpbind_types.unified.stubs import ServerMethods

from .output_schema import OutputSchema
from .protocol import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    NotificationReceived,
    RemoteProtocolError,
    RequestReceived,
    Session,
    SessionOptions,
    State,
    UrlElicitationRequired,
    custom_method,
    has_capability,
)
from .protocol.mcp_headers import InvalidToolHeaders, header_paths
from .session import Connection, PeerError, RequestTimeout
from .stateless.client_side import INVALIDATES, ResultCache, answer_inputs
from .stateless.meta import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROTOCOL_VERSION,
    SERVER_INFO,
    SUBSCRIPTION_ID,
    with_meta,
)
from .stateless.subscription import Subscription, filter_from
from .transports import Transport
from .transports.launch import ServerLocation, open_server, parse_server
from .transports.lost import STREAM_LOST
from .versions import (
    AUTO,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_STATELESS,
    STATELESS_VERSIONS,
    is_stateless,
)

if TYPE_CHECKING:
    from .server.app import Server
    from .tasks.receiver import TaskReceiver

__all__ = ["Client", "ClientHandlers", "Subscription", "UnsupportedVersion"]

_FOREVER = 10 * 365 * 86400.0  # a listen request waits as long as the subscription lasts

logger = logging.getLogger("mcpbind.client")

SamplingHandler = Callable[[t.CreateMessageRequestParams], Awaitable[t.CreateMessageResult]]
ElicitationHandler = Callable[[Any], Awaitable[t.ElicitResult]]
LoggingHandler = Callable[[t.LoggingMessageNotificationParams], Awaitable[None]]
NotificationCallback = Callable[[str, Any], Awaitable[None]]


class UnsupportedVersion(McpError):
    """The server answered with protocol versions this client does not speak."""

    def __init__(self, version: str, supported: Sequence[str] = HANDSHAKE_VERSIONS) -> None:
        super().__init__(
            -32602,
            f"Server chose protocol version {version!r}; this client supports {', '.join(supported)}",
            {"supported": list(supported), "requested": version},
        )


@dataclass
class ClientHandlers:
    """What the client answers when the server asks. Declared capabilities follow from it."""

    sampling: SamplingHandler | None = None
    elicitation: ElicitationHandler | None = None
    roots: Sequence[t.Root] | None = None
    logging: LoggingHandler | None = None
    #: Called for every server notification (list_changed, resources/updated, messages, ...).
    notification: NotificationCallback | None = None
    #: Declare ``sampling.tools``: the sampling handler takes ``tools``/``toolChoice``
    #: (sampling.mdx §Tools in Sampling); without it such requests are refused with -32602.
    sampling_tools: bool = False
    #: The elicitation modes the handler supports (elicitation.mdx §Capabilities).
    elicitation_modes: Sequence[str] = ("form", "url")
    #: Called with the ``elicitationId`` of a URL-mode elicitation this client saw (asked, or
    #: listed in a -32042 error) when the server says it completed; other ids are ignored.
    elicitation_complete: Callable[[str], Awaitable[None]] | None = None
    #: Be a task receiver (2025-11-25 tasks.mdx §Client Capabilities): declare ``tasks`` for
    #: the sampling and elicitation handlers given, so the server may ask for them as tasks
    #: (answered at once, run in the background, polled with ``tasks/*``). Handshake era only.
    tasks: bool = False


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
    ) -> None:
        # A bad command line fails here, not on enter.
        self._target: (
            ServerLocation | Server | Transport | contextlib.AbstractAsyncContextManager[Transport]
        ) = parse_server(transport) if isinstance(transport, str) else transport
        #: For a URL or a command line: the HTTP transport's ``auth=`` (an ``httpx2.Auth`` such
        #: as ``mcpbind.auth.client.OAuth``, or a bearer token string).
        self.auth = auth
        self.handlers = handlers or ClientHandlers()
        self._info = t.Implementation(name=name, version=version)
        self._offer = protocol_version
        self._timeout = timeout
        self._options = SessionOptions(enforce_capabilities=enforce_capabilities)
        self._stack = contextlib.AsyncExitStack()
        self._roots: list[t.Root] = list(self.handlers.roots or [])
        self.connection: Connection | None = None
        self.server_info: t.Implementation | None = None
        self.server_capabilities: t.ServerCapabilities | None = None
        self.instructions: str | None = None
        self.protocol_version: str | None = None
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
        #: Stateless era: sent as ``io.modelcontextprotocol/logLevel`` on every request.
        self.log_level = log_level
        self._meta: dict[str, Any] = {}
        #: Stateless era: how often a request whose response stream broke is re-issued.
        self.max_reissues = max_reissues
        self._transport: Transport | None = None
        #: ``refresh_lists`` on 2026-07-28: the ``subscriptions/listen`` stream feeding it.
        self.lists_subscription: Subscription | None = None
        self._listen_lock = anyio.Lock()
        self._awaiting_ack: Subscription | None = None
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
        transport = self._transport = await self._open_transport()
        probe = self._offer == AUTO or is_stateless(self._offer)
        core = Session("client", LATEST_STATELESS if probe else None, self._options)
        core.set_local_capabilities(self.capabilities())
        self.connection = Connection(
            core,
            transport,
            on_request=self._on_request,
            on_notification=self._on_notification,
            default_timeout=self._timeout,
        )
        await self._stack.enter_async_context(self.connection)
        if probe and await self._discover(core):
            self.era = "stateless"
        else:
            # A legacy server: the same connection runs the handshake (stdio.mdx).
            core.version, core.state = None, State.AWAITING_INIT
            await self._handshake(core)
            self.era = "handshake"
        if self.refresh_lists:
            if self.era == "stateless":
                await self._listen_for_lists()  # before the first fetch: no change is missed
            for kind in ("tools", "resources", "prompts"):
                await self._refresh(kind)

    async def _listen_for_lists(self) -> None:
        """``refresh_lists`` on 2026-07-28: list changes arrive only on a ``subscriptions/listen``
        stream, so open one for every list the server says can change (subscriptions.mdx)."""
        wanted = {
            kind: self.peer_has_capability((kind, "listChanged"))
            for kind in ("tools", "prompts", "resources")
        }
        if not any(wanted.values()):
            return
        try:
            self.lists_subscription = await self.listen(
                tools_list_changed=wanted["tools"],
                prompts_list_changed=wanted["prompts"],
                resources_list_changed=wanted["resources"],
            )
        except McpError as exc:  # a server without subscriptions: lists are fetched once
            logger.warning("cannot listen for list changes, lists will not refresh: %s", exc)

    async def _discover(self, core: Session) -> bool:
        """Probe with ``server/discover``: True when the server speaks a stateless version we
        do; False (with ``"auto"``) when it is a legacy server."""
        fallback = self._offer == AUTO
        version = LATEST_STATELESS if fallback else self._offer
        for _ in range(2):  # once more with a version from an UnsupportedProtocolVersionError
            self._meta = self._request_meta(version)
            params = with_meta(m.C2S_DISCOVER, None, self._meta)
            try:
                # With auth=, the first request carries the whole authorization (discovery,
                # a browser, token requests): it gets the request timeout, not the probe's.
                probe = self._probe_deadline() if self.auth is None else self._timeout
                result: t.DiscoverResult = await self._conn().request(
                    "server/discover", params, RequestOptions(timeout=probe)
                )
            except PeerError as exc:
                data = exc.data if isinstance(exc.data, dict) else {}
                if data.get("authorization") is True:
                    raise  # authorization failed: not a sign of a legacy server
                supported = data.get("supported")
                if exc.code != UNSUPPORTED_PROTOCOL_VERSION or not isinstance(supported, list):
                    if fallback:
                        return False  # any other error: a legacy server
                    raise
                common = [v for v in STATELESS_VERSIONS if v in supported and v != version]
                if common:
                    version = common[0]
                    continue
                if fallback and any(v in HANDSHAKE_VERSIONS for v in supported):
                    return False
                raise  # the server's -32022, with its list: nothing in common
            except RequestTimeout:
                if fallback:
                    return False  # no answer in time: a legacy server
                raise
            if version not in result.supported_versions:
                if fallback:
                    return False
                raise UnsupportedVersion(version, result.supported_versions)
            core.version = version
            core.set_peer_capabilities(result.capabilities)
            self.protocol_version = version
            self.server_capabilities = result.capabilities
            meta = result.meta if isinstance(result.meta, dict) else {}
            info = meta.get(SERVER_INFO)
            if isinstance(info, dict):
                with contextlib.suppress(msgspec.ValidationError):  # display only (discover.mdx)
                    self.server_info = msgspec.convert(info, t.Implementation)
            if isinstance(result.instructions, str):
                self.instructions = result.instructions
            return True
        if fallback:
            return False
        raise UnsupportedVersion(version, STATELESS_VERSIONS)

    def _probe_deadline(self) -> float | None:
        """The probe waits ``probe_timeout``, never longer than the request ``timeout``."""
        bounds = [b for b in (self.probe_timeout, self._timeout) if b is not None]
        return min(bounds) if bounds else None

    def _request_meta(self, version: str) -> dict[str, Any]:
        """basic/index.mdx, per-request protocol fields (the log level is added per request)."""
        return {
            PROTOCOL_VERSION: version,
            CLIENT_CAPABILITIES: msgspec.to_builtins(self.capabilities()),
            CLIENT_INFO: msgspec.to_builtins(self._info),
        }

    async def _handshake(self, core: Session) -> None:
        offer = LATEST_HANDSHAKE if self._offer == AUTO else self._offer
        caps = self.capabilities()
        h = self.handlers
        asked = (("sampling/createMessage", h.sampling), ("elicitation/create", h.elicitation))
        methods = {name for name, handler in asked if handler is not None}
        if h.tasks and methods:
            from .tasks.receiver import TaskReceiver

            self.task_receiver = TaskReceiver(methods)
            self.task_receiver.declare(caps)
            core.set_local_capabilities(caps)
            self._stack.push_async_callback(self.task_receiver.aclose)
        params = t.InitializeRequestParams(
            capabilities=caps, client_info=self._info, protocol_version=offer
        )
        result: t.InitializeResult = await self._conn().request("initialize", params)
        if result.protocol_version not in HANDSHAKE_VERSIONS:
            raise UnsupportedVersion(result.protocol_version)
        core.set_peer_capabilities(result.capabilities)
        self.protocol_version = result.protocol_version
        self.server_info = result.server_info
        self.server_capabilities = result.capabilities
        if isinstance(result.instructions, str):
            self.instructions = result.instructions
        await self._conn().notify("notifications/initialized", None)

    async def _open_transport(self) -> Transport:
        target = self._target
        if isinstance(target, ServerLocation):
            return await self._stack.enter_async_context(open_server(target, auth=self.auth))
        factory = target if isinstance(target, contextlib.AbstractAsyncContextManager) else None
        if factory is not None and not hasattr(factory, "send"):
            # A transport factory, such as connect_http(url, headers=...): opened here.
            opened: Transport = await self._stack.enter_async_context(factory)
            return opened
        from .server.app import Server

        if isinstance(target, Server):
            from .server.session import ServerSession
            from .transports.memory import memory_pair

            client_end, server_end = memory_pair()
            session = ServerSession(target, server_end)
            tg = await self._stack.enter_async_context(anyio.create_task_group())
            tg.start_soon(session.run)
            self._stack.callback(tg.cancel_scope.cancel)
            return client_end
        return cast(Transport, target)  # a transport, perhaps also a context manager: as given

    def capabilities(self) -> t.ClientCapabilities:
        caps = t.ClientCapabilities()
        h = self.handlers
        if h.sampling is not None:
            caps.sampling = t.ClientCapabilitiesSampling()
            if h.sampling_tools:
                caps.sampling.tools = {}
        if h.elicitation is not None:
            unknown = set(h.elicitation_modes) - {"form", "url"}
            if unknown or not h.elicitation_modes:
                raise ValueError(f"elicitation_modes: 'form' and/or 'url', not {unknown or 'none'}")
            caps.elicitation = t.ClientCapabilitiesElicitation()
            for mode in h.elicitation_modes:
                setattr(caps.elicitation, mode, {})
        if h.roots is not None:
            caps.roots = t.ClientCapabilitiesRoots(list_changed=True)
        return caps

    # ------------------------------------------------------------------ the stub funnel
    async def send_request(
        self, method: MethodInfo[P, R], params: P | None, options: RequestOptions | None = None
    ) -> R:
        if self.era == "stateless":
            stateless: R = await self._stateless_request(method, params, options)
            return stateless
        try:
            result: R = await self._conn().request(method.method, params, options)
        except UrlElicitationRequired as exc:
            ids = (e.elicitation_id for e in exc.elicitations)
            self._url_elicitations.update(i for i in ids if isinstance(i, str))
            raise
        return result

    async def _stateless_request(
        self, method: MethodInfo[Any, Any], params: Any, options: RequestOptions | None
    ) -> Any:
        """One request on 2026-07-28: ``_meta``, the cache, and the MRTR retry loop."""
        name = method.method
        if name == "ping":  # no ping in this era; discover answers "are you there" as well
            await self._conn().request("server/discover", with_meta(method, None, self._meta))
            return {}
        if name == "logging/setLevel":  # logging.mdx (2026-07-28): a level per request
            self._conn().core._check_send_capability(method)  # refused as on the handshake era
            self.log_level = params.level
            return {}
        if method.versions and self.protocol_version not in method.versions:
            raise McpError(
                METHOD_NOT_FOUND, f"{name} is not part of protocol {self.protocol_version}"
            )
        cache = self.cache if ResultCache.cacheable(name, params) else None
        if cache is not None:
            hit = cache.get(name, params)
            if hit is not None:
                return hit
        meta = self._meta if self.log_level is None else {**self._meta, LOG_LEVEL: self.log_level}
        wire = with_meta(method, params, meta)
        rounds = 0
        while True:
            result = await self._send_stateless(name, wire, options)
            if isinstance(result, t.InputRequiredResult):
                rounds += 1
                if rounds > self.max_input_rounds:
                    raise McpError(
                        INTERNAL_ERROR, f"{name} still needs input after {rounds - 1} rounds"
                    )
                requests = result.input_requests
                responses = await answer_inputs(
                    requests if isinstance(requests, dict) else {},
                    sampling=self.handlers.sampling,
                    elicitation=self.handlers.elicitation,
                    roots=self._roots if self.handlers.roots is not None else None,
                    caps=self._conn().core.local_capabilities,
                )
                # mrtr.mdx, Client Requirements: echo requestState exactly (or omit it); the
                # retry is a new request with a new id.
                wire = msgspec.structs.replace(
                    wire,
                    input_responses=responses if responses else msgspec.UNSET,
                    request_state=result.request_state,
                )
                continue
            kind = getattr(result, "result_type", msgspec.UNSET)
            if kind is not msgspec.UNSET and kind != "complete":
                # basic/index.mdx, ResultType: an unrecognized value is invalid.
                raise RemoteProtocolError(
                    INTERNAL_ERROR, f"Unrecognized resultType {kind!r} for {name}"
                )
            if name == "tools/list" and isinstance(result, t.ListToolsResult):
                result = self._vet_tools(result)
            if cache is not None and rounds == 0:
                cache.put(name, params, result)
            return result

    async def _send_stateless(self, name: str, wire: Any, options: RequestOptions | None) -> Any:
        """One round on the wire: a request whose response stream broke is re-issued with a
        new id (streamable-http.mdx, 2026-07-28: no resumption), and a tools/call refused
        with HeaderMismatch is retried once after re-reading the tool list (§Client
        Behavior of Custom Headers)."""
        reissues = 0
        refreshed = False
        while True:
            try:
                return await self._conn().request(name, wire, options)
            except PeerError as exc:
                lost = isinstance(exc.data, dict) and exc.data.get(STREAM_LOST) is True
                if lost and reissues < self.max_reissues and not self._conn().closed:
                    reissues += 1
                    logger.info("%s lost its response stream; re-issuing it", name)
                    continue
                if exc.code == HEADER_MISMATCH and name == "tools/call" and not refreshed:
                    refreshed = True
                    await self._reread_tools()
                    continue
                raise

    def _vet_tools(self, result: t.ListToolsResult) -> t.ListToolsResult:
        """Over HTTP, keep each tool's ``x-mcp-header`` parameters for its calls and leave out
        tools whose annotations are invalid (streamable-http.mdx §Schema Extension)."""
        registry = getattr(self._transport, "tool_headers", None)
        if not isinstance(registry, dict):
            return result  # other transports MAY ignore x-mcp-header
        kept: list[t.Tool] = []
        for tool in result.tools:
            try:
                paths = header_paths(json_value(tool.input_schema))
            except InvalidToolHeaders as exc:
                registry.pop(tool.name, None)
                logger.warning("leaving out tool %r: %s", tool.name, exc)
                continue
            if paths:
                registry[tool.name] = paths
            else:
                registry.pop(tool.name, None)
            kept.append(tool)
        if len(kept) == len(result.tools):
            return result
        return msgspec.structs.replace(result, tools=kept)

    async def _reread_tools(self) -> None:
        """Every page of tools/list, past the cache, to learn the current header rules."""
        if self.cache is not None:
            self.cache.invalidate(("tools/list",))
        async for _ in self.iter_tools():
            pass

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
    ) -> Any:
        """Low level: send any request, custom methods included; the result is plain JSON."""
        conn = self._conn()
        if method not in conn.core._outbound:
            conn.core.register_method(custom_method(method, "client_to_server"))
        if self.era == "stateless":
            params = {
                **(params or {}),
                "_meta": {**self._meta, **((params or {}).get("_meta") or {})},
            }
        return await conn.request(method, params, options)

    async def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_uris: Sequence[str] = (),
    ) -> Subscription:
        """Opt in to change notifications; they reach ``handlers.notification`` (and
        invalidate the cache). 2026-07-28: a ``subscriptions/listen`` request kept open in
        the background, re-sent if its stream breaks (subscriptions.mdx); returns once the
        server acknowledged it. Handshake era: ``resources/subscribe`` per URI (list changes
        arrive anyway). ``await subscription.close()`` ends it."""
        wanted = t.SubscriptionFilter()
        if tools_list_changed:
            wanted.tools_list_changed = True
        if prompts_list_changed:
            wanted.prompts_list_changed = True
        if resources_list_changed:
            wanted.resources_list_changed = True
        if resource_uris:
            wanted.resource_subscriptions = list(resource_uris)
        sub = Subscription(wanted)
        if self.era != "stateless":
            for uri in resource_uris:
                await self.subscribe(t.SubscribeRequestParams(uri=uri))
            sub.acknowledge(None, wanted)
            self._conn().spawn(lambda: self._legacy_subscription(sub, list(resource_uris)))
            return sub
        self._conn().spawn(lambda: self._listen(sub))
        await sub.wait_acknowledged()
        return sub

    async def _listen(self, sub: Subscription) -> None:
        """Run the listen request until the server ends it, the caller closes it, or it fails
        (a broken stream is re-sent, ``max_reissues`` times in a row without an ack)."""
        params = with_meta(
            m.C2S_SUBSCRIPTIONS_LISTEN,
            t.SubscriptionsListenRequestParams(meta={}, notifications=sub.requested),
            self._meta,
        )
        failures = 0
        try:
            while True:
                with sub.new_scope():
                    async with self._listen_lock:  # one unacknowledged listen at a time
                        self._awaiting_ack = sub
                    try:
                        await self._conn().request(
                            "subscriptions/listen", params, RequestOptions(timeout=_FOREVER)
                        )
                        return  # the server's graceful end
                    except PeerError as exc:
                        lost = isinstance(exc.data, dict) and exc.data.get(STREAM_LOST) is True
                        acked_before = sub.id is not None
                        failures = 0 if acked_before else failures + 1
                        if not lost or failures > self.max_reissues or self._conn().closed:
                            sub.end(exc)
                            return
                        sub.reconnects += 1
                        sub.id = None
                        logger.info("the subscriptions/listen stream broke; listening again")
                    except McpError as exc:
                        sub.end(exc)
                        return
                if not sub.active or sub._scope.cancel_called:
                    return
                await anyio.sleep(min(0.1 * 2**failures, 5.0))
        finally:
            if self._awaiting_ack is sub:
                self._awaiting_ack = None
            sub.end()

    async def _legacy_subscription(self, sub: Subscription, uris: list[str]) -> None:
        """Handshake era: hold the resource subscriptions until ``close()``."""
        try:
            with sub.new_scope():
                await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(McpError):
                for uri in uris:
                    if not self._conn().closed:
                        await self.unsubscribe(t.UnsubscribeRequestParams(uri=uri))
            sub.end()

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

    async def _refresh(self, kind: str) -> None:
        """Fetch one full list (every page) into ``self.tools``/``resources``/``prompts``."""
        if not self.peer_has_capability((kind,)):
            return
        pages = {
            "tools": self.iter_tools,
            "resources": self.iter_resources,
            "prompts": self.iter_prompts,
        }
        items = [item async for item in pages[kind]()]
        setattr(self, kind, items)

    async def _on_notification(self, event: NotificationReceived) -> None:
        if event.method == "notifications/elicitation/complete":
            eid = event.params.elicitation_id
            if eid not in self._url_elicitations:  # elicitation.mdx: MUST ignore unknown ids
                logger.debug("ignoring completion of unknown elicitation %r", eid)
                return
            self._url_elicitations.discard(eid)
            if self.handlers.elicitation_complete is not None:
                await self.handlers.elicitation_complete(eid)
        if event.method == "notifications/subscriptions/acknowledged":
            self._acknowledged(event.params)
        stale = INVALIDATES.get(event.method)
        if stale is not None and self.cache is not None:
            self.cache.invalidate(stale)
        if event.method == "notifications/message" and self.handlers.logging is not None:
            await self.handlers.logging(event.params)
        elif event.method.endswith("/list_changed"):
            self._schemas.clear()
            kind = event.method.split("/")[1]
            if self.refresh_lists and kind in ("tools", "resources", "prompts"):
                # A request cannot wait inside the read loop: refresh in the background.
                self._conn().spawn(lambda: self._refresh_quietly(kind))
        if self.handlers.notification is not None:
            await self.handlers.notification(event.method, event.params)

    def _acknowledged(self, params: Any) -> None:
        """Match an acknowledgment to the listen request waiting for one (subscriptions.mdx:
        its ``subscriptionId`` is that request's id)."""
        sub = self._awaiting_ack
        if sub is None:
            return
        meta = params.get("_meta") if isinstance(params, dict) else getattr(params, "meta", None)
        raw = params.get("notifications") if isinstance(params, dict) else params.notifications
        agreed = filter_from(raw)
        sid = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if agreed is None or not isinstance(sid, int | str):
            logger.warning("ignoring a malformed subscriptions acknowledgment: %r", params)
            return
        self._awaiting_ack = None
        sub.acknowledge(sid, agreed)

    async def _refresh_quietly(self, kind: str) -> None:
        try:
            await self._refresh(kind)
        except McpError as exc:
            logger.warning("refreshing %s after list_changed failed: %s", kind, exc)

    def peer_has_capability(self, path: tuple[str, ...]) -> bool:
        return has_capability(self._conn().core.peer_capabilities, path)


def _page(cursor: str | None) -> t.PaginatedRequestParams | None:
    return None if cursor is None else t.PaginatedRequestParams(cursor=cursor)
