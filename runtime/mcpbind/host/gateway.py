"""The Host as a gateway: one MCP server in front of all of the Host's servers.

``Host.as_server()`` gives a mcpbind ``Server`` that serves the Host's aggregated catalog on
both eras and every transport (stdio, in memory, Streamable HTTP):

* ``tools/list``, ``prompts/list``: under the Host's collision-safe names (:mod:`.naming`);
  ``resources/list`` and ``resources/templates/list``: URIs as the servers list them (a URI
  means the same everywhere, :mod:`.catalog`). Pages follow ``nextCursor``.
* ``tools/call``, ``prompts/get``, ``resources/read``: routed to the owning server by the
  Host (``Host.authorize_tool_call``, ``get_prompt``, ``read_resource``), so its approval
  policy applies; an ``ask`` verdict becomes an elicitation to the calling client
  (:meth:`.relay.Relay.approve`). Progress of the upstream call goes to the caller's progress
  token; cancelling the downstream request cancels the upstream one (the handler's task is
  cancelled, and the Host's client sends ``notifications/cancelled``,
  basic/utilities/cancellation.mdx); an upstream error is answered with its code, message
  and data.
* A change of the catalog (an upstream ``list_changed``, a server starting or going away) is
  announced as ``notifications/<kind>/list_changed`` (a listen stream's on 2026-07-28); an
  upstream ``notifications/resources/updated`` reaches the downstream sessions subscribed to
  the URI, and a downstream ``resources/subscribe`` subscribes at the servers that serve it.
* A tool its server runs only as a task (``taskSupport: required``) is called as a task
  upstream and its result awaited (basic/utilities/tasks.mdx) when the client asks for no
  task, and cancelling the call cancels the task. A client that asks for a task gets one
  passed through: :mod:`.gateway_tasks` (the capability, the ``tasks/*`` routes, status).
* ``completion/complete``: a prompt's argument (by host name) or a template's variable,
  completed by the server that owns it.
* Sampling, elicitation and log messages of an upstream server go to the client of the call
  that caused them (:mod:`.relay`), after the Host's review (:class:`~.gate.Gate`); to a
  2026-07-28 client as input rounds that resume the upstream call (:mod:`.gateway_rounds`).

Credentials stay upstream: each server's headers and tokens live in its own client
(:mod:`.auth`), and nothing the gateway sends downstream carries them.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
import msgspec

from mcpbind_types import unified as t
from mcpbind_types.unified import methods as m

from ..client import Client
from ..client.tasks import start_task
from ..protocol import RESOURCE_NOT_FOUND, McpError
from ..protocol.cursor import decode_cursor, encode_cursor
from ..server import Server
from ..server.context import Context
from ..server.middleware import IncomingCall, Next
from ..server.mrtr import StatelessPeer
from ..tasks.wire import STATUS_2026
from .approval import approve_all
from .catalog import Catalog, ToolEntry
from .forwarding import PASS_CALL_TOOL, UpstreamErrors, passed_on, progress_to, raise_upstream
from .gateway_rounds import GatewayRounds
from .gateway_tasks import GatewayTasks
from .relay import Relay
from .state import AmbiguousResource, HostError, UnknownName

if TYPE_CHECKING:
    from ..client.subscription import Subscription
    from .host import Host

__all__ = ["Gateway"]

ResultT = TypeVar("ResultT")

_KINDS = ("tools", "resources", "prompts")


class Gateway:
    """The server face of one ``Host`` (made by :meth:`Host.as_server`): ``server`` is the
    ``Server`` to serve; ``relay`` takes upstream asks to the downstream caller.

    Made before the Host is entered, so its servers' clients declare sampling and
    elicitation: the Host's ``sampler`` and ``elicit`` become the relay's, its ``approve``
    asks the calling client, and a Host without ``review_sampling`` approves every sampling
    request on its way down (the downstream client is the human in the loop there,
    client/sampling.mdx §User Interaction Model). ``run_host``: the server's lifespan enters
    and leaves the host, so serving it (``serve_stdio``, ``serve_http``) runs the host."""

    def __init__(
        self,
        host: Host,
        *,
        name: str = "mcpbind-gateway",
        version: str = "0.1.0",
        run_host: bool = False,
    ) -> None:
        if host.supervisor.handles:
            raise RuntimeError("make the gateway before entering the host (as_server() first)")
        self.host = host
        self.relay = Relay(fallback_approver=host.approve)
        host.approve = self.relay.approve
        host.sampler = self._sample
        host.elicit = self._elicit
        if host.review_sampling is None:
            host.review_sampling = approve_all
        self.server = server = Server(name, version=version)
        if run_host:  # the host runs while the server is served (serve_stdio, serve_http)
            server.lifespan = self._running
        server.extensions.append(_Capabilities(self._listened))
        for method, handler in (
            ("tools/list", self._list_tools),
            ("tools/call", self._call_tool),
            ("resources/list", self._list_resources),
            ("resources/templates/list", self._list_templates),
            ("resources/read", self._read_resource),
            ("prompts/list", self._list_prompts),
            ("prompts/get", self._get_prompt),
            ("completion/complete", self._complete),
        ):
            # A 2026-07-28 caller's rounds are the gateway's own (GatewayRounds): an upstream
            # ask reaches the caller as an InputRequiredResult it builds, never by the context.
            # Its tools/call reads the params' fields only: the wire view does (no second
            # decode of the caller's _meta).
            calls = method == "tools/call"
            server.wrap(method, _replacing(handler), explicit_rounds=calls, wire_view=calls)
        server.add_middleware(_Subscriptions(self._subscriptions))
        #: Tasks passed through to the servers that run them (:mod:`.gateway_tasks`).
        self.tasks = GatewayTasks(server, host, self.relay)
        self._tasks_offered = False
        #: 2026-07-28 callers' input rounds, the upstream call kept (:mod:`.gateway_rounds`).
        self.rounds = GatewayRounds(host, self.relay, self._forward)
        #: Downstream subscriptions by URI, with the upstream ones they opened.
        self.subscribed: dict[str, _Held] = {}
        #: URIs 2026-07-28 listen streams asked for, subscribed upstream for good.
        self.listening: dict[str, _Held] = {}
        self._listed: dict[str, list[Any]] = {}
        host.supervisor.catalog_listeners.append(self._catalog_changed)
        host.supervisor.notification_listeners.append(self._upstream_notification)

    async def _sample(
        self, server: str, params: t.CreateMessageRequestParams
    ) -> t.CreateMessageResult:
        params = await self.tasks.related(server, params)
        held = await self.tasks.hold(params, m.S2C_CREATE_MESSAGE)
        return held if held is not None else await self.relay.sample(server, params)

    async def _elicit(self, server: str, params: Any) -> t.ElicitResult:
        params = await self.tasks.related(server, params)
        held = await self.tasks.hold(params, m.S2C_ELICIT)
        return held if held is not None else await self.relay.elicit(server, params)

    @contextlib.asynccontextmanager
    async def _running(self, _server: Server) -> AsyncIterator[Host]:
        async with self.host:
            yield self.host

    # ------------------------------------------------------------------ lists
    def _items(self, kind: str) -> list[Any]:
        """One kind's downstream items, built once per catalog."""
        found = self._listed.get(kind)
        if found is None:
            catalog = self.host.catalog
            if kind == "tools":
                # A tool its server runs as a task is listed as one that may run as a task
                # (a call that asks for none is run to the end by the gateway).
                found = [
                    msgspec.structs.replace(
                        e.tool, name=e.name, execution=self.tasks.listed_execution(e)
                    )
                    if not isinstance(e.tool.execution, msgspec.UnsetType)
                    else msgspec.structs.replace(e.tool, name=e.name)
                    for e in catalog.tools.values()
                ]
            elif kind == "prompts":
                found = [
                    msgspec.structs.replace(e.prompt, name=e.name) for e in catalog.prompts.values()
                ]
            elif kind == "resources":
                found = list(_unique((e.resource for e in catalog.resources), "uri"))
            else:
                found = list(_unique((e.template for e in catalog.templates), "uri_template"))
            self._listed[kind] = found
        return found

    def _page(self, kind: str, params: Any) -> tuple[list[Any], str | None]:
        items = self._items(kind)
        cursor = getattr(params, "cursor", None) if params is not None else None
        start = decode_cursor(cursor) if isinstance(cursor, str) else 0
        end = start + self.server.page_size
        return items[start:end], encode_cursor(end) if end < len(items) else None

    async def _list_tools(self, params: Any, ctx: Context) -> t.ListToolsResult:
        found, cursor = self._page("tools", params)
        return _paged(t.ListToolsResult(tools=found), cursor)

    async def _list_prompts(self, params: Any, ctx: Context) -> t.ListPromptsResult:
        found, cursor = self._page("prompts", params)
        return _paged(t.ListPromptsResult(prompts=found), cursor)

    async def _list_resources(self, params: Any, ctx: Context) -> t.ListResourcesResult:
        found, cursor = self._page("resources", params)
        return _paged(t.ListResourcesResult(resources=found), cursor)

    async def _list_templates(self, params: Any, ctx: Context) -> t.ListResourceTemplatesResult:
        found, cursor = self._page("templates", params)
        return _paged(t.ListResourceTemplatesResult(resource_templates=found), cursor)

    # ------------------------------------------------------------------ routed requests
    async def _call_tool(self, params: t.CallToolRequestParams, ctx: Context) -> Any:
        # On 2026-07-28 ``params`` is the request's wire view (Server.wrap(wire_view=True)):
        # the same fields, ``_meta`` raw (read from ``ctx`` instead).
        entry = self.host.catalog.tools.get(params.name)
        if entry is None:
            raise UnknownName("tool", params.name)
        raw = params.arguments
        if (
            params.task is not msgspec.UNSET or entry.tool.execution is not msgspec.UNSET
        ) and self.tasks.wanted(params, ctx, entry):
            created = await self.tasks.call(params, ctx, entry.server, _decoded(raw))
            return created  # a CreateTaskResult, either era
        peer = ctx.peer
        if type(peer) is StatelessPeer and self.rounds.wanted(params, peer):
            # A 2026-07-28 client that can be asked: the upstream call outlives the rounds.
            answer = await self.rounds.call(params, ctx, entry.server, _decoded(raw))
            return answer  # or an InputRequiredResult
        # The caller's JSON: decoded for an approval hook only (most calls need none).
        arguments = raw if isinstance(raw, msgspec.Raw) else raw or None
        record = self.relay.serving(entry.server, ctx)
        try:  # not a with block: its __enter__ and __exit__ frames cost more than the record
            entry, client = await self.host.authorize_tool_call(params.name, arguments)
            return await self._forward(entry, client, raw, arguments, ctx)
        finally:
            record.end()

    async def _forward(
        self,
        entry: ToolEntry,
        client: Client,
        raw: Any,
        arguments: msgspec.Raw | dict[str, Any] | None,
        ctx: Context,
    ) -> Any:
        """The authorized call, upstream: for :meth:`_call_tool` and
        :class:`~.gateway_rounds.GatewayRounds`. The upstream's result is passed on as its
        JSON (:class:`~.forwarding.PassedToolResult`)."""
        # A copy runs no __post_init__ (the caller's arguments were checked on the way in).
        upstream: t.CallToolRequestParams = _CALL.__copy__()  # type: ignore[attr-defined]
        upstream.name = entry.tool.name
        if not isinstance(raw, msgspec.UnsetType):
            upstream.arguments = raw  # the caller's JSON, passed on as it came
        try:  # not UpstreamErrors' block: its two method frames, on every call
            if entry.tool.execution is not msgspec.UNSET and _runs_as_task(entry.tool):
                return await _as_task(client, entry.tool.name, _decoded(arguments))
            result = await client.send_request(PASS_CALL_TOOL, upstream, progress_to(ctx))
        except McpError as exc:
            raise_upstream(entry.server, exc)
            raise
        return passed_on(result)

    async def _get_prompt(
        self, params: t.GetPromptRequestParams, ctx: Context
    ) -> t.GetPromptResult:
        entry = self.host.catalog.prompts.get(params.name)
        if entry is None:
            raise UnknownName("prompt", params.name)
        arguments = None if isinstance(params.arguments, msgspec.UnsetType) else params.arguments
        with self.relay.serving(entry.server, ctx), UpstreamErrors(entry.server):
            return await self.host.get_prompt(params.name, arguments)

    async def _read_resource(
        self, params: t.ReadResourceRequestParams, ctx: Context
    ) -> t.ReadResourceResult:
        uri = params.uri
        try:
            owner = self.host.resource_owner(uri)
        except (UnknownName, AmbiguousResource) as exc:
            # resources.mdx §Error Handling: -32002 for a resource not found.
            raise McpError(RESOURCE_NOT_FOUND, exc.message, {"uri": uri}) from None
        with self.relay.serving(owner, ctx), UpstreamErrors(owner):
            return await self.host.read_resource(uri, server=owner)

    async def _complete(self, params: t.CompleteRequestParams, ctx: Context) -> t.CompleteResult:
        """server/utilities/completion.mdx: a prompt's argument (by host name) or a template's
        variable, completed by the server that owns it; nothing to offer when it does not
        complete (or nobody owns the reference)."""
        ref = params.ref
        owner: str | None = None
        if isinstance(ref, t.PromptReference):
            entry = self.host.catalog.prompts.get(ref.name)
            if entry is None:
                raise UnknownName("prompt", ref.name)
            owner = entry.server
            params = msgspec.structs.replace(
                params, ref=msgspec.structs.replace(ref, name=entry.prompt.name)
            )
        else:
            owners = {
                e.server for e in self.host.catalog.templates if e.template.uri_template == ref.uri
            }
            owner = owners.pop() if len(owners) == 1 else None
        client = self.host.client(owner) if owner is not None else None
        if client is None or not client.peer_has_capability(("completions",)):
            return t.CompleteResult(completion=t.CompleteResultCompletion(values=[]))
        upstream = t.CompleteRequestParams(ref=params.ref, argument=params.argument)
        if not isinstance(params.context, msgspec.UnsetType):
            upstream.context = params.context
        assert owner is not None
        with UpstreamErrors(owner):
            return await client.complete(upstream)

    # ------------------------------------------------------------------ changes
    def _catalog_changed(self, old: Catalog, new: Catalog) -> None:
        self._listed.clear()
        if self.tasks.offered() != self._tasks_offered:
            # The capabilities change (an upstream with tasks came or went): the 2026-07-28
            # ones are encoded once per change of the server, so make them again.
            self._tasks_offered = not self._tasks_offered
            self.server.encoded_state = None
        if old.tools != new.tools:
            self.server.changed("tools")
        if old.prompts != new.prompts:
            self.server.changed("prompts")
        if old.resources != new.resources or old.templates != new.templates:
            self.server.changed("resources")
        self._resubscribe()

    def _resubscribe(self) -> None:
        """Subscribe again where a held URI has lost its upstream subscription: its server
        reconnected (the subscription ended with the old connection), or a server that now
        serves the URI came (resources.mdx §Subscriptions: the client, here the downstream
        one, still holds it)."""
        for uri, held in [*self.subscribed.items(), *self.listening.items()]:
            missing = held.missing(self.host, self.host.resource_owners(uri))
            if missing:
                self._open_in_background(held, missing, uri)

    def _open_in_background(self, held: _Held, owners: list[str], uri: str) -> None:
        """Open ``held``'s upstream subscriptions on ``owners``, not in the calling task:
        where the first server's notifications run (its connection's task group)."""
        with contextlib.suppress(HostError):
            connection = self.host.client(owners[0]).connection
            if connection is not None:
                connection.spawn(functools.partial(_open_quietly, held, self.host, owners, uri))

    async def _upstream_notification(self, server: str, method: str, params: Any) -> None:
        if method == "notifications/resources/updated":
            self.server.resource_updated(params.uri)
        elif method == "notifications/message":
            with contextlib.suppress(McpError, ConnectionError):
                await self.relay.log(server, params)
        elif method in ("notifications/tasks/status", STATUS_2026):
            with contextlib.suppress(McpError, ConnectionError):
                await self.tasks.upstream_status(server, params)
        elif method == "notifications/elicitation/complete":
            with contextlib.suppress(McpError, ConnectionError):
                await self.relay.completed(server, params.elicitation_id)

    async def _subscriptions(self, call: IncomingCall, call_next: Next) -> Any:
        """``resources/subscribe`` (and unsubscribe) of a downstream session: recorded by the
        session, and passed on to the servers that serve the URI (resources.mdx
        §Subscriptions; a 2026-07-28 server's listen stream, subscriptions.mdx) while any
        downstream session holds it."""
        method = call.method
        if method not in _Subscriptions.methods:
            return await call_next(call)
        uri = call.params.uri
        owners = self.host.resource_owners(uri)
        if not owners:
            raise McpError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
        result = await call_next(call)
        held = self.subscribed.get(uri)
        if method == "resources/subscribe":
            if held is None:
                held = self.subscribed[uri] = _Held()
                await held.open(self.host, owners, uri)
            held.count += 1
        elif held is not None:
            held.count -= 1
            if held.count <= 0:
                del self.subscribed[uri]
                await held.close()
        return result

    def _listened(self, uris: Iterable[str]) -> None:
        """A 2026-07-28 listen stream asks for these URIs' updates (subscriptions.mdx): each
        one is subscribed at the servers serving it, once, for as long as they stay
        connected (a stream's end is not told to the gateway, so none is let go)."""
        for uri in uris:
            if uri in self.subscribed or uri in self.listening:
                continue
            owners = self.host.resource_owners(uri)
            if not owners:
                continue
            held = self.listening[uri] = _Held()
            self._open_in_background(held, owners, uri)  # not in the listen request's task


async def _open_quietly(held: _Held, host: Host, owners: list[str], uri: str) -> None:
    with contextlib.suppress(McpError):
        await held.open(host, owners, uri)


class _Held:
    """One URI the downstream sessions subscribed to: how many, and the upstream
    subscriptions that bring its updates."""

    def __init__(self) -> None:
        self.count = 0
        #: By server: the subscription on its current connection (ended once that closes).
        self.upstream: dict[str, Subscription] = {}
        #: Servers whose subscription is being opened (not opened twice meanwhile).
        self.opening: set[str] = set()

    def missing(self, host: Host, owners: Iterable[str]) -> list[str]:
        """The servers among ``owners`` that take subscriptions and have no live one to the
        URI (nor one being opened)."""
        live = self.upstream
        return [
            owner
            for owner in owners
            if owner not in self.opening
            and (owner not in live or not live[owner].active)
            and _subscribable(host, owner)
        ]

    async def open(self, host: Host, owners: Iterable[str], uri: str) -> None:
        for owner in self.missing(host, owners):
            self.opening.add(owner)
            try:
                with UpstreamErrors(owner):
                    client = host.client(owner)
                    self.upstream[owner] = await client.listen(resource_uris=[uri])
            finally:
                self.opening.discard(owner)

    async def close(self) -> None:
        for subscription in self.upstream.values():
            with contextlib.suppress(McpError):
                await subscription.close()


def _subscribable(host: Host, server: str) -> bool:
    """Whether ``server`` is connected and declares ``resources.subscribe``."""
    try:
        return host.client(server).peer_has_capability(("resources", "subscribe"))
    except HostError:
        return False


class _Subscriptions:
    """The gateway's middleware: it wraps ``resources/subscribe`` and ``unsubscribe`` only
    (``methods``, :func:`~mcpbind.server.middleware.compose`), so a tool call runs without it."""

    methods = frozenset({"resources/subscribe", "resources/unsubscribe"})

    def __init__(self, layer: Callable[[IncomingCall, Next], Awaitable[Any]]) -> None:
        self.layer = layer

    def __call__(self, call: IncomingCall, call_next: Next) -> Awaitable[Any]:
        return self.layer(call, call_next)


class _Capabilities:
    """Declares what the gateway serves, whatever the servers behind it offer at the moment
    (they come and go; a client told of no tools at the handshake would never list them),
    and tells the gateway of the URIs a listen stream asks updates for."""

    def __init__(self, listened: Callable[[Iterable[str]], None]) -> None:
        self.listened = listened

    def capabilities(self, caps: t.ServerCapabilities, *, stateless: bool) -> None:
        caps.tools = t.ServerCapabilitiesTools(list_changed=True)
        caps.resources = t.ServerCapabilitiesResources(list_changed=True, subscribe=True)
        caps.prompts = t.ServerCapabilitiesPrompts(list_changed=True)
        caps.completions = {}

    def listen_filter(self, wanted: Any, client_capabilities: Any) -> dict[str, Any]:
        uris = wanted.get("resourceSubscriptions")
        if isinstance(uris, list):
            self.listened(uri for uri in uris if isinstance(uri, str))
        return {}  # the hub agrees to the filter itself

    async def notification(
        self, what: str, detail: str | None, agreed: Any, principal: Any
    ) -> tuple[str, dict[str, Any]] | None:
        return None


_CALL: Final = t.CallToolRequestParams(name="")
"""The upstream tools/call's params, copied for each call and given its name and arguments."""


def _replacing(handler: Callable[[Any, Context], Any]) -> Callable[[Any], Any]:
    """A ``Server.wrap`` wrapper that answers the method with ``handler`` instead."""
    return lambda _inner: handler


def _paged(result: ResultT, cursor: str | None) -> ResultT:
    if cursor is not None:
        result.next_cursor = cursor  # type: ignore[attr-defined]
    return result


def _unique(items: Iterable[Any], key: str) -> Iterable[Any]:
    seen: set[str] = set()
    for item in items:
        value = getattr(item, key)
        if value not in seen:
            seen.add(value)
            yield item


def _decoded(raw: Any) -> dict[str, Any] | None:
    """A call's arguments as a dict (``None``: none given)."""
    return msgspec.json.decode(raw) if isinstance(raw, msgspec.Raw) else raw or None


def _runs_as_task(tool: t.Tool) -> bool:
    """tasks.mdx §Tool-Level Negotiation: a tool whose ``taskSupport`` is ``required``."""
    execution = tool.execution
    return isinstance(execution, t.ToolExecution) and execution.task_support == "required"


async def _as_task(client: Client, name: str, arguments: dict[str, Any] | None) -> t.CallToolResult:
    """Call ``name`` as a task upstream and wait for its result; a cancelled call cancels the
    task (``tasks/cancel``, basic/utilities/tasks.mdx §Cancelling Tasks)."""
    handle = await start_task(client, name, arguments)
    try:
        return await handle.result()
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            with anyio.fail_after(5):
                await handle.cancel()
        raise
