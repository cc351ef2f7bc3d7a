"""``Server``: what a server offers (tools, resources, templates, prompts, completions) and the
handlers that answer the standard methods from it.

The server knows nothing about transports or JSON-RPC: a session (``mcpbind.connection``) decodes a
request, looks its method up in ``Server.handlers`` and awaits ``handler(params, ctx)``.
Capabilities are inferred from what is registered.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Awaitable, Callable, Iterable, Sequence
from types import CoroutineType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import msgspec

from mcpbind_types import unified as t

from .._asyncio import is_cancellation
from .._lazy import LazyModule
from ..protocol.cursor import decode_cursor, encode_cursor
from ..protocol.errors import INVALID_PARAMS, McpError, UrlElicitationRequired
from ..runner import InflightLimit
from ..versions import era_of
from .context import Context
from .extension import ServerExtension
from .layers import layers_for
from .limits import server_inflight_limit
from .middleware import Middleware, compose
from .mount import (
    Mount,
    ServerSource,
    Source,
    check_prefix,
    prefixed_name,
    prefixed_uri,
    unknown,
    unprefixed_name,
    unprefixed_uri,
)
from .options import StatelessOptions
from .results import prompt_result, resource_contents, returns_content, tool_result
from .signature import ToolArgumentsError, ToolSignature, is_valid_tool_name
from .tool_errors import tool_failure
from .visibility import Rule, Switches, Visible, make_rule, page, shown

if TYPE_CHECKING:  # imported on first template registration: its regexes cost at import
    import asyncio

    from . import threads
    from .lifespan import Lifespan, LifespanRun
    from .uritemplate import UriTemplate
else:  # imported when a loop (or the first def tool) first uses it, not with mcpbind (issue 15)
    asyncio = LazyModule("asyncio", globals())
    threads = LazyModule("mcpbind.server.threads", globals(), "threads")

__all__ = ["Handler", "Server", "ServerExtension"]

F = TypeVar("F", bound=Callable[..., Any])


class _ListResult(Protocol):
    next_cursor: str | msgspec.UnsetType
    cache_scope: typing.Literal["private", "public"] | msgspec.UnsetType


L = TypeVar("L", bound=_ListResult)
Handler = Callable[[Any, Context], Awaitable[Any]]

Wrapper = Callable[[Handler], Handler]


_RESOURCE_NOT_FOUND = -32002

_SINGULAR = {
    "tools": "tool",
    "prompts": "prompt",
    "resources": "resource",
    "templates": "resource template",
    "uris": "resource",
}


class ToolCall(Protocol):
    """What :meth:`Server._call_tool` reads of a ``tools/call``'s params."""

    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> msgspec.Raw | msgspec.UnsetType: ...


class _Tool(msgspec.Struct):
    tool: t.Tool
    fn: Callable[..., Any]
    signature: ToolSignature
    #: A plain (non-async) function runs in a worker thread, so a blocking tool never stalls
    #: the event loop that serves every other request and session.
    in_thread: bool = False


class _Resource(msgspec.Struct):
    resource: t.Resource
    call: _Call


class _Template(msgspec.Struct):
    template: t.ResourceTemplate
    matcher: UriTemplate
    call: _Call


class _Prompt(msgspec.Struct):
    prompt: t.Prompt
    fn: Callable[..., Any]
    signature: ToolSignature


class _Listed(msgspec.Struct):
    """One kind's listing: its items, with each one's key and rule (``rules``: ``None``
    when none declares one)."""

    items: list[Any]
    keys: list[str]
    rules: list[Rule | None] | None
    #: A rule depends on the caller: on its ``visible`` predicate, or on its scopes.
    predicates: bool
    scoped: bool


_KIND = {"tools/call": "tools", "prompts/get": "prompts", "resources/read": "resources"}
_KEY_OF = {
    "tools": "tools/call",
    "prompts": "prompts/get",
    "resources": "resources/read",
    "templates": "resources/read",
}


class Server(msgspec.Struct, dict=True, weakref=True):  # as the dataclass: own attributes, weakrefs
    """An MCP server: register with the decorators, then serve over any transport. Their
    ``scopes=``: OAuth scopes a caller needs (``mcpbind.auth.server`` answers 403 without)."""

    name: str
    version: str = "0.1.0"
    instructions: str | None = None
    page_size: int = 100
    title: str | None = None
    debug: bool = False
    """Send a failing handler's exception (``"KeyError: 'x'"``) to the client, on every era
    and transport, instead of ``"Internal error"``. For development: exception text can hold
    paths or secrets. The traceback is logged on the server (``mcpbind.server``) either way."""
    tools: dict[str, _Tool] = msgspec.field(default_factory=dict)
    resources: dict[str, _Resource] = msgspec.field(default_factory=dict)
    templates: dict[str, _Template] = msgspec.field(default_factory=dict)
    prompts: dict[str, _Prompt] = msgspec.field(default_factory=dict)
    completion_handler: Callable[..., Awaitable[Any]] | None = msgspec.field(default=None)
    custom: dict[str, Handler] = msgspec.field(default_factory=dict)
    #: Whether ``tools/call`` is answered by :meth:`_call_tool` itself (no custom handler, no
    #: wrapper): a 2026-07-28 call then reaches it without its params made (wire_view).
    own_tool_calls: bool = msgspec.field(default=False)
    _wrappers: dict[str, list[Wrapper]] = msgspec.field(default_factory=dict)
    #: Methods whose wrapped handler answers a 2026-07-28 request's input rounds itself
    #: (:meth:`wrap` with ``explicit_rounds``).
    explicit_rounds: set[str] = msgspec.field(default_factory=set)
    #: The wrapper of each method registered to take the wire view (:meth:`wrap`).
    _view_wrappers: dict[str, Wrapper] = msgspec.field(default_factory=dict)
    #: Methods whose handler, as the table has it, takes a 2026-07-28 request's wire view: its
    #: wire-view wrapper is the outermost and no middleware wraps it (:meth:`wrap`).
    wire_views: frozenset[str] = msgspec.field(default_factory=frozenset)
    middleware: list[Middleware] = msgspec.field(default_factory=list)
    """Around every inbound request, in order (the first outermost): :mod:`.middleware`."""
    #: The layers the handler table was built with (``middleware``, OpenTelemetry's if active).
    _layers: list[Middleware] = msgspec.field(default_factory=list)
    extensions: list[ServerExtension] = msgspec.field(default_factory=list)
    notification_handlers: dict[str, Handler] = msgspec.field(default_factory=dict)
    #: Keyed by listener (insertion-ordered): a session's unsubscribe is O(1) however many.
    _listeners: dict[Callable[[str, str | None], None], None] = msgspec.field(default_factory=dict)
    #: What ``tools/list`` etc. list, built once per change (see ``_listed``).
    _lists: dict[str, _Listed] = msgspec.field(default_factory=dict)
    stateless: StatelessOptions = msgspec.field(default_factory=StatelessOptions)
    """Eras served, cache hints and ``requestState`` protection for protocol 2026-07-28."""
    #: Declared scopes by ``"tools/call <name>"``, ``"prompts/get <name>"``, ``"resources/read
    #: <uri or template>"``.
    scopes: dict[str, frozenset[str]] = msgspec.field(default_factory=dict)
    #: Listing rules (``scopes=``, ``visible=``, ``tags=``) by the same keys.
    rules: dict[str, Rule] = msgspec.field(default_factory=dict)
    #: What :meth:`disable` switched off.
    switches: Switches = msgspec.field(default_factory=Switches)
    hide_ungranted: bool = True
    """List what declares ``scopes=`` only to callers whose principal holds them (with the
    scopes a ``scope_hierarchy`` implies); ``False`` lists it to everyone, for a server whose
    clients discover what to step up to by calling and getting the 403 (authorization.mdx
    §Step-Up Authorization Flow)."""
    #: Inbound requests in flight across all of this server's sessions and POSTs, and their
    #: bound (``mcpbind.server.limits``: adjust ``inflight.limit``).
    inflight: InflightLimit = msgspec.field(default_factory=server_inflight_limit)
    lifespan: Lifespan | None = None
    """``lifespan(server)``, an async context manager run once per process around serving
    (``mcpbind.server.lifespan``); its value is every handler's ``ctx.lifespan_state``."""
    #: The running lifespan's value (``None`` while none runs) and its run.
    lifespan_state: Any = None
    lifespan_run: LifespanRun | None = None
    mounted: dict[str, Mount] = msgspec.field(default_factory=dict)
    """What :meth:`mount` put inside this server, by prefix (read it; change it with
    :meth:`mount` and :meth:`unmount`)."""
    #: What ``mcpbind.server.dispatch`` encodes of this server once per change (its identity,
    #: 2026-07-28 capabilities and method table); ``None`` until first needed.
    encoded_state: Any = None

    def __repr__(self) -> str:  # the registrations stay out of it
        return (
            f"Server(name={self.name!r}, version={self.version!r}, "
            f"instructions={self.instructions!r}, page_size={self.page_size!r}, "
            f"title={self.title!r}, debug={self.debug!r})"
        )

    # ------------------------------------------------------------------ registration
    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: t.ToolAnnotations | None = None,
        icons: Sequence[t.Icon] | None = None,
        structured_output: bool | None = None,
        thread: bool | None = None,
        task: typing.Literal["forbidden", "optional", "required"] | None = None,
        scopes: Iterable[str] = (),
        visible: Visible | None = None,
        tags: Iterable[str] = (),
    ) -> Callable[[F], F]:
        """Register a tool. Its input schema comes from the type hints; arguments are
        validated before the function runs; a structured return type gives an output schema.

        A plain ``def`` tool runs in a worker thread (``thread=None``), so one that blocks
        (file or network I/O, CPU work) never holds up other requests; ``thread=False`` runs
        it on the event loop, for functions too quick to be worth the thread hop. ``task``: its
        ``execution.taskSupport`` (``mcpbind.server.tasks`` serves it). ``visible`` and
        ``tags``: who may see it, and the switches it answers to (``mcpbind.server.visibility``)."""

        def register(fn: F) -> F:
            structured = structured_output
            if structured is None and returns_content(fn):
                structured = False  # content blocks are the result itself, not structured data
            sig = ToolSignature.from_function(
                fn, context_type=Context, structured_output=structured
            )
            tool_name = name or sig.name
            if not is_valid_tool_name(tool_name):
                raise ValueError(f"invalid tool name {tool_name!r} (1-128 of A-Z a-z 0-9 _ - .)")
            tool = t.Tool(name=tool_name, input_schema=sig.input_schema)
            if sig.output_schema is not None:
                tool.output_schema = sig.output_schema
            if title is not None:
                tool.title = title
            if (desc := description or sig.description) is not None:
                tool.description = desc
            if annotations is not None:
                tool.annotations = annotations
            if icons:
                tool.icons = list(icons)
            if task is not None:
                tool.execution = t.ToolExecution(task_support=task)
            in_thread = not inspect.iscoroutinefunction(fn) if thread is None else thread
            if self.mounted:
                self._refuse_mounted("tools", tool_name)
            self.tools[tool_name] = _Tool(tool, fn, sig, in_thread)
            self._require(f"tools/call {tool_name}", scopes, visible, tags)
            self._changed("tools")
            return fn

        return register

    def remove_tool(self, name: str) -> None:
        del self.tools[name]
        self._changed("tools")

    def remove_resource(self, uri: str) -> None:
        del self.resources[uri]
        self._changed("resources")

    def remove_resource_template(self, uri_template: str) -> None:
        del self.templates[uri_template]
        self._changed("resources")

    def remove_prompt(self, name: str) -> None:
        del self.prompts[name]
        self._changed("prompts")

    def resource_updated(self, uri: str) -> None:
        """Tell every session subscribed to ``uri`` (``notifications/resources/updated``)."""
        self._changed("updated", uri)

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        scopes: Iterable[str] = (),
        visible: Visible | None = None,
        tags: Iterable[str] = (),
    ) -> Callable[[F], F]:
        """Register a fixed resource; the function returns ``str``, ``bytes`` or contents."""

        def register(fn: F) -> F:
            res = t.Resource(name=name or _name_of(fn, uri), uri=uri)
            _set_optional(
                res, title=title, mime_type=mime_type, description=description or _doc(fn)
            )
            if self.mounted:
                self._refuse_mounted("resources", uri)
            self.resources[uri] = _Resource(res, _Call(fn))
            self._require(f"resources/read {uri}", scopes, visible, tags)
            self._changed("resources")
            return fn

        return register

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        scopes: Iterable[str] = (),
        visible: Visible | None = None,
        tags: Iterable[str] = (),
    ) -> Callable[[F], F]:
        """Register an RFC 6570 template; matched variables become keyword arguments."""

        def register(fn: F) -> F:
            from .uritemplate import UriTemplate

            matcher = UriTemplate(uri_template)
            tpl = t.ResourceTemplate(
                name=name or _name_of(fn, uri_template), uri_template=uri_template
            )
            _set_optional(
                tpl, title=title, mime_type=mime_type, description=description or _doc(fn)
            )
            if self.mounted:
                self._refuse_mounted("templates", uri_template)
            self.templates[uri_template] = _Template(tpl, matcher, _Call(fn))
            self._require(f"resources/read {uri_template}", scopes, visible, tags)
            self._changed("resources")
            return fn

        return register

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        scopes: Iterable[str] = (),
        visible: Visible | None = None,
        tags: Iterable[str] = (),
    ) -> Callable[[F], F]:
        """Register a prompt; its string parameters are the prompt's arguments."""

        def register(fn: F) -> F:
            sig = ToolSignature.from_function(fn, context_type=Context, structured_output=False)
            props: dict[str, Any] = sig.input_schema.get("properties", {})
            required = set(sig.input_schema.get("required", []))
            args = []
            for arg_name in sig.parameters:
                arg = t.PromptArgument(name=arg_name, required=arg_name in required)
                if (d := props.get(arg_name, {}).get("description")) is not None:
                    arg.description = d
                args.append(arg)
            p = t.Prompt(name=name or sig.name, arguments=args)
            _set_optional(p, title=title, description=description or sig.description)
            if self.mounted:
                self._refuse_mounted("prompts", p.name)
            self.prompts[p.name] = _Prompt(p, fn, sig)
            self._require(f"prompts/get {p.name}", scopes, visible, tags)
            self._changed("prompts")
            return fn

        return register

    def completion(self) -> Callable[[F], F]:
        """Register the completion handler: ``fn(ref, argument, context) -> list[str]``."""

        def register(fn: F) -> F:
            self.completion_handler = fn
            return fn

        return register

    def method(self, name: str) -> Callable[[Handler], Handler]:
        """Low level: handle any method (custom ones included) with ``fn(params, ctx)``."""

        def register(fn: Handler) -> Handler:
            self.custom[name] = fn
            self._build_handlers()
            return fn

        return register

    def add_middleware(self, *layers: Middleware) -> None:
        """Append ``layers`` to :attr:`middleware` (inside those already there)."""
        self.middleware.extend(layers)
        self._build_handlers()

    def wrap(
        self,
        method: str,
        wrapper: Wrapper,
        *,
        explicit_rounds: bool = False,
        wire_view: bool = False,
    ) -> None:
        """Low level, for extensions (use :meth:`add_middleware`): wrap one method's handler
        (``wrapper(inner) -> handler``), inside every middleware. ``explicit_rounds``: on
        protocol 2026-07-28 the handler answers its input rounds itself (it returns an
        ``InputRequiredResult`` with its own ``requestState``, basic/patterns/mrtr.mdx) and
        never asks through its context, so it runs without the task that turns a context's
        asks into rounds (a context's ask then fails at once). ``wire_view``: on 2026-07-28
        the handler may be given the request's wire view instead of its params
        (:class:`~mcpbind.protocol.wire_view.WireParams`: the same fields, validated the same
        way, but ``_meta`` kept as raw JSON; the protocol fields are the context's), sparing
        a second decode of the params; only while this wrapper is the method's outermost and
        no middleware wraps the method (a layer gets the params as always)."""
        self._wrappers.setdefault(method, []).append(wrapper)
        if explicit_rounds:
            self.explicit_rounds.add(method)
        if wire_view:
            self._view_wrappers[method] = wrapper
        self._build_handlers()

    @property
    def active_middleware(self) -> Sequence[Middleware]:
        """The layers the handler table, as last built, runs requests in (:attr:`middleware`,
        inside OpenTelemetry's when active)."""
        return self._layers

    def layered(self, method: str, handler: Handler) -> Handler:
        """``handler`` inside the server's middleware, as the handler table has it (for the
        requests a session answers itself)."""
        return compose(method, self._layers, handler) if self._layers else handler

    def notification(self, name: str) -> Callable[[Handler], Handler]:
        """Handle a client notification (e.g. ``notifications/roots/list_changed``)."""

        def register(fn: Handler) -> Handler:
            self.notification_handlers[name] = fn
            return fn

        return register

    def _require(
        self, key: str, scopes: Iterable[str], visible: Visible | None, tags: Iterable[str]
    ) -> None:
        found = frozenset(scopes.split() if isinstance(scopes, str) else scopes)
        if found:
            self.scopes[key] = found
        else:
            self.scopes.pop(key, None)
        rule = make_rule(found, visible, tags)
        if rule is not None:
            self.rules[key] = rule
        else:
            self.rules.pop(key, None)

    # ------------------------------------------------------------------ switches
    def disable(
        self,
        *,
        tag: str | None = None,
        tool: str | None = None,
        prompt: str | None = None,
        resource: str | None = None,
    ) -> None:
        """Switch off every item tagged ``tag``, or one tool, prompt or resource (a URI or a
        URI template): no caller lists or uses it until :meth:`enable`. Each change sends
        ``list_changed`` (debounced) to the sessions and listen streams it concerns."""
        self._switch(False, tag, tool, prompt, resource)

    def enable(
        self,
        *,
        tag: str | None = None,
        tool: str | None = None,
        prompt: str | None = None,
        resource: str | None = None,
    ) -> None:
        """Switch back on what :meth:`disable` switched off (the same arguments)."""
        self._switch(True, tag, tool, prompt, resource)

    def _switch(
        self, on: bool, tag: str | None, tool: str | None, prompt: str | None, resource: str | None
    ) -> None:
        kinds: set[str] = set()
        if tag is not None and (tag in self.switches.tags) == on:
            (self.switches.tags.discard if on else self.switches.tags.add)(tag)
            kinds.update(_KIND[k.split(" ", 1)[0]] for k, r in self.rules.items() if tag in r.tags)
        for name, key in (
            (tool, "tools/call"),
            (prompt, "prompts/get"),
            (resource, "resources/read"),
        ):
            if name is not None and (f"{key} {name}" in self.switches.keys) == on:
                (self.switches.keys.discard if on else self.switches.keys.add)(f"{key} {name}")
                kinds.add(_KIND[key])
        for kind in sorted(kinds):
            self._changed(kind)

    def _usable(self, key: str, ctx: Context) -> bool:
        """Whether the caller may use the item ``key`` (its scopes are the auth layer's)."""
        return shown(self.rules.get(key), key, ctx, self.switches, by_scopes=False)

    # ------------------------------------------------------------------ composition
    def mount(self, other: Server | Source, prefix: str) -> None:
        """Serve ``other``'s tools, resources, resource templates and prompts inside this
        server under ``prefix`` (``mcpbind.server.mount``: a tool ``x`` becomes
        ``<prefix>_x``, a URI ``s://x`` becomes ``s://<prefix>/x``). ``other`` keeps its
        middleware, visibility rules, scopes and switches; its lifespan runs with this
        server's; its list changes reach this server's clients. A call reaches ``other``'s
        handler with the caller's context and params as they are (nothing is serialised).

        Refused (``ValueError``, one line) when a prefix is invalid or already used (or one
        prefix would shadow another's names), when a name or URI collides with one this
        server already has, when mounting would make a cycle, or when ``other`` has
        extensions (tasks: their records would be out of the callers' reach)."""
        source: Source = ServerSource(other) if isinstance(other, Server) else other
        check_prefix(prefix)
        if other is self:
            raise ValueError(f"cannot mount server {self.name!r} inside itself")
        if isinstance(other, Server) and self._inside(other):
            raise ValueError(
                f"cannot mount server {other.name!r} inside server {self.name!r}: "
                f"{self.name!r} is already mounted inside it"
            )
        if isinstance(other, Server) and other.extensions:
            raise ValueError(
                f"server {other.name!r} has extensions (tasks): mounting it is not supported"
            )
        for taken in self.mounted:
            if taken == prefix:
                raise ValueError(
                    f"the prefix {prefix!r} is already mounted "
                    f"(server {self.mounted[taken].source.label!r}); unmount it first"
                )
            if prefix.startswith(taken + "_") or taken.startswith(prefix + "_"):
                raise ValueError(
                    f"the prefix {prefix!r} would share names with the mounted prefix {taken!r}"
                )
        mine = {kind: set(self._own_names(kind)) for kind in ("tools", "prompts", "uris")}
        for kind in ("tools", "prompts", "resources", "templates"):
            for name in source.names(kind):
                if kind in ("tools", "prompts"):
                    outer, known = prefixed_name(prefix, name), mine[kind]
                else:
                    outer, known = prefixed_uri(prefix, name), mine["uris"]
                if kind == "tools" and not is_valid_tool_name(outer):
                    raise ValueError(
                        f"the mounted tool name {outer!r} is invalid (1-128 of A-Z a-z 0-9 _ - .)"
                    )
                if outer in known:
                    raise ValueError(
                        f"{_SINGULAR[kind]} {outer!r} of mounted server {source.label!r} "
                        f"collides with one of server {self.name!r}"
                    )
        entry = Mount(prefix, source)
        entry.unsubscribe = source.on_change(functools.partial(self._mount_changed, entry))
        self.mounted[prefix] = entry
        self._mounts_changed(source.kinds())

    def unmount(self, prefix: str) -> None:
        """Take out what :meth:`mount` put under ``prefix`` (``KeyError`` if nothing is)."""
        if prefix not in self.mounted:
            raise KeyError(f"nothing is mounted under the prefix {prefix!r}")
        entry = self.mounted.pop(prefix)
        entry.unsubscribe()
        self._mounts_changed(entry.source.kinds())

    def _inside(self, other: Server) -> bool:
        """Whether this server is mounted somewhere inside ``other`` (a cycle if mounted)."""
        for entry in other.mounted.values():
            source = entry.source
            if isinstance(source, ServerSource) and (
                source.server is self or self._inside(source.server)
            ):
                return True
        return False

    def _own_names(self, kind: str) -> list[str]:
        """This server's names of ``kind`` (``uris``: resources and templates), mounted ones
        included."""
        if kind == "uris":
            names = [*self.resources, *self.templates]
            kinds: tuple[str, ...] = ("resources", "templates")
        else:
            names, kinds = list(getattr(self, kind)), (kind,)
        for entry in self.mounted.values():
            for inner in kinds:
                for name in entry.source.names(inner):
                    names.append(
                        prefixed_name(entry.prefix, name)
                        if inner in ("tools", "prompts")
                        else prefixed_uri(entry.prefix, name)
                    )
        return names

    def _refuse_mounted(self, kind: str, name: str) -> None:
        """A name registered here that a mount already serves is refused (one clear line)."""
        for entry in self.mounted.values():
            if kind in ("tools", "prompts"):
                inner = unprefixed_name(entry.prefix, name)
                kinds: tuple[str, ...] = (kind,)
            else:
                inner, kinds = unprefixed_uri(entry.prefix, name), ("resources", "templates")
            if inner is not None and any(inner in entry.source.names(k) for k in kinds):
                raise ValueError(
                    f"{_SINGULAR[kind]} {name!r} collides with one of mounted server "
                    f"{entry.source.label!r}"
                )

    def _mounts_changed(self, kinds: frozenset[str]) -> None:
        self.encoded_state = None  # the capabilities may differ (dispatch.encoded)
        run = self.lifespan_run
        if run is not None:
            run.sources_changed()
        for kind in ("tools", "prompts", "resources"):
            if kind in kinds:
                self._changed(kind)

    def _mount_changed(self, entry: Mount, what: str, uri: str | None) -> None:
        """A change a mounted source announced, as this server's."""
        if self.mounted.get(entry.prefix) is not entry:
            return  # unmounted meanwhile
        if what == "updated":
            if uri is not None:
                self._changed("updated", prefixed_uri(entry.prefix, uri))
        elif what in ("tools", "prompts", "resources"):
            entry.forget()
            self.encoded_state = None  # a first tool, prompt or resource: new capabilities
            self._changed(what)

    def _route_name(self, name: str) -> tuple[Mount, str] | None:
        """The mount serving tool or prompt ``name``, with the source's own name."""
        for entry in self.mounted.values():
            inner = unprefixed_name(entry.prefix, name)
            if inner is not None:
                return entry, inner
        return None

    def mounted_tool(self, name: str) -> _Tool | None:
        """The registered tool a call of ``name`` reaches through in-process mounts whose
        servers all answer ``tools/call`` themselves (no middleware, no wrapper), else
        ``None``: ``mcpbind.server.dispatch`` then runs the call as it runs an own tool's."""
        routed = self._route_name(name) if self.mounted else None
        if routed is None or not isinstance(source := routed[0].source, ServerSource):
            return None
        inner = source.server
        if not inner.own_tool_calls:
            return None
        return inner.tools.get(routed[1]) or inner.mounted_tool(routed[1])

    def _route_uri(self, uri: str) -> tuple[Mount, str] | None:
        """The mount serving resource ``uri``, with the source's own URI."""
        for entry in self.mounted.values():
            inner = unprefixed_uri(entry.prefix, uri)
            if inner is not None:
                return entry, inner
        return None

    def _switched_off(self, kind: str, name: str) -> bool:
        keys = self.switches.keys
        return bool(keys) and f"{kind} {name}" in keys

    def declared_scopes(self, method: str, target: str) -> frozenset[str]:
        """The OAuth scopes declared for ``method`` (``tools/call``, ``prompts/get``,
        ``resources/read``) on ``target`` (a name, a URI: the template serving it counts),
        mounted servers' included; read by the auth layer (``mcpbind.auth.server``)."""
        found = self.scopes.get(f"{method} {target}")
        if found is not None:
            return found
        if method == "resources/read":
            if target in self.resources:
                return frozenset()
            routed = self._route_uri(target) if self.mounted else None
            if routed is not None:
                return routed[0].source.declared_scopes(method, routed[1])
            for uri_template, entry in self.templates.items():  # the first match serves it
                if entry.matcher.match(target) is not None:
                    return self.scopes.get(f"{method} {uri_template}", frozenset())
            return frozenset()
        own = self.tools if method == "tools/call" else self.prompts
        if self.mounted and target not in own:
            routed = self._route_name(target)
            if routed is not None:
                return routed[0].source.declared_scopes(method, routed[1])
        return frozenset()

    async def _listed_with_mounts(self, kind: str, listed: _Listed, ctx: Context) -> _Listed:
        """``listed`` (this server's own) followed by what each mount lists for this caller,
        renamed; an own name shadows a mounted one. ``predicates`` marks a listing that
        depends on the caller."""
        items, keys = list(listed.items), list(listed.keys)
        method = _KEY_OF[kind]
        field = "uri_template" if kind == "templates" else "uri" if kind == "resources" else "name"
        own = {getattr(item, field) for item in items}
        per_caller = listed.predicates
        for entry in list(self.mounted.values()):
            found, private = await entry.source.list(kind, ctx)
            per_caller = per_caller or private
            for item in found:
                copy = entry.renamed(kind, item)
                name = getattr(copy, field)
                if name not in own:
                    items.append(copy)
                    keys.append(f"{method} {name}")
        rules = listed.rules
        if rules is not None:
            rules = rules + [None] * (len(items) - len(rules))
        return _Listed(items, keys, rules, per_caller, listed.scoped)

    async def _call_mounted(self, params: Any, ctx: Context) -> Any:
        name = params.name
        routed = self._route_name(name)
        if routed is None or self._switched_off("tools/call", name):
            raise unknown("tools", name)
        entry, inner = routed
        if isinstance(params, t.CallToolRequestParams):
            call = msgspec.structs.replace(params, name=inner)  # the same arguments object
        else:  # a wire view (dispatch makes one only for an own tool): what a tool reads
            call = t.CallToolRequestParams(name=inner, arguments=params.arguments)
        try:
            return await entry.source.call_tool(call, ctx)
        except McpError as exc:
            if exc.code == INVALID_PARAMS and str(exc.message) == f"Unknown tool: {inner}":
                raise unknown("tools", name) from None
            raise

    async def _get_mounted(self, params: t.GetPromptRequestParams, ctx: Context) -> Any:
        name = params.name
        routed = self._route_name(name)
        if routed is None or self._switched_off("prompts/get", name):
            raise unknown("prompts", name)
        entry, inner = routed
        try:
            return await entry.source.get_prompt(msgspec.structs.replace(params, name=inner), ctx)
        except McpError as exc:
            if exc.code == INVALID_PARAMS and str(exc.message) == f"Unknown prompt: {inner}":
                raise unknown("prompts", name) from None
            raise

    async def _read_mounted(
        self, entry: Mount, inner: str, params: t.ReadResourceRequestParams, ctx: Context
    ) -> Any:
        uri = params.uri
        if self._switched_off("resources/read", uri):
            raise unknown("resources", uri)
        try:
            result = await entry.source.read_resource(
                msgspec.structs.replace(params, uri=inner), ctx
            )
        except McpError as exc:
            if exc.code == _RESOURCE_NOT_FOUND:
                raise unknown("resources", uri) from None
            raise
        if isinstance(result, t.ReadResourceResult):  # its contents name the URIs read
            prefix = entry.prefix
            contents = [
                msgspec.structs.replace(c, uri=prefixed_uri(prefix, c.uri))
                if isinstance(c, (t.TextResourceContents, t.BlobResourceContents))
                else c
                for c in result.contents
            ]
            result = msgspec.structs.replace(result, contents=contents)
        return result

    async def _complete_mounted(self, params: t.CompleteRequestParams, ctx: Context) -> Any:
        """``completion/complete`` of a mounted prompt or resource template, or ``None``."""
        ref = params.ref
        if isinstance(ref, t.PromptReference):
            routed = self._route_name(ref.name)
            inner_ref: Any = (
                msgspec.structs.replace(ref, name=routed[1]) if routed is not None else None
            )
        elif isinstance(ref, t.ResourceTemplateReference):
            routed = self._route_uri(ref.uri)
            inner_ref = msgspec.structs.replace(ref, uri=routed[1]) if routed is not None else None
        else:
            routed = None
        if routed is None or "completions" not in routed[0].source.kinds():
            return None
        return await routed[0].source.complete(msgspec.structs.replace(params, ref=inner_ref), ctx)

    def _mounted_kinds(self) -> frozenset[str]:
        kinds: set[str] = set()
        for entry in self.mounted.values():
            kinds.update(entry.source.kinds())
        return frozenset(kinds)

    # ------------------------------------------------------------------ capabilities
    def capabilities(self, *, stateless: bool = False) -> t.ServerCapabilities:
        """What the server declares; ``stateless``: as protocol 2026-07-28 sees it. What a
        mounted server offers counts as this server's."""
        caps = t.ServerCapabilities(logging={})
        mounted = self._mounted_kinds() if self.mounted else frozenset()
        if self.tools or "tools" in mounted:
            caps.tools = t.ServerCapabilitiesTools(list_changed=True)
        if self.resources or self.templates or "resources" in mounted:
            caps.resources = t.ServerCapabilitiesResources(list_changed=True, subscribe=True)
        if self.prompts or "prompts" in mounted:
            caps.prompts = t.ServerCapabilitiesPrompts(list_changed=True)
        if self.completion_handler is not None or "completions" in mounted:
            caps.completions = {}
        for extension in self.extensions:
            extension.capabilities(caps, stateless=stateless)
        return caps

    def info(self) -> t.Implementation:
        impl = t.Implementation(name=self.name, version=self.version)
        if self.title is not None:
            impl.title = self.title
        return impl

    def on_change(self, listener: Callable[[str, str | None], None]) -> Callable[[], None]:
        """Sessions subscribe here to send (debounced) ``list_changed`` notifications and
        ``resources/updated`` for their subscriptions: ``listener(what, uri)``.

        A change made off the listener's event loop (by a plain ``def`` tool in its worker
        thread) is handed to that loop, the only place a session may act on it."""
        loop = _running_loop()

        def deliver(what: str, uri: str | None) -> None:
            if loop is not None and _running_loop() is not loop:
                loop.call_soon_threadsafe(listener, what, uri)
            else:
                listener(what, uri)

        self._listeners[deliver] = None
        return lambda: self._listeners.pop(deliver, None)

    def extension_changed(self, key: str, detail: str | None = None) -> None:
        """An extension's change (a task's status: ``"task"``, its id) for the listeners."""
        self._changed(key, detail)

    def changed(self, what: str, uri: str | None = None) -> None:
        """Announce a change made elsewhere (another worker's, relayed by a notification
        bus): ``what`` is ``"tools"``, ``"prompts"``, ``"resources"`` (the list changed) or
        ``"updated"`` (resource ``uri`` changed). Every ``on_change`` listener hears it."""
        self._changed(what, uri)

    def _changed(self, what: str, uri: str | None = None) -> None:
        self._lists.pop(what, None)
        if what == "resources":
            self._lists.pop("templates", None)
        for listener in list(self._listeners):
            listener(what, uri)

    # ------------------------------------------------------------------ handlers
    def __post_init__(self) -> None:
        self._build_handlers()

    def _build_handlers(self) -> None:
        """``handlers`` (method -> handler, looked up per request), ``own_tool_calls`` and
        ``wire_views``."""
        table: dict[str, Handler] = {
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "completion/complete": self._complete,
        }
        table.update(self.custom)
        for method, wrappers in self._wrappers.items():
            for wrapper in wrappers if method in table else ():
                table[method] = wrapper(table[method])
        viewed = {
            method: table[method]
            for method, wrapper in self._view_wrappers.items()
            if method in table and self._wrappers[method][-1] is wrapper
        }
        self._layers = layers = layers_for(self.middleware)
        for method in table if layers else ():
            table[method] = compose(method, layers, table[method])
        self.own_tool_calls = table["tools/call"] == self._call_tool
        self.wire_views = frozenset(m for m, handler in viewed.items() if table[m] is handler)
        self.handlers: dict[str, Handler] = table  # an attribute: reading it changes nothing

    async def _list_tools(self, params: Any, ctx: Context) -> t.ListToolsResult:
        listed = self._listed("tools", self.tools, "tool")
        if self.mounted:
            listed = await self._listed_with_mounts("tools", listed, ctx)
        return self._listing(lambda page: t.ListToolsResult(tools=page), listed, params, ctx)

    async def _call_tool(self, params: ToolCall, ctx: Context) -> t.CallToolResult:
        """``tools/call``: the named tool run with the call's arguments (``params``: the
        request's params, or a 2026-07-28 request's wire view of them)."""
        entry = self.tools.get(params.name)
        if entry is None or (
            (self.rules or self.switches.keys)
            and not self._usable(f"tools/call {params.name}", ctx)
        ):  # one the caller cannot see is unknown to it
            if entry is None and self.mounted:
                return await self._call_mounted(params, ctx)  # type: ignore[no-any-return]
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        args = params.arguments
        signature = entry.signature
        try:
            kwargs = signature.bind(None if args is msgspec.UNSET else args)
        except ToolArgumentsError as exc:
            message = f"Invalid arguments for tool {params.name}: {exc}"
            if era_of(ctx.protocol_version).argument_errors_as_results:
                # 2025-11-25 server/tools.mdx §Error Handling: input validation errors are tool
                # execution errors, so the model sees them and can correct its call.
                return t.CallToolResult(content=[t.TextContent(text=message)], is_error=True)
            raise McpError(INVALID_PARAMS, message) from None
        for context_name in signature.skipped:
            kwargs[context_name] = ctx
        try:
            if entry.in_thread:
                value = await _in_thread(functools.partial(entry.fn, **kwargs), ctx)
            else:
                value = entry.fn(**kwargs)
            if type(value) is CoroutineType or (
                type(value) is not str and inspect.isawaitable(value)
            ):
                value = await value
        except BaseException as exc:
            if type(exc) is McpError or type(exc) is UrlElicitationRequired or is_cancellation(exc):
                raise  # a protocol error chosen on purpose (code and data pass through)
            # tools.mdx §Error Handling: errors that originate in the tool (its own, or of a
            # request it made to the client) are results, not protocol errors (tool_errors).
            return tool_failure(exc, ctx.debug_errors, params.name)
        return tool_result(value, signature)

    async def _list_resources(self, params: Any, ctx: Context) -> t.ListResourcesResult:
        listed = self._listed("resources", self.resources, "resource")
        if self.mounted:
            listed = await self._listed_with_mounts("resources", listed, ctx)
        return self._listing(
            lambda page: t.ListResourcesResult(resources=page), listed, params, ctx
        )

    async def _list_templates(self, params: Any, ctx: Context) -> t.ListResourceTemplatesResult:
        listed = self._listed("templates", self.templates, "template")
        if self.mounted:
            listed = await self._listed_with_mounts("templates", listed, ctx)
        return self._listing(
            lambda page: t.ListResourceTemplatesResult(resource_templates=page), listed, params, ctx
        )

    async def _read_resource(
        self, params: t.ReadResourceRequestParams, ctx: Context
    ) -> t.ReadResourceResult:
        uri = params.uri
        gated = bool(self.rules or self.switches.keys)
        fixed = self.resources.get(uri)
        if fixed is not None and gated and not self._usable(f"resources/read {uri}", ctx):
            raise McpError(_RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
        if fixed is not None:
            value = await _maybe_await(fixed.call({}, ctx))
            mime = fixed.resource.mime_type
            return t.ReadResourceResult(contents=resource_contents(uri, value, mime))
        if self.mounted and (routed := self._route_uri(uri)) is not None:
            return await self._read_mounted(routed[0], routed[1], params, ctx)  # type: ignore[no-any-return]
        for uri_template, tpl in self.templates.items():
            match = tpl.matcher.match(uri)
            if match is not None:
                if gated and not self._usable(f"resources/read {uri_template}", ctx):
                    break  # the template that serves it is hidden from this caller
                value = await _maybe_await(tpl.call({"uri": uri, **match}, ctx))
                return t.ReadResourceResult(
                    contents=resource_contents(uri, value, tpl.template.mime_type)
                )
        raise McpError(_RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})

    async def _list_prompts(self, params: Any, ctx: Context) -> t.ListPromptsResult:
        listed = self._listed("prompts", self.prompts, "prompt")
        if self.mounted:
            listed = await self._listed_with_mounts("prompts", listed, ctx)
        return self._listing(lambda page: t.ListPromptsResult(prompts=page), listed, params, ctx)

    async def _get_prompt(
        self, params: t.GetPromptRequestParams, ctx: Context
    ) -> t.GetPromptResult:
        entry = self.prompts.get(params.name)
        if entry is None or (
            (self.rules or self.switches.keys)
            and not self._usable(f"prompts/get {params.name}", ctx)
        ):
            if entry is None and self.mounted:
                return await self._get_mounted(params, ctx)  # type: ignore[no-any-return]
            raise McpError(INVALID_PARAMS, f"Unknown prompt: {params.name}")
        args = params.arguments
        signature = entry.signature
        try:
            kwargs = signature.bind(None if args is msgspec.UNSET else args)
        except ToolArgumentsError as exc:
            raise McpError(
                INVALID_PARAMS, f"Invalid arguments for prompt {params.name}: {exc}"
            ) from None
        kwargs.update(_context_kwargs(entry.signature, ctx))
        value = await _maybe_await(entry.fn(**kwargs))
        return prompt_result(value, entry.prompt)

    async def _complete(self, params: t.CompleteRequestParams, ctx: Context) -> t.CompleteResult:
        if self.mounted and (found := await self._complete_mounted(params, ctx)) is not None:
            return found  # type: ignore[no-any-return]
        if self.completion_handler is None:
            raise McpError(-32601, "Method not found: completion/complete")
        context = (
            params.context.arguments if not isinstance(params.context, msgspec.UnsetType) else None
        )
        value = await self.completion_handler(params.ref, params.argument, context)
        if isinstance(value, t.CompleteResult):
            return value
        everything = list(value)
        return t.CompleteResult(
            completion=t.CompleteResultCompletion(
                values=everything[:100], total=len(everything), has_more=len(everything) > 100
            )
        )

    # ------------------------------------------------------------------ pagination
    def _listed(self, kind: str, entries: dict[str, Any], attribute: str) -> _Listed:
        """The items one list method pages through, built once per change (``_changed``), so
        listing N items in pages costs O(N) in all, not O(N) per page."""
        listed = self._lists.get(kind)
        if listed is None or len(listed.items) != len(entries):  # also notices a direct edit
            prefix = _KEY_OF[kind]
            keys = [f"{prefix} {name}" for name in entries]
            found = [self.rules.get(key) for key in keys]
            ruled = [r for r in found if r is not None]
            listed = self._lists[kind] = _Listed(
                [getattr(x, attribute) for x in entries.values()],
                keys,
                found if ruled else None,
                any(r.visible is not None for r in ruled),
                any(r.scopes for r in ruled),
            )
        return listed

    def _listing(
        self, make: Callable[[list[Any]], L], listed: _Listed, params: Any, ctx: Context
    ) -> L:
        """One page of the items the caller may see as a list result, with ``nextCursor``
        when more follow; a page that depends on the caller is not a shared cache entry
        (2026-07-28 server/utilities/caching.mdx: ``cacheScope: "private"``)."""
        switches = self.switches
        rules = listed.rules
        if rules is None and not switches.keys:
            found, cursor = self._page(listed.items, params)
            result = make(found)
            if listed.predicates and era_of(ctx.protocol_version).stateless:
                result.cache_scope = "private"  # a mounted server's listing for this caller
        else:
            keys, by_scopes = listed.keys, self.hide_ungranted

            def keep(index: int) -> bool:
                rule = rules[index] if rules is not None else None
                return shown(rule, keys[index], ctx, switches, by_scopes=by_scopes)

            found, after = page(listed.items, keep, self._start(params), self.page_size)
            cursor = encode_cursor(after) if after is not None else None
            result = make(found)
            if (listed.predicates or (by_scopes and listed.scoped)) and era_of(
                ctx.protocol_version
            ).stateless:
                result.cache_scope = "private"
        if cursor:
            result.next_cursor = cursor
        return result

    def _start(self, params: Any) -> int:
        cursor = getattr(params, "cursor", None) if params is not None else None
        return decode_cursor(cursor) if isinstance(cursor, str) else 0

    def _page(self, items: list[Any], params: Any) -> tuple[list[Any], str | None]:
        start = self._start(params)
        end = start + self.page_size
        next_cursor = encode_cursor(end) if end < len(items) else None
        return items[start:end], next_cursor


# ---------------------------------------------------------------------- helpers
def _name_of(fn: Callable[..., Any], fallback: str) -> str:
    return str(getattr(fn, "__name__", None) or fallback)


def _doc(fn: Callable[..., Any]) -> str | None:
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        return None  # a partial's or callable object's class docstring says nothing of it
    doc = inspect.getdoc(fn)
    return doc.split("\n\n")[0].replace("\n", " ") if doc else None


def _set_optional(obj: Any, **values: Any) -> None:
    for key, value in values.items():
        if value is not None:
            setattr(obj, key, value)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _context_kwargs(sig: ToolSignature, ctx: Context) -> dict[str, Any]:
    return {name: ctx for name in sig.skipped}


class _Call:
    """A resource function with its signature read once: which of the offered keyword
    arguments it takes, and which parameters want the handler context."""

    __slots__ = ("_context", "_fn", "_params")

    def __init__(self, fn: Callable[..., Any]) -> None:
        params = inspect.signature(fn).parameters
        self._fn = fn
        self._params = frozenset(params)
        self._context = tuple(n for n, p in params.items() if p.annotation in (Context, "Context"))

    def __call__(self, offered: dict[str, Any], ctx: Context) -> Any:
        kwargs = {k: v for k, v in offered.items() if k in self._params}
        kwargs.update(dict.fromkeys(self._context, ctx))
        return self._fn(**kwargs)


def _in_thread(fn: Callable[[], Any], ctx: Context) -> Awaitable[Any]:
    """A ``def`` tool: in the loop's bounded daemon pool (threads.py) on asyncio. The pool's
    coroutine itself is returned for the caller to await (no coroutine of its own here)."""
    try:
        pool = threads.tool_threads()
    except RuntimeError:  # no asyncio loop runs this thread
        import anyio.to_thread  # off asyncio only

        return anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
    return pool.run(fn, ctx.mark_cancelled)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or ``None`` (a worker thread)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
