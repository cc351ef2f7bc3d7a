"""A remote server as a mount source: ``server.mount(RemoteSource(target), prefix)`` puts the
tools, resources, templates and prompts of a server reached through a ``Client`` (a command
line, a URL, a transport) inside a mcpbind ``Server`` (:mod:`mcpbind.server.mount`).

The client connects when the mounting server starts (the source is held by its lifespan) and
closes when it stops. It keeps the remote lists, fetched again on ``list_changed`` (a listen
stream on 2026-07-28, basic/patterns/subscriptions.mdx), and tells the mounting server, whose
sessions then hear of the change. Calls go out as the gateway's do (:mod:`.forwarding`:
progress to the caller's token, cancellation, the upstream's errors as they came); what the
remote server asks during a call (sampling, elicitation) and its log messages go to the
caller through a :class:`~.relay.Relay`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Collection
from typing import Any

import anyio
import msgspec

from mcpbind_types import unified as t

from ..client import Client, ClientHandlers
from ..protocol import INTERNAL_ERROR, McpError
from ..server.context import Context
from .forwarding import UpstreamErrors, progress_to
from .relay import Relay

__all__ = ["RemoteSource"]

_LISTED = {"tools": "tools", "resources": "resources", "prompts": "prompts"}


class RemoteSource:
    """A server reached through a ``Client``, as a mount source. ``target`` and
    ``client_options`` are ``Client``'s (``"python server.py"``, ``"https://.../mcp"``, a
    transport; ``auth=``, ``protocol_version=``...); ``name`` is how errors name it."""

    def __init__(self, target: Any, *, name: str | None = None, **client_options: Any) -> None:
        self.target = target
        self.name = name or (target if isinstance(target, str) else type(target).__name__)
        self.client_options = client_options
        self.relay = Relay()
        #: The connected client while the mounting server runs (``None`` otherwise).
        self.client: Client | None = None
        self.lists: dict[str, list[Any]] = {"tools": [], "resources": [], "templates": []}
        self.lists["prompts"] = []
        self._listeners: dict[Callable[[str, str | None], None], None] = {}
        self._dirty: set[str] = set()
        self._wake = anyio.Event()

    # ------------------------------------------------------------------ Source
    @property
    def label(self) -> str:
        return self.name

    def names(self, kind: str) -> Collection[str]:
        key = "uri_template" if kind == "templates" else "uri" if kind == "resources" else "name"
        return [getattr(item, key) for item in self.lists[kind]]

    def kinds(self) -> frozenset[str]:
        client = self.client
        if client is None:
            return frozenset()
        return frozenset(
            kind
            for kind in ("tools", "resources", "prompts", "completions")
            if client.peer_has_capability((kind,))
        )

    def on_change(self, listener: Callable[[str, str | None], None]) -> Callable[[], None]:
        self._listeners[listener] = None
        return lambda: self._listeners.pop(listener, None)

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """Connected (lists loaded, changes followed) while the mounting server runs."""
        handlers = ClientHandlers(
            sampling=lambda params: self.relay.sample(self.name, params),
            elicitation=lambda params: self.relay.elicit(self.name, params),
            notification=self._notified,
        )
        options = {"handlers": handlers, **self.client_options}
        async with Client(self.target, **options) as client, anyio.create_task_group() as tg:
            self.client = client
            try:
                wanted = {k: client.peer_has_capability((k, "listChanged")) for k in _LISTED}
                if client.era == "stateless" and any(wanted.values()):
                    await client.listen(
                        tools_list_changed=wanted["tools"],
                        resources_list_changed=wanted["resources"],
                        prompts_list_changed=wanted["prompts"],
                    )
                for kind in _LISTED:
                    await self._load(kind)
                self._changed(*_LISTED)
                tg.start_soon(self._refresher)
                yield
            finally:
                tg.cancel_scope.cancel()
                self.client = None

    async def list(self, kind: str, ctx: Context) -> tuple[list[Any], bool]:
        return list(self.lists[kind]), False

    async def call_tool(self, params: t.CallToolRequestParams, ctx: Context) -> Any:
        client = self._client()
        upstream = t.CallToolRequestParams(name=params.name)
        if not isinstance(params.arguments, msgspec.UnsetType):
            upstream.arguments = params.arguments
        with self.relay.serving(self.name, ctx), UpstreamErrors(self.name):
            return await client.call_tool(upstream, options=progress_to(ctx))

    async def read_resource(self, params: t.ReadResourceRequestParams, ctx: Context) -> Any:
        client = self._client()
        with self.relay.serving(self.name, ctx), UpstreamErrors(self.name):
            return await client.read_resource(t.ReadResourceRequestParams(uri=params.uri))

    async def get_prompt(self, params: t.GetPromptRequestParams, ctx: Context) -> Any:
        client = self._client()
        upstream = t.GetPromptRequestParams(name=params.name)
        if not isinstance(params.arguments, msgspec.UnsetType):
            upstream.arguments = params.arguments
        with self.relay.serving(self.name, ctx), UpstreamErrors(self.name):
            return await client.get_prompt(upstream)

    async def complete(self, params: t.CompleteRequestParams, ctx: Context) -> Any:
        client = self._client()
        with UpstreamErrors(self.name):
            return await client.complete(params)

    def declared_scopes(self, method: str, target: str) -> frozenset[str]:
        return frozenset()  # the remote server checks its own

    # ------------------------------------------------------------------ the client's side
    def _client(self) -> Client:
        if self.client is None:
            raise McpError(INTERNAL_ERROR, f"server {self.name!r} is not connected")
        return self.client

    async def _load(self, kind: str) -> None:
        client = self._client()
        if not client.peer_has_capability((kind,)):
            return
        with UpstreamErrors(self.name):
            if kind == "tools":
                self.lists["tools"] = [x async for x in client.iter_tools()]
            elif kind == "prompts":
                self.lists["prompts"] = [x async for x in client.iter_prompts()]
            else:
                self.lists["resources"] = [x async for x in client.iter_resources()]
                self.lists["templates"] = [x async for x in client.iter_resource_templates()]

    async def _notified(self, method: str, params: Any) -> None:
        if method.endswith("/list_changed"):
            kind = method.split("/")[1]
            if kind in _LISTED:
                self._dirty.add(kind)
                self._wake.set()
        elif method == "notifications/resources/updated":
            self._changed_uri(params.uri)
        elif method == "notifications/message":
            with contextlib.suppress(McpError, ConnectionError):
                await self.relay.log(self.name, params)

    async def _refresher(self) -> None:
        """Fetch the lists the server said changed (not in its read loop), then tell."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            kinds, self._dirty = self._dirty, set()
            for kind in sorted(kinds):
                with contextlib.suppress(McpError):
                    await self._load(kind)
            self._changed(*kinds)

    def _changed(self, *kinds: str) -> None:
        for kind in kinds:
            for listener in list(self._listeners):
                listener(kind, None)

    def _changed_uri(self, uri: str) -> None:
        for listener in list(self._listeners):
            listener("updated", uri)
