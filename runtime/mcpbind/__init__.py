"""mcpbind: a fast, strictly typed Model Context Protocol SDK generated from the official schema.

The types are ``mcpbind.types`` (the generated unified superset of every protocol version,
with ``UNSET`` for absent optional fields).

The public API is the ``__all__`` of these modules, each documented in the API reference:
``mcpbind``, ``mcpbind.types``, ``mcpbind.server``, ``mcpbind.server.tasks``,
``mcpbind.client``, ``mcpbind.http``, ``mcpbind.auth.client``, ``mcpbind.auth.server``,
``mcpbind.host``, ``mcpbind.host.tasks``, ``mcpbind.tasks``, ``mcpbind.transports``,
``mcpbind.bindings`` and ``mcpbind.versions`` (declared in ``mcpbind._api``). Modules not
listed here are internal and may change.

Every public name is imported on first use (a module ``__getattr__``, cached in the module
once resolved): ``import mcpbind`` costs nothing, ``from mcpbind import Client`` imports the
client and what it needs, and a client alone never imports the Host or the HTTP stack. The
imports below are the one list of the names (``mcpbind._lazy.lazy_package``).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpbind_types._common import RequestOptions as RequestOptions
    from mcpbind_types._common import json_object as json_object
    from mcpbind_types._common import json_value as json_value

    from . import types as types
    from .client import Client as Client
    from .client import ClientHandlers as ClientHandlers
    from .client import Subscription as Subscription
    from .client import UnsupportedVersion as UnsupportedVersion
    from .connection import ConnectionClosed as ConnectionClosed
    from .connection import PeerError as PeerError
    from .connection import RequestTimeout as RequestTimeout
    from .host import ApprovalPolicy as ApprovalPolicy
    from .host import Host as Host
    from .host import HostConfig as HostConfig
    from .host import SamplingReview as SamplingReview
    from .host import ServerConfig as ServerConfig
    from .host import ToolCallRequest as ToolCallRequest
    from .protocol import McpError as McpError
    from .protocol import UrlElicitationRequired as UrlElicitationRequired
    from .server import Context as Context
    from .server import Server as Server
    from .server import ToolExecutionError as ToolExecutionError
    from .server import serve as serve
    from .server import serve_stdio as serve_stdio
    from .server.options import CacheHint as CacheHint
    from .server.options import StatelessOptions as StatelessOptions
    from .versions import AUTO as AUTO
    from .versions import HANDSHAKE_VERSIONS as HANDSHAKE_VERSIONS
    from .versions import LATEST_HANDSHAKE as LATEST_HANDSHAKE
    from .versions import LATEST_STATELESS as LATEST_STATELESS
    from .versions import STATELESS_VERSIONS as STATELESS_VERSIONS
else:
    from ._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
