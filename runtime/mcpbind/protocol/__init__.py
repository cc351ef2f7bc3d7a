"""The sans-I/O MCP protocol core (h11 style): no I/O, no transport, no anyio.

Feed inbound bytes to :meth:`Session.receive` and act on the returned events; every ``send_*``
call returns the bytes to write. See :mod:`mcpbind.protocol.core`.

Every name is imported from its module at its first use (a module ``__getattr__``), so code
that needs only the errors (a server's handlers, ``McpError``) does not import the session
machinery (issue 15, cold start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:
    from .capabilities import has_capability
    from .core import BATCH_VERSIONS, Session, SessionOptions
    from .custom import custom_method
    from .depth import DEFAULT_MAX_DEPTH, exceeds_depth
    from .errors import (
        CONNECTION_CLOSED,
        HEADER_MISMATCH,
        INTERNAL_ERROR,
        INVALID_PARAMS,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        PARSE_ERROR,
        REQUEST_TIMEOUT,
        RESOURCE_NOT_FOUND,
        UNSUPPORTED_PROTOCOL_VERSION,
        URL_ELICITATION_REQUIRED,
        LocalProtocolError,
        McpError,
        RemoteProtocolError,
        UrlElicitationRequired,
        error_for_exception,
    )
    from .events import (
        Cancelled,
        ErrorReceived,
        Event,
        NotificationReceived,
        Outgoing,
        ProgressReceived,
        RequestId,
        RequestReceived,
        ResponseReceived,
    )
    from .state import State, Transition

#: Where each name lives (the TYPE_CHECKING imports above say the same; a test checks it).
_HOMES = {
    ".capabilities": ("has_capability",),
    ".core": (
        "BATCH_VERSIONS",
        "Session",
        "SessionOptions",
    ),
    ".custom": ("custom_method",),
    ".depth": (
        "DEFAULT_MAX_DEPTH",
        "exceeds_depth",
    ),
    ".errors": (
        "CONNECTION_CLOSED",
        "HEADER_MISMATCH",
        "INTERNAL_ERROR",
        "INVALID_PARAMS",
        "INVALID_REQUEST",
        "METHOD_NOT_FOUND",
        "MISSING_REQUIRED_CLIENT_CAPABILITY",
        "PARSE_ERROR",
        "REQUEST_TIMEOUT",
        "RESOURCE_NOT_FOUND",
        "UNSUPPORTED_PROTOCOL_VERSION",
        "URL_ELICITATION_REQUIRED",
        "LocalProtocolError",
        "McpError",
        "RemoteProtocolError",
        "UrlElicitationRequired",
        "error_for_exception",
    ),
    ".events": (
        "Cancelled",
        "ErrorReceived",
        "Event",
        "NotificationReceived",
        "Outgoing",
        "ProgressReceived",
        "RequestId",
        "RequestReceived",
        "ResponseReceived",
    ),
    ".state": (
        "State",
        "Transition",
    ),
}
__getattr__ = lazy_attributes(
    __name__, {name: module for module, names in _HOMES.items() for name in names}, globals()
)

__all__ = [
    "BATCH_VERSIONS",
    "CONNECTION_CLOSED",
    "DEFAULT_MAX_DEPTH",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "Cancelled",
    "ErrorReceived",
    "Event",
    "LocalProtocolError",
    "McpError",
    "NotificationReceived",
    "Outgoing",
    "ProgressReceived",
    "RemoteProtocolError",
    "RequestId",
    "RequestReceived",
    "ResponseReceived",
    "Session",
    "SessionOptions",
    "State",
    "Transition",
    "UrlElicitationRequired",
    "custom_method",
    "error_for_exception",
    "exceeds_depth",
    "has_capability",
]
