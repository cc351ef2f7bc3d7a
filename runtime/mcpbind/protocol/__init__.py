"""The sans-I/O MCP protocol core (h11 style): no I/O, no transport, no anyio.

Feed inbound bytes to :meth:`Session.receive` and act on the returned events; every ``send_*``
call returns the bytes to write. See :mod:`mcpbind.protocol.core`.
"""

from __future__ import annotations

from ._base import custom_method
from .core import BATCH_VERSIONS, Session, SessionOptions, has_capability
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
