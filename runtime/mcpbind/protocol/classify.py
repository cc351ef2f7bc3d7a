"""What an inbound message is, decided once before any session sees it (basic/versioning.mdx,
dual-era server): a request with the modern per-request ``_meta`` is a 2026-07-28 one (no
handshake, no session), ``initialize`` without it starts the handshake era, the rest goes to
the session.

One decode of the envelope (params stay raw) serves every reader: :func:`classify` for one
message (the stdio and in-memory router), :func:`classify_body` for an HTTP POST body (a
message or a 2025-03-26 batch). The params are decoded, into :class:`ParamsPeek`, only where
they matter: ``initialize``, ``notifications/cancelled`` and bodies carrying the era marker;
the peek holds what the HTTP header checks compare too, so nothing decodes them twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET, UnsetType

from .depth import DEFAULT_MAX_DEPTH, exceeds_depth, shallow_if_valid
from .errors import INVALID_REQUEST, PARSE_ERROR
from .wire import BATCH_DECODER, ENVELOPE_DECODER, Decoded, Envelope

__all__ = [
    "META_PROTOCOL_VERSION",
    "Classified",
    "Decoded",
    "Incoming",
    "MetaPeek",
    "ParamsPeek",
    "classify",
    "classify_body",
    "decoded_body",
]

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
"""The ``_meta`` key that marks a 2026-07-28 request."""
_MARKER: Final = META_PROTOCOL_VERSION.encode()


class MetaPeek(msgspec.Struct, gc=False):
    """The one ``_meta`` key read here; the rest (client info, capabilities) is skipped
    without building objects."""

    protocol_version: Any = msgspec.field(default=UNSET, name=META_PROTOCOL_VERSION)


class ParamsPeek(msgspec.Struct, gc=False):
    """The params fields the transports read; ``arguments`` stays undecoded."""

    meta: MetaPeek | None = msgspec.field(default=None, name="_meta")
    protocol_version: Any = msgspec.field(default=None, name="protocolVersion")
    request_id: Any = msgspec.field(default=None, name="requestId")
    name: Any = None
    uri: Any = None
    task_id: Any = msgspec.field(default=None, name="taskId")
    arguments: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))

    @property
    def meta_version(self) -> str | None:
        """``_meta["io.modelcontextprotocol/protocolVersion"]`` when it is a string."""
        version = self.meta.protocol_version if self.meta is not None else None
        return version if isinstance(version, str) else None

    @property
    def modern(self) -> bool:
        """Whether ``_meta`` names a protocol version at all (the 2026-07-28 marker)."""
        return self.meta is not None and self.meta.protocol_version is not UNSET


_PARAMS = msgspec.json.Decoder(ParamsPeek)


def _peek_params(raw: msgspec.Raw | UnsetType | None) -> ParamsPeek | None:
    if raw is None or isinstance(raw, UnsetType):
        return None
    try:
        return _PARAMS.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None  # not an object: the dispatcher answers Invalid params


def _valid_id(rid: object) -> bool:
    return isinstance(rid, int | str) and not isinstance(rid, bool)


# ---------------------------------------------------------------------- one message
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
    """Classify one message: a request with modern ``_meta`` (or ``server/discover``) is
    ``"stateless"``; anything malformed or nested deeper than ``max_depth`` is ``"other"``
    (the session core answers it, on the request's id when readable)."""
    if exceeds_depth(data, max_depth):
        return _OTHER
    try:
        env = ENVELOPE_DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return _OTHER  # not one JSON-RPC object (or a batch)
    method = env.method
    if isinstance(method, UnsetType) or env.jsonrpc != "2.0":
        return _OTHER
    raw = None if isinstance(env.params, UnsetType) else env.params
    if isinstance(env.id, UnsetType):
        if method == "notifications/cancelled":
            params = _peek_params(raw)
            if params is not None and _valid_id(params.request_id):
                return Incoming("cancelled", cancelled_id=params.request_id)
        return _OTHER
    rid = env.id
    if rid is None:
        return _OTHER
    params = _peek_params(raw) if method == "initialize" or _MARKER in data else None
    modern = params is not None and params.modern
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


# ---------------------------------------------------------------------- an HTTP POST body
Era = Literal["handshake", "stateless"]


@dataclass(slots=True)
class Classified:
    """A POST body, classified. ``error`` set means: refuse it (HTTP 400) with that JSON-RPC
    code and message."""

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
    #: ``_meta["io.modelcontextprotocol/protocolVersion"]`` of a 2026-07-28 request.
    meta_version: str | None = None
    #: The raw params of the body's requests, in order (kept so nothing decodes the body
    #: again).
    request_params: list[msgspec.Raw | None] = field(default_factory=list)
    #: The first request's params, decoded when they mattered here (else ``None``).
    peek: ParamsPeek | None = None
    error: tuple[int, str] | None = None
    #: The body's one message (not a batch), decoded.
    envelope: Envelope | None = None

    @property
    def params(self) -> msgspec.Raw | None:
        """The raw params of the body's first request."""
        return self.request_params[0] if self.request_params else None


def classify_body(body: bytes, max_depth: int = DEFAULT_MAX_DEPTH) -> Classified:
    """Classify a POST body without side effects (nothing is allocated beyond the result).
    A body nested deeper than ``max_depth`` is refused: before anything decodes it, unless
    its length bounds its depth (then only if it does not decode)."""
    out = Classified()
    # A body short enough for its depth is scanned only if it does not decode (depth.py).
    unscanned = shallow_if_valid(body, max_depth)
    if not unscanned and exceeds_depth(body, max_depth):
        return _refused_for_depth(out, max_depth)
    marker = _MARKER in body
    try:
        if body.lstrip()[:1] == b"[":
            out.batch = True
            items = BATCH_DECODER.decode(body)
            if not items:
                out.error = (INVALID_REQUEST, "Invalid Request: empty batch")
                return out
            envelopes = [ENVELOPE_DECODER.decode(item) for item in items]
        else:
            out.envelope = ENVELOPE_DECODER.decode(body)
            envelopes = [out.envelope]
    except msgspec.ValidationError as exc:
        if unscanned and exceeds_depth(body, max_depth):
            return _refused_for_depth(out, max_depth)
        out.error = (INVALID_REQUEST, f"Invalid Request: {exc}")
        return out
    except (msgspec.DecodeError, RecursionError) as exc:
        if unscanned and exceeds_depth(body, max_depth):
            return _refused_for_depth(out, max_depth)
        out.error = (PARSE_ERROR, f"Parse error: {exc}")
        return out
    for env in envelopes:
        reason = _fold(out, env, marker=marker)
        if reason is not None:
            out.error = (INVALID_REQUEST, reason)
            return out
    if out.meta_version is not None and not out.initialize and not out.batch:
        out.era = "stateless"
    return out


def _refused_for_depth(out: Classified, max_depth: int) -> Classified:
    out.error = (INVALID_REQUEST, f"Invalid Request: JSON nesting exceeds {max_depth} levels")
    return out


def decoded_body(body: bytes, classified: Classified) -> bytes:
    """``body`` for a session's core: as :class:`Decoded` when it is one message, so the core
    takes the classifier's envelope instead of decoding it again."""
    if classified.envelope is None:
        return body
    decoded = Decoded(body)
    decoded.envelope = classified.envelope
    return decoded


def _fold(out: Classified, env: Envelope, *, marker: bool) -> str | None:
    """Fold one message into ``out``; a reason string if it is no JSON-RPC message at all."""
    if env.jsonrpc != "2.0":
        return 'Invalid Request: "jsonrpc" must be "2.0"'
    method = env.method
    has_id = not isinstance(env.id, UnsetType)
    if isinstance(method, UnsetType):
        if has_id and not (isinstance(env.result, UnsetType) and isinstance(env.error, UnsetType)):
            return None  # a response to one of the server's requests
        return "Invalid Request: not a JSON-RPC request, notification or response"
    if not has_id:
        if method == "notifications/cancelled":
            params = _peek_params(env.params)
            if params is not None and params.request_id is not None:
                out.cancelled.append(params.request_id)
        return None
    if env.id is None:
        return "Invalid Request: a request id must be a string or an integer"
    assert not isinstance(env.id, UnsetType)
    first = not out.request_ids
    out.request_ids.append(env.id)
    out.methods.append(method)
    out.request_params.append(None if isinstance(env.params, UnsetType) else env.params)
    # Params are decoded here only when they matter to the transport.
    params = _peek_params(env.params) if method == "initialize" or marker else None
    if first:
        out.peek = params
    if method == "initialize":
        if out.batch:
            return "Invalid Request: initialize must not be part of a batch"
        out.initialize = True
        if params is not None and isinstance(params.protocol_version, str):
            out.requested_version = params.protocol_version
    if params is not None:
        version = params.meta_version
        if version is not None:
            out.meta_version = version
    return None
