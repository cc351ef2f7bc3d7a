"""Accept and decode one inbound request: the one step every request of either era passes.

A request is checked against the method table (is the method known, and a request, in this
protocol version?), the lifecycle (handshake era: nothing but ``initialize`` and ``ping``
before the handshake), our declared capabilities (a method whose capability we did not declare
is ``-32601``), and its params are decoded into their typed form. A refusal is an
:class:`McpError` with the code and message the client sees.

The handshake era runs it with the negotiated version and the session's lifecycle state
(:class:`mcpbind.protocol.core.Session`); the 2026-07-28 era (basic/versioning.mdx,
stateless) with the version and capabilities each request carries in ``_meta``
(:class:`StatelessMethodTable`), on a connection (through the same ``Session``) or without one (one
HTTP POST, :func:`mcpbind.server.dispatch.answer`); the 2025 sessionless HTTP mode with the
method table of the version its POST names (:class:`MethodTable`), also through ``answer``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from mcpbind_types._common import MethodInfo, decoder

from .capabilities import has_capability
from .depth import DEFAULT_MAX_META_BYTES, meta_too_large
from .errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    validation_message,
)
from .meta import PROTOCOL_VERSION, RequestMeta, parse_request_meta
from .wire_view import KnownMetas, wire_decoder

__all__ = [
    "EMPTY_PARAMS",
    "Accepted",
    "MethodTable",
    "StatelessMethodTable",
    "capability_refusal",
    "decode_params",
    "is_modern",
    "meta_of",
    "peek_meta",
    "read_meta",
]

Accepted = tuple[MethodInfo[Any, Any], "msgspec.json.Decoder[Any] | None"]
"""A request's table row and its params decoder (``None``: the method takes no params)."""

DISCOVER: Final = "server/discover"

EMPTY_PARAMS: Final = b"{}"
"""What absent params decode as."""


class _MetaOnly(msgspec.Struct):
    meta: Any = msgspec.field(default=None, name="_meta")


_META_ONLY = msgspec.json.Decoder(_MetaOnly)


def capability_refusal(
    info: MethodInfo[Any, Any], role: str, local_caps: Mapping[str, Any] | None
) -> McpError | None:
    """``-32601`` for a method we serve under a capability we did not declare."""
    if (
        info.capability is not None
        and info.capability_owner == role
        and not has_capability(local_caps, info.capability)
    ):
        cap = ".".join(info.capability)
        return McpError(
            METHOD_NOT_FOUND, f"Method not found: {info.method} (capability {cap!r} not declared)"
        )
    return None


def decode_params(accepted: Accepted, raw: msgspec.Raw | bytes | Any, max_meta_bytes: int) -> Any:
    """The request's typed params, or the ``-32602``/``-32700`` refusal raised."""
    params_decoder = accepted[1]
    if (
        type(raw) in (msgspec.Raw, bytes)
        and len(raw) > max_meta_bytes
        and meta_too_large(raw, max_meta_bytes)
    ):
        raise McpError(INVALID_PARAMS, f"Invalid params: _meta exceeds {max_meta_bytes} bytes")
    if params_decoder is None:
        return None
    try:
        return params_decoder.decode(EMPTY_PARAMS if raw is msgspec.UNSET else raw)
    except msgspec.ValidationError as exc:
        message = f"Invalid params: {validation_message(exc, 'params')}"
        raise McpError(INVALID_PARAMS, message) from None
    except (msgspec.DecodeError, RecursionError) as exc:
        # Invalid UTF-8 makes the text not JSON at all; a number out of range is valid JSON
        # that the params cannot hold.
        if "UTF-8" in str(exc):
            raise McpError(PARSE_ERROR, f"Parse error: {exc}") from None
        message = f"Invalid params: {str(exc).replace('at `$', 'at `$.params')}"
        raise McpError(INVALID_PARAMS, message) from None


def meta_of(params: Any) -> Any:
    """The ``_meta`` of decoded params (a Struct's ``meta`` or a dict's ``"_meta"``)."""
    if type(params) is dict:
        return params.get("_meta")
    return getattr(params, "meta", None)


def peek_meta(raw: msgspec.Raw | bytes | Any) -> Any:
    """The ``_meta`` of raw params that did not decode as their method's params."""
    if type(raw) not in (msgspec.Raw, bytes):
        return None
    try:
        return _META_ONLY.decode(raw).meta
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None


def read_meta(raw: msgspec.Raw | bytes) -> Any:
    """The ``_meta`` of raw params, with what keeps it from being read raised: ``-32700``
    for text that is not JSON, ``-32602`` for params that are not an object."""
    try:
        return _META_ONLY.decode(raw).meta
    except msgspec.ValidationError:
        raise McpError(INVALID_PARAMS, "Invalid params: params must be an object") from None
    except (msgspec.DecodeError, RecursionError) as exc:
        raise McpError(PARSE_ERROR, f"Parse error: {exc}") from None


def is_modern(meta: Any) -> bool:
    """Whether a request's ``_meta`` names its protocol version: a 2026-07-28 request."""
    return type(meta) is dict and PROTOCOL_VERSION in meta


class MethodTable:
    """The requests a server accepts at some protocol versions under some capabilities,
    with the accepted methods cached (built once per server, version and capability set)."""

    __slots__ = ("_accepted", "capabilities", "table", "versions")

    def __init__(
        self,
        table: Mapping[str, MethodInfo[Any, Any]],
        versions: tuple[str, ...],
        capabilities: Mapping[str, Any],
    ) -> None:
        self.table = table
        self.versions = versions
        self.capabilities = capabilities
        self._accepted: dict[str, Accepted] = {}

    def accept(self, method: str) -> Accepted:
        """The method's row and params decoder, or the ``-32601`` refusal raised."""
        accepted = self._accepted.get(method)
        if accepted is not None:
            return accepted
        info = self.table.get(method)
        if (
            info is None
            or info.kind != "request"
            or (info.versions and not any(v in info.versions for v in self.versions))
        ):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
        refusal = capability_refusal(info, "server", self.capabilities)
        if refusal is not None:
            raise refusal
        accepted = info, None if info.params_type is None else decoder(info.params_type)
        self._accepted[method] = accepted
        return accepted


class StatelessMethodTable(MethodTable):
    """What a server accepts on the 2026-07-28 era: its versions, whether it also offers the
    handshake, and its capabilities as that era sees them; with the accepted methods cached
    (built once per server and capability set, shared by all its connections)."""

    __slots__ = ("_known", "_usual", "handshake", "supported")

    def __init__(
        self,
        table: Mapping[str, MethodInfo[Any, Any]],
        versions: tuple[str, ...],
        supported: tuple[str, ...],
        capabilities: Mapping[str, Any],
        handshake: bool,
    ) -> None:
        #: The stateless versions served; ``supported``: every version (the -32022 data).
        super().__init__(table, versions, capabilities)
        self.supported = supported
        self.handshake = handshake
        #: Methods served before whose params have a wire view (their usual requests' way).
        self._usual: dict[str, tuple[MethodInfo[Any, Any], msgspec.json.Decoder[Any]]] = {}
        self._known = KnownMetas()

    def request_meta(self, meta: Any) -> RequestMeta:
        """The checked ``_meta`` of a request: ``-32602`` when malformed, ``-32022`` for a
        version this server does not serve (basic/versioning.mdx)."""
        parsed = parse_request_meta(meta)
        if parsed.protocol_version not in self.versions:
            raise McpError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": list(self.supported), "requested": parsed.protocol_version},
            )
        return parsed

    def decode(
        self,
        method: str,
        raw: msgspec.Raw | bytes | Any,
        max_meta_bytes: int = DEFAULT_MAX_META_BYTES,
    ) -> tuple[MethodInfo[Any, Any], Any, RequestMeta] | None:
        """Accept and decode one request of this era: its row, params and checked ``_meta``;
        ``None`` when it is no 2026-07-28 request at all (no version in its ``_meta``, and not
        ``server/discover``); a refusal is raised: an unknown method first, then a malformed
        ``_meta`` or an unsupported version, then an undeclared capability or invalid params."""
        usual = self._usual.get(method)
        if usual is not None and type(raw) is msgspec.Raw and len(raw) <= max_meta_bytes:
            # The usual request, a method served before with params that decode (wire_view):
            # the same steps as below without their refusal paths (any failure takes those).
            try:
                params = usual[1].decode(raw)
            except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                pass
            else:
                meta = params.meta
                parsed = self._known.lookup(meta) if type(meta) is msgspec.Raw else None
                if parsed is not None and parsed.protocol_version in self.versions:
                    return usual[0], params, parsed
        try:
            accepted = self.accept(method)
        except McpError:
            meta = peek_meta(raw)
            if method != DISCOVER and not is_modern(meta):
                return None
            if method in self.table:  # known, but not declared: what is wrong with _meta first
                self.request_meta(meta)
            raise
        try:
            params = decode_params(accepted, raw, max_meta_bytes)
        except McpError:
            meta = peek_meta(raw)
            if method != DISCOVER and not is_modern(meta):
                return None
            self.request_meta(meta)  # a malformed _meta or a wrong version is said first
            raise
        meta = meta_of(params)
        if method != DISCOVER and not is_modern(meta):
            return None
        checked = self.request_meta(meta)
        if method not in self._usual:
            view = wire_decoder(accepted[0].params_type)
            if view is not None:
                self._usual[method] = accepted[0], view
        return accepted[0], params, checked
