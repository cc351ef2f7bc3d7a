"""``Host``: many servers under one coordinator (2025-11-25 architecture §Host).

One ``Client`` per server, each with its own session, ids, roots and handlers, so a server
never sees another's traffic. The Host is composed of two collaborators: its
:class:`~.supervisor.Supervisor` runs every server under a task that connects, loads the full
lists (every page), keeps them current on ``list_changed``, and when the server fails to
start or dies reports it and retries with exponential backoff while the others keep working;
its :class:`~.gate.Gate` puts tool calls through the approval policy
(:mod:`mcpbind.host.approval`) and sampling and elicitation through the host's hooks. This
module is the public side: the configuration, starting, adding, removing and restarting
servers, and routing calls by host name.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import RequestOptions

from ..client import Client
from ..server.uritemplate import UriTemplate, UriTemplateError
from .approval import (
    ApprovalDenied,
    Approver,
    AuditEntry,
    ElicitationHook,
    Sampler,
    SamplingResultReviewer,
    SamplingReviewer,
    ToolCheck,
)
from .catalog import Catalog, LlmFormat, ToolEntry, llm_tools
from .config import (
    ApprovalPolicy,
    ConfigError,
    ConfigWarning,
    HostConfig,
    ServerConfig,
    check_server,
    pinned_version,
)
from .config_file import load_config, parse_config, parse_server
from .gate import Gate
from .state import (
    AmbiguousResource,
    Backoff,
    Handle,
    HostEvent,
    ServerState,
    ServerUnavailable,
    Target,
    UnknownName,
)
from .supervisor import Supervisor
from .telemetry import current_route, routing

if TYPE_CHECKING:
    from ..server import Server

__all__ = ["Host"]


class Host:
    """Use as ``async with Host(config, approve=...) as host``.

    ``config``: a :class:`HostConfig`, a path to a ``mcpServers`` JSON file, the parsed JSON,
    or a mapping of server name to :class:`ServerConfig`, an in-memory ``Server`` or a
    :data:`Connector`. Hooks: ``approve`` (asked for ``ask`` decisions), ``check`` (before every
    call; may override the policy), ``sampler`` + ``review_sampling`` (``sampling/createMessage``
    runs only after the reviewer approves or edits it; ``review_sampling_result`` may edit or
    withhold the answer), ``elicit`` (``elicitation/create``),
    ``on_event`` (lifecycle and catalog events). ``audit`` keeps the last ``audit_limit``
    decisions (a server sending sampling requests without end cannot grow it without bound).

    ``supervisor`` runs the servers and keeps their records, the catalog and the events;
    ``gate`` applies the approval policy and the hooks (both read the hooks and settings here
    at each use, so setting one later takes effect).
    """

    def __init__(
        self,
        config: HostConfig | str | os.PathLike[str] | Mapping[str, Any] | None = None,
        *,
        approve: Approver | None = None,
        check: ToolCheck | None = None,
        sampler: Sampler | None = None,
        review_sampling: SamplingReviewer | None = None,
        review_sampling_result: SamplingResultReviewer | None = None,
        elicit: ElicitationHook | None = None,
        on_event: Callable[[HostEvent], object] | None = None,
        backoff: Backoff | None = None,
        startup_timeout: float = 30.0,
        refresh_interval: float = 0.05,
        client_name: str = "mcpbind-host",
        audit_limit: int = 10_000,
    ) -> None:
        self._initial, self._warnings = _targets(config)
        self.approve = approve
        self.check = check
        self.sampler = sampler
        self.review_sampling = review_sampling
        self.review_sampling_result = review_sampling_result
        self.elicit = elicit
        self.on_event = on_event
        self.backoff = backoff or Backoff()
        self.startup_timeout = startup_timeout
        self.refresh_interval = refresh_interval
        self.client_name = client_name
        self.audit: deque[AuditEntry] = deque(maxlen=audit_limit)
        self.gate = Gate(self, self.audit)
        self.supervisor = Supervisor(self, self.gate)

    @property
    def catalog(self) -> Catalog:
        """The tools, resources, templates and prompts of the running servers, by host name."""
        return self.supervisor.catalog

    @property
    def events(self) -> deque[HostEvent]:
        """The last thousand lifecycle and catalog events."""
        return self.supervisor.events

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> Host:
        await self.supervisor.open()
        try:
            for warning in self._warnings:
                self._warn(warning)
            for name, target in self._initial.items():
                self._start(name, target)
            await self.wait_settled(self.startup_timeout)
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.supervisor.aclose()

    async def wait_settled(self, timeout: float | None = None) -> None:
        """Wait until every server's current start attempt has connected or failed."""
        await self.supervisor.wait_settled(timeout)

    async def add_server(
        self,
        name: str,
        target: Target | Mapping[str, Any],
        *,
        approval: ApprovalPolicy | None = None,
        roots: list[t.Root] | None = None,
        timeout: float | None = None,
        protocol_version: str | None = None,
        wait: bool = True,
    ) -> None:
        """Start one more server. For a ``Server`` or connector, policy, roots and a pinned
        ``protocol_version`` (an era or a version; default: negotiate) come from the keywords;
        a :class:`ServerConfig` carries its own."""
        if name in self.supervisor.handles:
            raise ConfigError(name, None, "a server with this name already exists")
        if isinstance(target, Mapping):
            target = parse_server(name, target, self._warn)
        elif isinstance(target, ServerConfig):
            check_server(name, target)
        try:
            pinned = pinned_version(protocol_version)
        except ValueError as exc:
            raise ConfigError(name, "protocolVersion", str(exc)) from None
        handle = self._start(
            name, target, approval=approval, roots=roots, timeout=timeout, protocol_version=pinned
        )
        if wait:
            with anyio.move_on_after(self.startup_timeout):
                await handle.settled.wait()

    async def remove_server(self, name: str) -> None:
        """Stop a server (its process is shut down) and drop its entries from the catalog."""
        await self.supervisor.remove(name)

    async def restart_server(self, name: str, *, wait: bool = True) -> None:
        """Close the server's session (and process) and connect again at once; a stopped
        (e.g. disabled) server is started."""
        handle = self.supervisor.handle(name)
        if handle.done.is_set():
            handle = self._start(
                name,
                handle.target,
                approval=handle.policy,
                roots=handle.roots,
                timeout=handle.timeout,
                protocol_version=handle.protocol_version,
                force=True,
            )
            if wait:
                with anyio.move_on_after(self.startup_timeout):
                    await handle.settled.wait()
            return
        settled = self.supervisor.restart(handle)
        if wait:
            with anyio.move_on_after(self.startup_timeout):
                await settled.wait()

    async def set_roots(self, name: str, roots: list[t.Root]) -> None:
        """Replace one server's roots; only that server is told (roots/list_changed)."""
        handle = self.supervisor.handle(name)
        had_roots = handle.roots is not None
        handle.roots = list(roots)
        if had_roots and handle.client is not None:
            await handle.client.set_roots(roots)
        elif not had_roots:
            await self.restart_server(name)  # the roots capability is declared at initialize

    def _warn(self, warning: ConfigWarning) -> None:
        message = f"key {warning.key!r}: {warning.message}" if warning.key else warning.message
        self.supervisor.emit("warning", warning.server or "*", message)

    def _start(
        self,
        name: str,
        target: Target,
        *,
        approval: ApprovalPolicy | None = None,
        roots: list[t.Root] | None = None,
        timeout: float | None = None,
        protocol_version: str | None = None,
        force: bool = False,
    ) -> Handle:
        if not self.supervisor.running:
            raise RuntimeError("use the host as `async with Host(...) as host`")
        if isinstance(target, ServerConfig):
            handle = Handle(
                name,
                target,
                approval if force and approval is not None else target.policy(),
                roots if force else target.root_list(),
                timeout if force else target.timeout,
                target.max_message_size,
                protocol_version if force else target.pinned_version(),
            )
        else:
            handle = Handle(
                name, target, approval or ApprovalPolicy(), roots, timeout, None, protocol_version
            )
        if isinstance(target, ServerConfig) and not target.active and not force:
            handle.status = "stopped"
            handle.error = "disabled in the configuration"
            handle.settled.set()
            handle.done.set()
            self.supervisor.add(handle, start=False)
            return handle
        self.supervisor.add(handle)
        return handle

    # ------------------------------------------------------------------ as a server
    def as_server(
        self, *, name: str = "mcpbind-gateway", version: str = "0.1.0", run_host: bool = False
    ) -> Server:
        """This host as one MCP server (a gateway, :mod:`mcpbind.host.gateway`): its catalog
        under host names, each request routed to the server that owns it, the approval
        policy asking the calling client (elicitation). Call it before ``async with host``
        and serve the result as any ``Server`` while the host runs; with ``run_host`` the
        server's lifespan runs the host (``serve_stdio(host.as_server(run_host=True))``)."""
        from .gateway import Gateway

        return Gateway(self, name=name, version=version, run_host=run_host).server

    # ------------------------------------------------------------------ host -> servers
    def servers(self) -> list[ServerState]:
        out = []
        for name, h in sorted(self.supervisor.handles.items()):
            info = h.client.server_info if h.client is not None else None
            version = h.client.protocol_version if h.client is not None else None
            out.append(
                ServerState(
                    name,
                    h.status,
                    h.transport,
                    h.error,
                    h.connects,
                    h.pid,
                    info,
                    h.notifications,
                    version,
                    h.attempts,
                    h.stderr,
                )
            )
        return out

    def client(self, server: str) -> Client:
        """The connected client of one server (raises if it is not connected)."""
        handle = self.supervisor.handle(server)
        if handle.client is None:
            raise ServerUnavailable(server, handle.status, handle.error)
        return handle.client

    def policy(self, server: str) -> ApprovalPolicy:
        """The approval policy of one server."""
        return self.supervisor.handle(server).policy

    def logs(self, server: str) -> list[t.LoggingMessageNotificationParams]:
        return list(self.supervisor.handle(server).logs)

    def tools_for_llm(self, format: LlmFormat = "openai") -> list[dict[str, Any]]:
        """The aggregated tools as LLM tool-calling APIs take them (see ``catalog.llm_tools``)."""
        return llm_tools(self.catalog, format)

    def instructions(self) -> dict[str, str]:
        """Each connected server's ``instructions`` (from initialize), for a system prompt."""
        return {
            name: h.client.instructions
            for name, h in sorted(self.supervisor.handles.items())
            if h.client is not None and h.client.instructions
        }

    async def refresh(self, server: str | None = None) -> None:
        """Bring the catalog up to date where it may be stale (caching.mdx: check freshness
        when the data is needed): each 2026-07-28 server's lists are fetched through its
        client's cache, so pages still within their ``ttlMs`` cost nothing and stale ones are
        fetched again. Handshake-era lists have no TTL and follow ``list_changed``."""
        names = [server] if server is not None else sorted(self.supervisor.handles)
        await self.supervisor.refresh(names)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        options: RequestOptions | None = None,
    ) -> t.CallToolResult:
        """Call a tool by its host name, after the approval policy allows it.

        Raises :class:`UnknownName`, :class:`ServerUnavailable`, :class:`ApprovalDenied`, or the
        client's ``McpError`` (e.g. ``ConnectionClosed`` when the server dies mid-call).
        """
        with routing("tools/call", name):  # one trace: host, client, server
            entry, client = await self.authorize_tool_call(name, arguments)
            return await client.call(entry.tool.name, arguments, options=options)

    async def authorize_tool_call(
        self, name: str, arguments: dict[str, Any] | msgspec.Raw | None = None
    ) -> tuple[ToolEntry, Client]:
        """Put a call of the tool ``name`` (a host name) through the approval policy, as
        :meth:`call_tool` does before it calls: the tool's catalog entry and the client of its
        server, to call it with (e.g. as a task, :class:`mcpbind.host.tasks.HostTasks`).
        ``arguments`` may be the call's JSON object (``msgspec.Raw``, as a gateway receives
        it): decoded only for a check hook or an approver.

        Raises :class:`UnknownName`, :class:`ServerUnavailable` or :class:`ApprovalDenied`.
        Inside :func:`~.telemetry.routing`, its span records the server and the verdict.
        """
        entry = self.catalog.tools.get(name)
        if entry is None:
            raise UnknownName("tool", name, "; see Host.catalog.tools")
        route = current_route()
        if route.traced:
            route.to(entry.server, entry.tool.name)
        handle = self.supervisor.handle(entry.server)
        if handle.client is None:  # a server that is down fails before the user is asked
            raise ServerUnavailable(entry.server, handle.status, handle.error)
        try:
            if not self.gate.allows(handle.policy, entry):  # allowed outright: no await
                await self.gate.authorize(handle.policy, entry, arguments)
        except ApprovalDenied:
            route.approved("deny")
            raise
        if route.traced:
            route.approved("allow")
        # The server may have restarted while the user was deciding: its handle's client now
        # (the same handle unless the server was removed and added again).
        client = handle.client
        if client is None or self.supervisor.handles.get(entry.server) is not handle:
            client = self.client(entry.server)  # raises if it is down now
        return entry, client

    async def read_resource(self, uri: str, *, server: str | None = None) -> t.ReadResourceResult:
        """Read a resource from ``server``, or from the one server that lists or templates it.

        Every server that could serve the URI counts, by listing or by template: a listing
        does not beat another server's template (a server could otherwise shadow a URI another
        one serves and learn what is read), so two candidates of any kind are refused."""
        if server is None:
            server = self.resource_owner(uri)
        with routing("resources/read", uri) as route:
            route.to(server, uri)
            return await self.client(server).read_resource(t.ReadResourceRequestParams(uri=uri))

    def resource_owners(self, uri: str) -> list[str]:
        """The servers that list ``uri`` or have a template matching it."""
        return sorted(set(self.catalog.servers_listing(uri)) | set(self._template_owners(uri)))

    def resource_owner(self, uri: str) -> str:
        """The one server that could serve ``uri`` (:meth:`read_resource` reads from it);
        raises :class:`UnknownName` (none) or :class:`AmbiguousResource` (more than one)."""
        owners = self.resource_owners(uri)
        if not owners:
            raise UnknownName("resource", uri, "; no server lists it or has a matching template")
        if len(owners) > 1:
            raise AmbiguousResource(uri, owners)
        return owners[0]

    def _template_owners(self, uri: str) -> list[str]:
        owners = set()
        for entry in self.catalog.templates:
            with contextlib.suppress(UriTemplateError):
                if UriTemplate(entry.template.uri_template).match(uri) is not None:
                    owners.add(entry.server)
        return sorted(owners)

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> t.GetPromptResult:
        """Get a prompt by its host name from the server that owns it."""
        entry = self.catalog.prompts.get(name)
        if entry is None:
            raise UnknownName("prompt", name, "; see Host.catalog.prompts")
        params = t.GetPromptRequestParams(name=entry.prompt.name)
        if arguments is not None:
            params.arguments = arguments
        with routing("prompts/get", name) as route:
            route.to(entry.server, entry.prompt.name)
            return await self.client(entry.server).get_prompt(params)


def _targets(
    config: HostConfig | str | os.PathLike[str] | Mapping[str, Any] | None,
) -> tuple[dict[str, Target], list[ConfigWarning]]:
    """The servers to start, and the configuration's warnings."""
    if config is None:
        return {}, []
    if isinstance(config, str | os.PathLike):
        config = load_config(config)
    elif not isinstance(config, HostConfig) and _is_file_shape(config):
        config = parse_config(config)
    if isinstance(config, HostConfig):
        return dict(config.mcp_servers), list(config.warnings)
    warnings: list[ConfigWarning] = []
    out: dict[str, Target] = {}
    for name, target in config.items():
        if isinstance(target, Mapping):
            out[name] = parse_server(name, target, warnings.append)
        elif isinstance(target, ServerConfig):
            out[name] = check_server(name, target)
        else:
            out[name] = target
    return out, warnings


def _is_file_shape(config: Mapping[str, Any]) -> bool:
    """Whether a mapping is a whole configuration (``mcpServers``, VS Code's ``servers``, its
    ``mcp.servers``) rather than server name -> target; a server named ``servers`` has a
    settings object, not an object of objects, as its value."""
    if "mcpServers" in config:
        return True
    nested = config.get("mcp")
    vscode_settings = nested.get("servers") if isinstance(nested, Mapping) else None
    for section in (config.get("servers"), vscode_settings):
        if isinstance(section, Mapping) and all(isinstance(v, Mapping) for v in section.values()):
            return True
    return False
