"""Events returned by ``Session.receive``: plain immutable data, no behaviour."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpbind_types._common import MethodInfo

from .errors import McpError

__all__ = [
    "Cancelled",
    "ErrorReceived",
    "Event",
    "NotificationReceived",
    "Outgoing",
    "ProgressReceived",
    "RequestId",
    "RequestReceived",
    "ResponseReceived",
]

RequestId = int | str
"""A JSON-RPC request id. ``1`` and ``"1"`` are different ids; bools are never ids."""


@dataclass(frozen=True, slots=True)
class RequestReceived:
    """The peer sent a request: answer it once with ``send_response`` or ``send_error``."""

    id: RequestId
    method: str
    params: Any
    info: MethodInfo[Any, Any]
    progress_token: str | int | None = None


@dataclass(frozen=True, slots=True)
class NotificationReceived:
    """The peer sent a notification (other than cancellation and progress)."""

    method: str
    params: Any
    info: MethodInfo[Any, Any]


@dataclass(frozen=True, slots=True)
class ResponseReceived:
    """A result for one of our pending requests (decoded as the method's wire result type)."""

    id: RequestId
    method: str
    result: Any


@dataclass(frozen=True, slots=True)
class ErrorReceived:
    """One of our pending requests failed: an error response, or a malformed response
    (:class:`~mcpbind.protocol.errors.RemoteProtocolError`)."""

    id: RequestId
    method: str
    error: McpError


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The peer cancelled one of its in-flight requests; no response will be sent for it."""

    request_id: RequestId
    reason: str | None


@dataclass(frozen=True, slots=True)
class ProgressReceived:
    """A progress notification; ``request_id`` is our pending request that carries ``token``."""

    token: str | int
    progress: float
    total: float | None
    message: str | None
    request_id: RequestId | None


@dataclass(frozen=True, slots=True)
class Outgoing:
    """Bytes the core produced on its own (error responses): write them to the peer."""

    data: bytes


Event = (
    RequestReceived
    | NotificationReceived
    | ResponseReceived
    | ErrorReceived
    | Cancelled
    | ProgressReceived
    | Outgoing
)
