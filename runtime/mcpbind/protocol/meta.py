"""The per-request ``_meta`` fields of the stateless era (basic/index.mdx, General fields).

Every 2026-07-28 request carries its protocol version and the client's capabilities in
``params._meta``; the server answers with its identity in each result's ``_meta``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo

from .errors import INVALID_PARAMS, McpError

__all__ = [
    "CLIENT_CAPABILITIES",
    "MalformedMeta",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "RequestMeta",
    "is_id",
    "parse_request_meta",
    "progress_token",
    "usual_request_meta",
    "with_meta",
]

PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"

_LEVELS: Final = frozenset(
    ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
)


class MalformedMeta(McpError):
    """-32602 for a request without the required ``_meta`` fields (HTTP: 400 Bad Request)."""

    def __init__(self, message: str) -> None:
        super().__init__(INVALID_PARAMS, message)


def progress_token(meta: Any) -> int | str | None:
    """The ``progressToken`` of a request's ``_meta`` (a dict, or anything else: none); one
    that is not an id (a bool, a float, an object) counts as none."""
    token = meta.get("progressToken") if type(meta) is dict else None
    return token if token is None or is_id(token) else None


def is_id(value: object) -> bool:
    """Whether ``value`` is a JSON-RPC id or a progress token: a string or an integer, not a bool."""
    kind = type(value)
    if kind is int or kind is str:  # the usual case, without the isinstance walk
        return True
    if value is None:  # no progress token: the other usual case
        return False
    return isinstance(value, int | str) and not isinstance(value, bool)


class RequestMeta(msgspec.Struct, frozen=True, gc=False):
    """The protocol fields of one request's ``_meta``, checked (a Struct: made on every
    2026-07-28 request, several times cheaper than a frozen dataclass)."""

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    log_level: str | None
    raw: dict[str, Any]
    #: The request's ``progressToken`` when it is an id (``None``: none, or not an id).
    progress_token: int | str | None = None


def usual_request_meta(meta: dict[str, Any]) -> RequestMeta | None:
    """The checked ``_meta`` of the usual request, decoded JSON with every protocol field
    well-formed (used as it is: no copy per request); ``None`` for anything else, which
    :func:`parse_request_meta` then refuses or accepts with its reasons."""
    version = meta.get(PROTOCOL_VERSION)
    caps = meta.get(CLIENT_CAPABILITIES)
    info = meta.get(CLIENT_INFO)
    level = meta.get(LOG_LEVEL)
    if (
        type(version) is str
        and type(caps) is dict
        and (level is None or (type(level) is str and level in _LEVELS))
        and (info is None or type(info) is dict)
    ):
        return RequestMeta(version, caps, info, level, meta, progress_token(meta))
    return None


def parse_request_meta(meta: Any) -> RequestMeta:
    """Check the required fields; a request missing one is malformed: -32602 (basic/index.mdx).

    The version itself is checked by the caller (an unsupported one is -32022, not -32602).
    """
    if type(meta) is dict:
        usual = usual_request_meta(meta)
        if usual is not None:
            return usual
    if not isinstance(meta, Mapping):
        raise MalformedMeta("Invalid params: _meta with the protocol fields is required")
    version = meta.get(PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise MalformedMeta(f"Invalid params: _meta[{PROTOCOL_VERSION!r}] is required")
    caps = meta.get(CLIENT_CAPABILITIES)
    if not isinstance(caps, Mapping):
        raise MalformedMeta(f"Invalid params: _meta[{CLIENT_CAPABILITIES!r}] must be an object")
    info = meta.get(CLIENT_INFO)
    level = meta.get(LOG_LEVEL)
    if level is not None and (not isinstance(level, str) or level not in _LEVELS):
        raise MalformedMeta(f"Invalid params: unknown log level {level!r}")
    return RequestMeta(
        version,
        dict(caps),
        dict(info) if isinstance(info, Mapping) else None,
        level,
        dict(meta),
        progress_token(meta),
    )


_SETTABLE_META: dict[type, bool] = {}
"""Per params Struct type: whether a copy's ``meta`` can be set (not frozen, has the field);
one entry per type, found on first use."""


def with_meta(
    info: MethodInfo[Any, Any],
    params: Any,
    fields: Mapping[str, Any],
    encoded: msgspec.Raw | None = None,
) -> Any:
    """``params`` with ``fields`` merged into its ``_meta`` (caller's own keys win).

    ``encoded``: ``fields`` already encoded as JSON (a client's per-request fields are the same
    on every request); sent as the whole ``_meta`` when the params carry none of their own,
    instead of encoding the same object again on every request."""
    if params is None:
        if info.params_type in (None, dict[str, Any]):
            return {"_meta": dict(fields) if encoded is None else encoded}
        try:
            return info.params_type(meta=dict(fields) if encoded is None else encoded)
        except TypeError:
            return {"_meta": dict(fields)}
    kind = type(params)
    settable = _SETTABLE_META.get(kind)
    if settable is None and isinstance(params, msgspec.Struct):  # a plain isinstance: no ABC
        settable = _SETTABLE_META[kind] = (
            not kind.__struct_config__.frozen and "meta" in kind.__struct_fields__
        )
    if settable is not None:  # a Struct: the usual case
        current = getattr(params, "meta", msgspec.UNSET)
        if current is msgspec.UNSET or current is None:
            meta: Any = dict(fields) if encoded is None else encoded
        else:
            meta = {**fields, **current}
        if not settable:
            return msgspec.structs.replace(params, meta=meta)
        # A copy with the new ``_meta``: the caller's params stay as they were, and are not
        # validated again (``replace`` runs ``__post_init__``).
        copied: Any = params.__copy__()
        copied.meta = meta
        return copied
    if isinstance(params, Mapping):
        own = params.get("_meta")
        if not own and encoded is not None:
            return {**params, "_meta": encoded}
        return {**params, "_meta": {**fields, **(own or {})}}
    current = getattr(params, "meta", msgspec.UNSET)
    if current is msgspec.UNSET or current is None:
        return msgspec.structs.replace(params, meta=dict(fields))
    return msgspec.structs.replace(params, meta={**fields, **current})


def capabilities_dict(caps: t.ClientCapabilities | t.ServerCapabilities) -> dict[str, Any]:
    value = msgspec.to_builtins(caps)
    assert isinstance(value, dict)
    return value
