"""``Client``: one isolated, stateful session with one server.

``async with Client(transport) as client:`` runs the initialize handshake; every method of the
generated ``ServerMethods`` stubs is then typed (``await client.call_tool(...)`` returns a
``CallToolResult``). Requests the server sends back (sampling, elicitation, roots) go to the
handlers given here, and are refused unless the matching capability is declared.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, P, R, RequestOptions, json_object, json_value
from mcpbind_types.unified.stubs import ServerMethods

from .protocol import (
    METHOD_NOT_FOUND,
    McpError,
    NotificationReceived,
    RequestReceived,
    Session,
    SessionOptions,
    custom_method,
    has_capability,
)
from .session import Connection
from .transports import Transport, memory_pair
from .versions import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE

__all__ = ["Client", "ClientHandlers", "UnsupportedVersion"]

logger = logging.getLogger("mcpbind.client")

SamplingHandler = Callable[[t.CreateMessageRequestParams], Awaitable[t.CreateMessageResult]]
ElicitationHandler = Callable[[Any], Awaitable[t.ElicitResult]]
LoggingHandler = Callable[[t.LoggingMessageNotificationParams], Awaitable[None]]
NotificationCallback = Callable[[str, Any], Awaitable[None]]


class UnsupportedVersion(McpError):
    """The server answered initialize with a protocol version this client does not speak."""

    def __init__(self, version: str) -> None:
        supported = ", ".join(HANDSHAKE_VERSIONS)
        super().__init__(
            -32602,
            f"Server chose protocol version {version!r}; this client supports {supported}",
            {"supported": list(HANDSHAKE_VERSIONS), "requested": version},
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


class Client(ServerMethods):
    """A typed MCP client. ``Client(server)`` connects in memory to an mcpbind ``Server``."""

    def __init__(
        self,
        transport: Transport | Any,
        *,
        name: str = "mcpbind",
        version: str = "0.1.0",
        handlers: ClientHandlers | None = None,
        protocol_version: str = LATEST_HANDSHAKE,
        timeout: float | None = 60.0,
        enforce_capabilities: bool = True,
        refresh_lists: bool = False,
    ) -> None:
        self._target = transport
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
        self._schemas: dict[str, dict[str, Any] | None] = {}  # tool -> output schema, lazily
        self.tools: list[t.Tool] | None = None
        self.resources: list[t.Resource] | None = None
        self.prompts: list[t.Prompt] | None = None

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
        transport = await self._open_transport()
        core = Session("client", None, self._options)
        core.set_local_capabilities(self.capabilities())
        self.connection = Connection(
            core,
            transport,
            on_request=self._on_request,
            on_notification=self._on_notification,
            default_timeout=self._timeout,
        )
        await self._stack.enter_async_context(self.connection)
        params = t.InitializeRequestParams(
            capabilities=self.capabilities(), client_info=self._info, protocol_version=self._offer
        )
        result: t.InitializeResult = await self.connection.request("initialize", params)
        if result.protocol_version not in HANDSHAKE_VERSIONS:
            raise UnsupportedVersion(result.protocol_version)
        core.set_peer_capabilities(result.capabilities)
        self.protocol_version = result.protocol_version
        self.server_info = result.server_info
        self.server_capabilities = result.capabilities
        if isinstance(result.instructions, str):
            self.instructions = result.instructions
        await self.connection.notify("notifications/initialized", None)
        if self.refresh_lists:
            for kind in ("tools", "resources", "prompts"):
                await self._refresh(kind)

    async def _open_transport(self) -> Transport:
        target = self._target
        from .server.app import Server

        if isinstance(target, Server):
            from .server.session import ServerSession

            client_end, server_end = memory_pair()
            session = ServerSession(target, server_end)
            tg = await self._stack.enter_async_context(anyio.create_task_group())
            tg.start_soon(session.run)
            self._stack.callback(tg.cancel_scope.cancel)
            return client_end
        return target

    def capabilities(self) -> t.ClientCapabilities:
        caps = t.ClientCapabilities()
        if self.handlers.sampling is not None:
            caps.sampling = t.ClientCapabilitiesSampling()
        if self.handlers.elicitation is not None:
            caps.elicitation = t.ClientCapabilitiesElicitation(form={}, url={})
        if self.handlers.roots is not None:
            caps.roots = t.ClientCapabilitiesRoots(list_changed=True)
        return caps

    # ------------------------------------------------------------------ the stub funnel
    async def send_request(
        self, method: MethodInfo[P, R], params: P | None, options: RequestOptions | None = None
    ) -> R:
        result: R = await self._conn().request(method.method, params, options)
        return result

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
        (fetched once with tools/list) when the tool declares one."""
        params = t.CallToolRequestParams(name=name)
        if arguments is not None:
            params.arguments = arguments
        result = await self.call_tool(params, options=options)
        if check_output and not result.is_error:
            schema = await self._output_schema(name)
            if schema is not None:
                _check_structured(name, schema, result)
        return result

    async def _output_schema(self, name: str) -> dict[str, Any] | None:
        if name not in self._schemas:
            async for tool in self.iter_tools():
                schema = tool.output_schema
                if isinstance(schema, msgspec.UnsetType):
                    self._schemas[tool.name] = None
                else:
                    self._schemas[tool.name] = json_object(schema)
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
        return await conn.request(method, params, options)

    async def set_roots(self, roots: Sequence[t.Root]) -> None:
        """Replace the roots and tell the server (``notifications/roots/list_changed``)."""
        self._roots = list(roots)
        await self._conn().notify("notifications/roots/list_changed", None)

    # ------------------------------------------------------------------ server -> client
    async def _on_request(self, event: RequestReceived) -> Any:
        h = self.handlers
        if event.method == "ping":
            return {}
        if event.method == "roots/list" and h.roots is not None:
            return t.ListRootsResult(roots=self._roots)
        if event.method == "sampling/createMessage" and h.sampling is not None:
            return await h.sampling(event.params)
        if event.method == "elicitation/create" and h.elicitation is not None:
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

    async def _refresh_quietly(self, kind: str) -> None:
        try:
            await self._refresh(kind)
        except McpError as exc:
            logger.warning("refreshing %s after list_changed failed: %s", kind, exc)

    def peer_has_capability(self, path: tuple[str, ...]) -> bool:
        return has_capability(self._conn().core.peer_capabilities, path)


def _page(cursor: str | None) -> t.PaginatedRequestParams | None:
    return None if cursor is None else t.PaginatedRequestParams(cursor=cursor)


def _check_structured(name: str, schema: dict[str, Any], result: t.CallToolResult) -> None:
    content = result.structured_content
    if isinstance(content, msgspec.UnsetType):
        raise McpError(
            -32602, f"Tool {name} declares an output schema but returned no structured content"
        )
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - the check needs the optional validator
        return
    value = json_value(content)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value), key=str)
    if errors:
        path = "$" + "".join(f"[{p!r}]" for p in errors[0].absolute_path)
        raise McpError(
            -32602,
            f"Tool {name} structured content does not match its output "
            f"schema at {path}: {errors[0].message}",
        )
