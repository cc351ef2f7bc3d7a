"""What a POST body is, decided once before any session is looked up or created.

This is the seam between protocol eras: ``classify_post`` tells a handshake-era message
(2024-11-05 .. 2025-11-25: ``initialize`` then an ``Mcp-Session-Id``) from a 2026-07-28
stateless one (every request carries ``_meta["io.modelcontextprotocol/protocolVersion"]``, no
session), so the application can hand the latter to its own path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from ..protocol._wire import BATCH_DECODER, ENVELOPE_DECODER, Envelope
from ..protocol.depth import DEFAULT_MAX_DEPTH, exceeds_depth
from ..protocol.errors import INVALID_REQUEST, PARSE_ERROR

__all__ = ["META_PROTOCOL_VERSION", "Classified", "classify_post"]

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
"""The ``_meta`` key that marks a 2026-07-28 stateless request."""

Era = Literal["handshake", "stateless"]


class _Params(msgspec.Struct, gc=False):
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")
    protocol_version: str | UnsetType = msgspec.field(default=UNSET, name="protocolVersion")
    request_id: Any = msgspec.field(default=UNSET, name="requestId")


_PARAMS = msgspec.json.Decoder(_Params)


@dataclass(slots=True)
class Classified:
    """A POST body, classified. ``error`` set means: answer it with that HTTP status."""

    era: Era = "handshake"
    batch: bool = False
    #: Ids of the requests in the body (their responses go back on this POST).
    request_ids: list[int | str] = field(default_factory=list)
    #: Methods of those requests, in order.
    methods: list[str] = field(default_factory=list)
    #: The body is a single ``initialize`` request; its requested version.
    initialize: bool = False
    requested_version: str | None = None
    #: Request ids named by ``notifications/cancelled`` in the body.
    cancelled: list[Any] = field(default_factory=list)
    #: ``_meta["io.modelcontextprotocol/protocolVersion"]`` of a stateless-era request.
    meta_version: str | None = None
    #: The raw params of the body's first request (kept so nothing decodes the body again).
    params: msgspec.Raw | None = None
    error: tuple[int, int, str] | None = None


def _params(env: Envelope) -> _Params | None:
    if isinstance(env.params, UnsetType):
        return None
    try:
        return _PARAMS.decode(env.params)
    except (msgspec.DecodeError, RecursionError):
        return None  # not an object: the session answers Invalid params


def _add(out: Classified, env: Envelope, *, batch: bool, era_marker: bool) -> str | None:
    """Fold one message into ``out``; a reason string if it is no JSON-RPC message at all."""
    if env.jsonrpc != "2.0":
        return 'Invalid Request: "jsonrpc" must be "2.0"'
    has_method = not isinstance(env.method, UnsetType)
    has_id = not isinstance(env.id, UnsetType)
    if has_method:
        if has_id:
            if env.id is None:
                return "Invalid Request: a request id must be a string or an integer"
            assert isinstance(env.id, int | str)
            if not out.request_ids and not isinstance(env.params, UnsetType):
                out.params = env.params
            out.request_ids.append(env.id)
            out.methods.append(env.method)  # type: ignore[arg-type]
            # Params are decoded here only when they matter to the transport.
            params = _params(env) if env.method == "initialize" or era_marker else None
            if env.method == "initialize":
                if batch:
                    return "Invalid Request: initialize must not be part of a batch"
                out.initialize = True
                if params is not None and isinstance(params.protocol_version, str):
                    out.requested_version = params.protocol_version
            if params is not None and not isinstance(params.meta, UnsetType):
                version = params.meta.get(META_PROTOCOL_VERSION)
                if isinstance(version, str):
                    out.meta_version = version
        elif env.method == "notifications/cancelled":
            params = _params(env)
            if params is not None and params.request_id is not UNSET:
                out.cancelled.append(params.request_id)
        return None
    if has_id and (not isinstance(env.result, UnsetType) or not isinstance(env.error, UnsetType)):
        return None  # a response to one of the server's requests
    return "Invalid Request: not a JSON-RPC request, notification or response"


def classify_post(body: bytes, max_depth: int = DEFAULT_MAX_DEPTH) -> Classified:
    """Classify a POST body without side effects (nothing is allocated beyond the result).
    A body nested deeper than ``max_depth`` is refused before anything decodes it."""
    out = Classified()
    if body.count(b"[") + body.count(b"{") > max_depth and exceeds_depth(body, max_depth):
        message = f"Invalid Request: JSON nesting exceeds {max_depth} levels"
        out.error = (400, INVALID_REQUEST, message)
        return out
    era_marker = META_PROTOCOL_VERSION.encode() in body
    stripped = body.lstrip()
    try:
        if stripped[:1] == b"[":
            out.batch = True
            items = BATCH_DECODER.decode(body)
            if not items:
                out.error = (400, INVALID_REQUEST, "Invalid Request: empty batch")
                return out
            envelopes = [ENVELOPE_DECODER.decode(item) for item in items]
        else:
            envelopes = [ENVELOPE_DECODER.decode(body)]
    except msgspec.ValidationError as exc:
        out.error = (400, INVALID_REQUEST, f"Invalid Request: {exc}")
        return out
    except (msgspec.DecodeError, RecursionError) as exc:
        out.error = (400, PARSE_ERROR, f"Parse error: {exc}")
        return out
    for env in envelopes:
        reason = _add(out, env, batch=out.batch, era_marker=era_marker)
        if reason is not None:
            out.error = (400, INVALID_REQUEST, reason)
            return out
    if out.meta_version is not None and not out.initialize and not out.batch:
        out.era = "stateless"
    return out
