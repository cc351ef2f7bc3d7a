"""Events returned by ``Session.receive``: plain immutable data, no behaviour.

They are frozen msgspec Structs rather than frozen dataclasses: one is made per message, and a
Struct is built in C where a frozen dataclass sets each field through ``object.__setattr__``.
"""

from __future__ import annotations

from typing import Any

import msgspec

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


class RequestReceived(msgspec.Struct, frozen=True):
    """The peer sent a request: answer it once with ``send_response`` or ``send_error``."""

    id: RequestId
    method: str
    params: Any
    info: MethodInfo[Any, Any]
    progress_token: str | int | None = None
    #: A 2026-07-28 request's checked ``_meta`` (``mcpbind.protocol.meta.RequestMeta``): it
    #: carries its own version and client capabilities. ``None`` on the handshake era.
    meta: Any = None


class NotificationReceived(msgspec.Struct, frozen=True):
    """The peer sent a notification (other than cancellation and progress)."""

    method: str
    params: Any
    info: MethodInfo[Any, Any]


class ResponseReceived(msgspec.Struct, frozen=True):
    """A result for one of our pending requests (decoded as the method's wire result type)."""

    id: RequestId
    method: str
    result: Any


class ErrorReceived(msgspec.Struct, frozen=True):
    """One of our pending requests failed: an error response, or a malformed response
    (:class:`~mcpbind.protocol.errors.RemoteProtocolError`)."""

    id: RequestId
    method: str
    error: McpError


class Cancelled(msgspec.Struct, frozen=True):
    """The peer cancelled one of its in-flight requests; no response will be sent for it."""

    request_id: RequestId
    reason: str | None


class ProgressReceived(msgspec.Struct, frozen=True):
    """A progress notification; ``request_id`` is our pending request that carries ``token``."""

    token: str | int
    progress: float
    total: float | None
    message: str | None
    request_id: RequestId | None


class Outgoing(msgspec.Struct, frozen=True):
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
