"""Tell, from one inbound message, which era it belongs to (basic/versioning.mdx, dual-era
server): a request with modern per-request ``_meta`` (or ``server/discover``) is stateless;
``initialize`` without it starts the handshake era; everything else is left to the session.
Used by the stdio/in-memory router and meant for the HTTP endpoint too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from ..protocol.depth import DEFAULT_MAX_DEPTH, exceeds_depth
from .meta import PROTOCOL_VERSION

__all__ = ["Incoming", "classify"]


class _Peek(msgspec.Struct):
    jsonrpc: Any = None
    id: Any = msgspec.UNSET
    method: Any = None
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class _PeekParams(msgspec.Struct):
    meta: Any = msgspec.field(default=None, name="_meta")
    request_id: Any = msgspec.field(default=None, name="requestId")
    protocol_version: Any = msgspec.field(default=None, name="protocolVersion")


_PEEK = msgspec.json.Decoder(_Peek)
_PEEK_PARAMS = msgspec.json.Decoder(_PeekParams)

Kind = Literal["stateless", "initialize", "cancelled", "other"]


@dataclass(frozen=True, slots=True)
class Incoming:
    """``kind`` and, where it applies, the request's id, method and raw params, the id a
    ``notifications/cancelled`` names, or the version an ``initialize`` asks for."""

    kind: Kind
    id: int | str | None = None
    method: str | None = None
    params: msgspec.Raw | None = None
    cancelled_id: int | str | None = None
    requested_version: str | None = None


_OTHER = Incoming("other")


def classify(data: bytes, max_depth: int = DEFAULT_MAX_DEPTH) -> Incoming:
    """Classify one message; anything malformed or nested deeper than ``max_depth`` is
    ``"other"`` (the session core answers it, on the request's id when readable)."""
    if data.count(b"[") + data.count(b"{") > max_depth and exceeds_depth(data, max_depth):
        return _OTHER
    try:
        env = _PEEK.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return _OTHER  # not one JSON object (or a batch)
    method = env.method
    if not isinstance(method, str) or env.jsonrpc != "2.0":
        return _OTHER
    raw = None if isinstance(env.params, msgspec.UnsetType) else env.params
    params = _peek_params(raw)
    modern = (
        params is not None and isinstance(params.meta, dict) and PROTOCOL_VERSION in params.meta
    )
    if env.id is msgspec.UNSET:
        if method == "notifications/cancelled" and params is not None:
            rid = params.request_id
            if isinstance(rid, int | str) and not isinstance(rid, bool):
                return Incoming("cancelled", cancelled_id=rid)
        return _OTHER
    rid = env.id
    if not isinstance(rid, int | str) or isinstance(rid, bool):
        return _OTHER
    if method == "initialize" and not modern:
        version = params.protocol_version if params is not None else None
        return Incoming(
            "initialize",
            rid,
            method,
            raw,
            requested_version=version if isinstance(version, str) else None,
        )
    if method == "server/discover" or modern:
        return Incoming("stateless", rid, method, raw)
    return _OTHER


def _peek_params(raw: msgspec.Raw | None) -> _PeekParams | None:
    if raw is None:
        return None
    try:
        return _PEEK_PARAMS.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
