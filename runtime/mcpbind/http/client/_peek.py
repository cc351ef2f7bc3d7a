"""The little an HTTP client transport must know about the messages it carries.

Transports move opaque bytes, but HTTP needs a few facts: whether an outgoing message is a
request (its answer comes back on the POST's response, and an HTTP error must become an
error response for its id), which request is ``initialize`` (replayed after a 404), and the
negotiated protocol version (the ``MCP-Protocol-Version`` header; on 2026-07-28 each request's
own ``_meta`` version, method and name, mirrored into headers). Only those fields are
decoded; everything else is skipped by msgspec without building objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from ...protocol.mcp_headers import HeaderPath, encode_value, param_headers

__all__ = [
    "Peek",
    "cancelled_request",
    "error_response",
    "header_value",
    "peek",
    "response_id",
    "result_protocol_version",
    "stateless_headers",
]

RequestId = int | str


class _PeekedMessage(msgspec.Struct):
    id: RequestId | None = None
    method: str | None = None


class _PeekedResult(msgspec.Struct):
    protocolVersion: str | None = None  # the wire name


class _PeekedResponse(msgspec.Struct):
    id: RequestId | None = None
    method: str | None = None
    result: _PeekedResult | None = None


class _CancelParams(msgspec.Struct):
    requestId: RequestId | None = None  # the wire name


class _Cancel(msgspec.Struct):
    params: _CancelParams | None = None


class _Meta(msgspec.Struct):
    protocol_version: str | None = msgspec.field(
        default=None, name="io.modelcontextprotocol/protocolVersion"
    )


class _Params(msgspec.Struct):
    name: Any = None
    uri: Any = None
    task_id: Any = msgspec.field(default=None, name="taskId")
    arguments: msgspec.Raw = msgspec.Raw(b"null")
    meta: _Meta | None = msgspec.field(default=None, name="_meta")


class _PeekedRequest(msgspec.Struct):
    params: _Params | None = None


_decode_one = msgspec.json.Decoder(_PeekedMessage | list[_PeekedMessage])
_decode_request = msgspec.json.Decoder(_PeekedRequest)
_decode_cancel = msgspec.json.Decoder(_Cancel)
_decode_response = msgspec.json.Decoder(_PeekedResponse)


@dataclass(frozen=True, slots=True)
class Peek:
    """What an outgoing message is: the ids of the requests in it, and its first method."""

    request_ids: tuple[RequestId, ...]
    method: str | None

    @property
    def is_request(self) -> bool:
        return bool(self.request_ids)


def peek(message: bytes) -> Peek:
    """Classify one outgoing message (or 2025-03-26 batch); unreadable bytes count as a
    notification, so the server, not the transport, reports what is wrong with them."""
    try:
        decoded = _decode_one.decode(message)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return Peek((), None)
    items = decoded if isinstance(decoded, list) else [decoded]
    ids = tuple(m.id for m in items if m.method is not None and m.id is not None)
    method = items[0].method if items else None
    return Peek(ids, method)


_TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


def stateless_headers(
    message: bytes,
    method: str | None,
    tool_headers: Mapping[str, list[HeaderPath]] | None = None,
) -> dict[str, str]:
    """2026-07-28 basic/transports/streamable-http.mdx §Request Metadata: a request that
    carries its protocol version in ``_meta`` (the stateless era) mirrors it, its method and
    (for tools/call, resources/read, prompts/get) its name or URI into headers; a tools/call
    of a tool in ``tool_headers`` also mirrors its ``x-mcp-header`` arguments."""
    try:
        params = _decode_request.decode(message).params
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return {}
    version = params.meta.protocol_version if params and params.meta else None
    if params is None or version is None or method is None:
        return {}
    headers = {"mcp-protocol-version": version, "mcp-method": method}
    if method in _TASK_METHODS and isinstance(params.task_id, str):
        # The tasks extension (SEP-2663 §Streamable HTTP: Routing Headers).
        headers["mcp-name"] = header_value(params.task_id)
        return headers
    target = params.uri if method == "resources/read" else params.name
    if method in ("tools/call", "resources/read", "prompts/get") and isinstance(target, str):
        headers["mcp-name"] = header_value(target)
        paths = tool_headers.get(target) if tool_headers and method == "tools/call" else None
        if paths:
            try:
                arguments = msgspec.json.decode(params.arguments)
            except (msgspec.DecodeError, RecursionError):
                arguments = None
            headers.update(param_headers(paths, arguments))
    return headers


def header_value(value: str) -> str:
    """The value as is when it is plain visible ASCII, else the ``=?base64?...?=`` form
    (§Value Encoding): no header injection, no lossy characters."""
    if value:
        return encode_value(value)
    return "=?base64??="


def cancelled_request(message: bytes) -> RequestId | None:
    """The request a ``notifications/cancelled`` message cancels."""
    try:
        decoded = _decode_cancel.decode(message)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return decoded.params.requestId if decoded.params is not None else None


def response_id(message: bytes | str) -> RequestId | None:
    """The id of an incoming response (``None`` for requests, notifications and batches)."""
    try:
        decoded = _decode_response.decode(message)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return decoded.id if decoded.method is None else None


def result_protocol_version(message: bytes | str) -> str | None:
    """``result.protocolVersion`` of an initialize response, if this is one."""
    try:
        decoded = _decode_response.decode(message)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return decoded.result.protocolVersion if decoded.result is not None else None


def error_response(request_id: RequestId, code: int, message: str, data: Any = None) -> bytes:
    """A JSON-RPC error response, so a caller waiting on ``request_id`` gets an McpError."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return msgspec.json.encode({"jsonrpc": "2.0", "id": request_id, "error": error})
