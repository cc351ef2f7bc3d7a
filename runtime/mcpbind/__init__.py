"""mcpbind: a fast, strictly typed Model Context Protocol SDK generated from the official schema.

The types are ``mcpbind.types`` (the generated unified superset of every protocol version,
with ``UNSET`` for absent optional fields).

Every public name is imported on first use (a module ``__getattr__``, cached in the module
once resolved): ``import mcpbind`` costs nothing, ``from mcpbind import Client`` imports the
client and what it needs, and a client alone never imports the Host or the HTTP stack.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpbind_types._common import RequestOptions, json_object, json_value

    from . import types
    from .client import Client, ClientHandlers, Subscription, UnsupportedVersion
    from .connection import ConnectionClosed, PeerError, RequestTimeout
    from .host import (
        ApprovalPolicy,
        Host,
        HostConfig,
        SamplingReview,
        ServerConfig,
        ToolCallRequest,
    )
    from .protocol import McpError, UrlElicitationRequired
    from .server import Context, Server, ToolExecutionError, serve, serve_stdio
    from .server.options import CacheHint, StatelessOptions
    from .versions import (
        AUTO,
        HANDSHAKE_VERSIONS,
        LATEST_HANDSHAKE,
        LATEST_STATELESS,
        STATELESS_VERSIONS,
    )

#: Where each public name lives: the module imported when the name is first used (the
#: TYPE_CHECKING imports above say the same for type checkers; a test checks they agree).
_HOMES: dict[str, tuple[str, ...]] = {
    "mcpbind_types._common": ("RequestOptions", "json_object", "json_value"),
    "mcpbind.client": ("Client", "ClientHandlers", "Subscription", "UnsupportedVersion"),
    "mcpbind.host": (
        "ApprovalPolicy",
        "Host",
        "HostConfig",
        "SamplingReview",
        "ServerConfig",
        "ToolCallRequest",
    ),
    "mcpbind.protocol": ("McpError", "UrlElicitationRequired"),
    "mcpbind.server": ("Context", "Server", "ToolExecutionError", "serve", "serve_stdio"),
    "mcpbind.connection": ("ConnectionClosed", "PeerError", "RequestTimeout"),
    "mcpbind.server.options": ("CacheHint", "StatelessOptions"),
    "mcpbind.versions": (
        "AUTO",
        "HANDSHAKE_VERSIONS",
        "LATEST_HANDSHAKE",
        "LATEST_STATELESS",
        "STATELESS_VERSIONS",
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}
_SUBMODULES = frozenset(("types",))


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is not None:
        value = getattr(import_module(module), name)
    elif name in _SUBMODULES:
        value = import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # found once: later lookups never reach __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AUTO",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE",
    "LATEST_STATELESS",
    "STATELESS_VERSIONS",
    "CacheHint",
    "StatelessOptions",
    "Subscription",
    "ApprovalPolicy",
    "Host",
    "HostConfig",
    "SamplingReview",
    "ServerConfig",
    "ToolCallRequest",
    "Client",
    "ClientHandlers",
    "ConnectionClosed",
    "Context",
    "McpError",
    "PeerError",
    "RequestOptions",
    "RequestTimeout",
    "Server",
    "ToolExecutionError",
    "UnsupportedVersion",
    "UrlElicitationRequired",
    "serve",
    "serve_stdio",
    "json_object",
    "json_value",
    "types",
]
