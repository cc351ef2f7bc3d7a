"""Composition: ``Server.mount(other, prefix)`` puts another server's tools, resources,
resource templates and prompts inside a server, under a prefix.

Names. A mounted tool or prompt ``name`` is listed as ``<prefix>_<name>``: the underscore is
the one separator every tool-name rule accepts (2025-11-25 server/tools.mdx §Tool Names:
``A-Z a-z 0-9 _ - .``; model APIs that take tool names as function names refuse ``.``), and
the one FastMCP uses, so a server moved from FastMCP keeps its names. A resource URI gets the
prefix as the first segment after its scheme (and ``//``, when it has one):
``data://config`` → ``data://<prefix>/config``, ``file:///etc/hosts`` →
``file://<prefix>//etc/hosts``, ``urn:isbn:1`` → ``urn:<prefix>/isbn:1``; a URI template the
same way (``weather://{city}`` → ``weather://<prefix>/{city}``). Every mapping is reversible
by position, so a read or call is routed without a lookup table.

The seam: a mounted thing is a :class:`Source` — what a server needs of a source of tools,
resources and prompts (list for a caller, call, read, get, declared scopes, change
notifications, a lifespan to hold). :class:`ServerSource` is the in-process one: it calls the
other ``Server``'s handlers (its middleware, visibility rules and switches included) with the
caller's own :class:`~.context.Context` and typed params, so nothing is encoded or decoded on
the way. A source reaching a remote server through a ``Client`` implements the same protocol.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final, Protocol

import msgspec

from mcpbind_types import unified as t

from ..protocol.errors import INVALID_PARAMS, McpError
from .context import Context

if TYPE_CHECKING:
    from .app import Server

__all__ = [
    "KINDS",
    "SEPARATOR",
    "Mount",
    "ServerSource",
    "Source",
    "check_prefix",
    "prefixed_name",
    "prefixed_uri",
    "unknown",
    "unprefixed_name",
    "unprefixed_uri",
]

SEPARATOR: Final = "_"
"""Between a mount's prefix and a mounted tool's or prompt's name."""

#: What a source offers, as ``Source.names`` and ``Source.list`` name it.
KINDS: Final = ("tools", "resources", "templates", "prompts")

_PREFIX = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(?://)?")

_RESOURCE_NOT_FOUND = -32002


class Source(Protocol):
    """What a server needs of a mounted source of tools, resources, templates and prompts.
    Names and URIs here are the source's own (unprefixed); the mount adds the prefix."""

    @property
    def label(self) -> str:
        """How errors name it (a server's name)."""
        ...

    def names(self, kind: str) -> Collection[str]:
        """Its tool or prompt names, resource URIs or URI templates (``kind``: one of
        :data:`KINDS`) as of now, whoever asks: for refusing collisions at mount time."""
        ...

    def kinds(self) -> frozenset[str]:
        """Which of ``tools``, ``resources``, ``prompts`` it offers (the parent declares the
        capability when a source offers the kind); ``completions`` if it completes."""
        ...

    def on_change(self, listener: Callable[[str, str | None], None]) -> Callable[[], None]:
        """Call ``listener(what, uri)`` on a change, as ``Server.on_change`` does; returns
        the unsubscribe callable."""
        ...

    def held(self) -> AbstractAsyncContextManager[None]:
        """Held while the mounting server's lifespan runs (its own lifespan, a connection)."""
        ...

    async def list(self, kind: str, ctx: Context) -> tuple[list[Any], bool]:
        """Everything of ``kind`` the caller of ``ctx`` may see (all pages), and whether that
        depends on the caller (2026-07-28 ``cacheScope: "private"``)."""
        ...

    async def call_tool(self, params: t.CallToolRequestParams, ctx: Context) -> Any: ...

    async def read_resource(self, params: t.ReadResourceRequestParams, ctx: Context) -> Any: ...

    async def get_prompt(self, params: t.GetPromptRequestParams, ctx: Context) -> Any: ...

    async def complete(self, params: t.CompleteRequestParams, ctx: Context) -> Any: ...

    def declared_scopes(self, method: str, target: str) -> frozenset[str]:
        """The OAuth scopes it declares for ``method`` on ``target`` (a tool or prompt name,
        a resource URI), for the mounting server's auth layer."""
        ...


class Mount:
    """One mounted source under its prefix, with the renamed copies of its listed items
    (kept while the item object is the same: a listing costs no copy once made)."""

    __slots__ = ("_copies", "prefix", "source", "unsubscribe")

    def __init__(self, prefix: str, source: Source) -> None:
        self.prefix = prefix
        self.source = source
        self.unsubscribe: Callable[[], None] = _nothing
        self._copies: dict[int, tuple[Any, Any]] = {}

    def renamed(self, kind: str, item: Any) -> Any:
        """``item`` (a listed ``Tool``, ``Resource``, ``ResourceTemplate`` or ``Prompt``) as
        the mounting server lists it: a shallow copy under the prefixed name or URI."""
        kept = self._copies.get(id(item))
        if kept is not None and kept[0] is item:
            return kept[1]
        prefix = self.prefix
        if kind == "resources":
            copy = msgspec.structs.replace(item, uri=prefixed_uri(prefix, item.uri))
        elif kind == "templates":
            copy = msgspec.structs.replace(
                item, uri_template=prefixed_uri(prefix, item.uri_template)
            )
        else:
            copy = msgspec.structs.replace(item, name=prefixed_name(prefix, item.name))
        self._copies[id(item)] = (item, copy)
        return copy

    def forget(self) -> None:
        """Drop the renamed copies (the source's lists changed)."""
        self._copies.clear()


class ServerSource:
    """An in-process ``Server`` as a :class:`Source`: its handlers (inside its own
    middleware) run with the caller's context and typed params; nothing is serialised."""

    __slots__ = ("server",)

    def __init__(self, server: Server) -> None:
        self.server = server

    @property
    def label(self) -> str:
        return self.server.name

    def names(self, kind: str) -> Collection[str]:
        server = self.server
        own: dict[str, Any] = getattr(server, kind)
        found = list(own)
        for mount in server.mounted.values():
            inner = mount.source.names(kind)
            if kind in ("tools", "prompts"):
                found.extend(prefixed_name(mount.prefix, name) for name in inner)
            else:
                found.extend(prefixed_uri(mount.prefix, uri) for uri in inner)
        return found

    def kinds(self) -> frozenset[str]:
        caps = self.server.capabilities()
        return frozenset(
            kind
            for kind in ("tools", "resources", "prompts", "completions")
            if not isinstance(getattr(caps, kind), msgspec.UnsetType)
        )

    def on_change(self, listener: Callable[[str, str | None], None]) -> Callable[[], None]:
        return self.server.on_change(listener)

    def held(self) -> AbstractAsyncContextManager[None]:
        from .lifespan import held

        return held(self.server)

    def _context(self, ctx: Context) -> Context:
        """The caller's context, given the other server's lifespan value when it differs."""
        state = self.server.lifespan_state
        if ctx.lifespan_state is state:
            return ctx
        return msgspec.structs.replace(ctx, lifespan_state=state)

    async def list(self, kind: str, ctx: Context) -> tuple[list[Any], bool]:
        method, field = _LISTS[kind]
        handler = self.server.handlers[method]
        ctx = self._context(ctx)
        items: list[Any] = []
        private = False
        params = t.PaginatedRequestParams()
        while True:
            result = await handler(params, ctx)
            items.extend(getattr(result, field))
            private = private or result.cache_scope == "private"
            cursor = result.next_cursor
            if not isinstance(cursor, str) or not cursor:
                return items, private
            params = t.PaginatedRequestParams(cursor=cursor)

    async def call_tool(self, params: t.CallToolRequestParams, ctx: Context) -> Any:
        return await self.server.handlers["tools/call"](params, self._context(ctx))

    async def read_resource(self, params: t.ReadResourceRequestParams, ctx: Context) -> Any:
        return await self.server.handlers["resources/read"](params, self._context(ctx))

    async def get_prompt(self, params: t.GetPromptRequestParams, ctx: Context) -> Any:
        return await self.server.handlers["prompts/get"](params, self._context(ctx))

    async def complete(self, params: t.CompleteRequestParams, ctx: Context) -> Any:
        return await self.server.handlers["completion/complete"](params, self._context(ctx))

    def declared_scopes(self, method: str, target: str) -> frozenset[str]:
        return self.server.declared_scopes(method, target)


_LISTS: Final = {
    "tools": ("tools/list", "tools"),
    "resources": ("resources/list", "resources"),
    "templates": ("resources/templates/list", "resource_templates"),
    "prompts": ("prompts/list", "prompts"),
}


def _nothing() -> None:
    return None


# ---------------------------------------------------------------------- names and URIs
def check_prefix(prefix: str) -> None:
    """Refuse a prefix that cannot start a tool name (1-64 of ``A-Z a-z 0-9 _ - .``)."""
    if not isinstance(prefix, str) or _PREFIX.fullmatch(prefix) is None:
        raise ValueError(f"invalid mount prefix {prefix!r} (1-64 of A-Z a-z 0-9 _ - .)")


def prefixed_name(prefix: str, name: str) -> str:
    return f"{prefix}{SEPARATOR}{name}"


def unprefixed_name(prefix: str, name: str) -> str | None:
    """The source's own name of ``name``, or ``None`` when it is not under ``prefix``."""
    head = len(prefix) + 1
    if len(name) > head and name.startswith(prefix) and name[head - 1] == SEPARATOR:
        return name[head:]
    return None


def prefixed_uri(prefix: str, uri: str) -> str:
    """``uri`` with ``prefix/`` after its scheme (and ``//``); a string with no scheme is
    refused (``ValueError``): a resource URI has one (server/resources.mdx §Common URI
    Schemes)."""
    scheme = _SCHEME.match(uri)
    if scheme is None:
        raise ValueError(f"resource URI {uri!r} has no scheme to put the mount prefix after")
    end = scheme.end()
    return f"{uri[:end]}{prefix}/{uri[end:]}"


def unprefixed_uri(prefix: str, uri: str) -> str | None:
    """The source's own URI of ``uri``, or ``None`` when it is not under ``prefix``."""
    scheme = _SCHEME.match(uri)
    if scheme is None:
        return None
    end = scheme.end()
    if uri.startswith(prefix, end) and uri[end + len(prefix) : end + len(prefix) + 1] == "/":
        return uri[:end] + uri[end + len(prefix) + 1 :]
    return None


def unknown(kind: str, name: str) -> McpError:
    """The error of a call or get naming nothing (the same as for an unknown own name)."""
    if kind == "resources":
        return McpError(_RESOURCE_NOT_FOUND, f"Resource not found: {name}", {"uri": name})
    return McpError(INVALID_PARAMS, f"Unknown {kind[:-1]}: {name}")
