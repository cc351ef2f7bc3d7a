"""The 2026-07-28 request pipeline: one request with its per-request ``_meta``, the result
cache, multi round-trip input rounds (basic/patterns/mrtr.mdx), re-issue of a request whose
response stream broke, and the HeaderMismatch retry of tools/call. Imported when a client
negotiates the stateless era; a handshake-era client never loads it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

import msgspec
from msgspec import UNSET

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, RequestOptions

from ..connection import Connection, PeerError
from ..protocol import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    RemoteProtocolError,
)
from ..protocol.meta import LOG_LEVEL, PROTOCOL_VERSION, with_meta
from ..transports.lost import STREAM_LOST
from .cache import CACHED_METHODS, ResultCache
from .handlers import answer_inputs
from .negotiation import mutual_version, use_version
from .tool_headers import reread_tools, vet_tools

if TYPE_CHECKING:
    from .client import Client

__all__ = ["send", "stateless_request", "stream_lost", "with_version"]

logger = logging.getLogger("mcpbind.client")


async def stateless_request(
    client: Client, method: MethodInfo[Any, Any], params: Any, options: RequestOptions | None
) -> Any:
    """One request on 2026-07-28: ``_meta``, the cache, and the MRTR retry loop."""
    name = method.method
    meta = client._meta_wire
    if (
        name in client._plain
        and meta is not None
        and type(params) is method.params_type
        and params.meta is UNSET
    ):
        # The usual request (a tool call), in the fewest steps: a plain method whose params
        # carry no ``_meta`` of their own (with_meta(...), inlined: a copy carrying the
        # client's encoded fields).
        wire = params.__copy__()
        wire.meta = meta[1]
        conn = client.connection
        assert conn is not None  # a method is plain once sent on this connection
        try:
            result = await conn.request(name, wire, options)
        except PeerError as exc:
            result = await _retry_round(client, name, wire, options, exc)
        if type(result) is method.result_type and result.result_type == "complete":
            return result
        return await _rounds(client, method, params, wire, options, None, result)
    conn = client.connection
    if conn is None:
        conn = client._conn()  # raises: not connected
    if name not in client._sendable:  # checked once per method and connection
        if name in _NOT_SENT_AS_IS:
            return await _special(client, conn, method, params)
        if method.versions and client.protocol_version not in method.versions:
            raise McpError(
                METHOD_NOT_FOUND, f"{name} is not part of protocol {client.protocol_version}"
            )
        client._sendable.add(name)
        if _is_plain(method):
            client._plain.add(name)
    cache = client.cache if name in CACHED_METHODS and ResultCache.cacheable(name, params) else None
    if cache is not None:
        hit = cache.get(name, params)
        if hit is not None:
            return hit
    wire = with_meta(method, params, *_request_meta(client))
    try:
        result = await conn.request(name, wire, options)
    except PeerError as exc:
        result = await _retry_round(client, name, wire, options, exc)
    return await _rounds(client, method, params, wire, options, cache, result)


async def _rounds(
    client: Client,
    method: MethodInfo[Any, Any],
    params: Any,
    wire: Any,
    options: RequestOptions | None,
    cache: ResultCache | None,
    result: Any,
) -> Any:
    """The request's answer ``result`` checked, and its input rounds (mrtr.mdx) until it is
    complete: a new round answers the server's input requests."""
    name = method.method
    rounds = 0
    while True:
        kind = getattr(result, "result_type", UNSET)
        if kind == "complete" and type(result) not in _LOOKED_AT:  # the usual result
            if cache is not None and rounds == 0:
                cache.put(name, params, result)
            return result
        if isinstance(result, t.InputRequiredResult):
            rounds += 1
            if rounds > client.max_input_rounds:
                raise McpError(
                    INTERNAL_ERROR, f"{name} still needs input after {rounds - 1} rounds"
                )
            requests = result.input_requests
            handlers = client.handlers
            conn = client._conn()
            responses = await answer_inputs(
                requests if isinstance(requests, dict) else {},
                sampling=handlers.sampling,
                elicitation=handlers.elicitation,
                roots=client._roots if handlers.roots is not None else None,
                caps=conn.core.local_capabilities,
            )
            # mrtr.mdx, Client Requirements: echo requestState exactly (or omit it); the
            # retry is a new request with a new id.
            wire = msgspec.structs.replace(
                wire,
                input_responses=responses if responses else UNSET,
                request_state=result.request_state,
            )
            try:
                result = await conn.request(name, wire, options)
            except PeerError as exc:
                result = await _retry_round(client, name, wire, options, exc)
            continue
        if kind != "complete" and kind is not UNSET:
            # basic/index.mdx, ResultType: an unrecognized value is invalid.
            raise RemoteProtocolError(
                INTERNAL_ERROR, f"Unrecognized resultType {kind!r} for {name}"
            )
        if type(result) is t.ListToolsResult and name == "tools/list":
            result = vet_tools(client, result)
        if cache is not None and rounds == 0:
            cache.put(name, params, result)
        return result


def _is_plain(method: MethodInfo[Any, Any]) -> bool:
    """A method whose usual request takes the short way (checked once per connection):
    neither cached nor looked at, its params a Struct whose copy takes a ``_meta`` (not
    frozen), its result type holding ``resultType`` (told complete by its value)."""
    params, result = method.params_type, method.result_type
    return (
        method.method not in CACHED_METHODS
        and result not in _LOOKED_AT
        and "result_type" in getattr(result, "__struct_fields__", ())
        and "meta" in getattr(params, "__struct_fields__", ())
        and not params.__struct_config__.frozen
    )


_NOT_SENT_AS_IS: Final = frozenset({"ping", "logging/setLevel"})

_LOOKED_AT: Final = frozenset({t.InputRequiredResult, t.ListToolsResult})
"""Result types the loop handles itself even when complete (an input round, a tool list)."""


async def _special(
    client: Client, conn: Connection, method: MethodInfo[Any, Any], params: Any
) -> Any:
    """The requests this era has no wire form for: ``ping`` (no ping in this era; discover
    answers "are you there" as well) and ``logging/setLevel`` (logging.mdx, 2026-07-28: a
    level per request)."""
    if method.method == "ping":
        fields, encoded = _request_meta(client)
        await conn.request("server/discover", with_meta(method, None, fields, encoded))
        return {}
    conn.core.check_send_capability(method)  # refused as on the handshake era
    client.log_level = params.level
    return {}


def _request_meta(client: Client) -> tuple[dict[str, Any], msgspec.Raw]:
    """The client's per-request ``_meta`` fields (basic/index.mdx) with the log level, if
    any, and their JSON: encoded once, and again only after the fields or the level were
    set (the same for every request of a client)."""
    cached = client._meta_wire
    if cached is not None:
        return cached
    level = client.log_level
    fields = client._meta if level is None else {**client._meta, LOG_LEVEL: level}
    encoded = msgspec.Raw(msgspec.json.encode(fields))
    client._meta_wire = (fields, encoded)
    return fields, encoded


async def send(
    client: Client,
    name: str,
    wire: Any,
    options: RequestOptions | None = None,
    info: MethodInfo[Any, Any] | None = None,
) -> Any:
    """One 2026-07-28 request whose params ``wire`` carry their ``_meta`` already (the
    low-level ``Client.request``, the tasks extension's calls), sent again where a refusal
    says that may help (:func:`_retry_round`)."""
    conn = client._conn()
    try:
        return await conn.request(name, wire, options, info=info)
    except PeerError as exc:
        return await _retry_round(client, name, wire, options, exc, info)


async def _retry_round(
    client: Client,
    name: str,
    wire: Any,
    options: RequestOptions | None,
    error: PeerError,
    info: MethodInfo[Any, Any] | None = None,
) -> Any:
    """A round the server refused with ``error``, sent again where that may help: a request
    whose response stream broke is re-issued with a new id (streamable-http.mdx,
    2026-07-28: no resumption), a tools/call refused with HeaderMismatch is retried
    once after re-reading the tool list (§Client Behavior of Custom Headers), and a request
    refused with UnsupportedProtocolVersion is retried once with a version from the error's
    ``supported`` list (versioning.mdx §Protocol Version Negotiation); else the error is
    raised."""
    reissues = 0
    refreshed = switched = False
    conn = client._conn()
    while True:
        if stream_lost(error) and reissues < client.max_reissues and not conn.closed:
            reissues += 1
            logger.info("%s lost its response stream; re-issuing it", name)
        elif error.code == HEADER_MISMATCH and name == "tools/call" and not refreshed:
            refreshed = True
            await reread_tools(client)
        elif (
            error.code == UNSUPPORTED_PROTOCOL_VERSION
            and not switched
            and (version := mutual_version(error)) is not None
        ):
            switched = True
            logger.info("%s: the server refused the protocol version; retrying %s", name, version)
            use_version(client, conn.core, version)
            wire = with_version(client, wire, version)
        else:
            raise error
        try:
            return await conn.request(name, wire, options, info=info)
        except PeerError as exc:
            error = exc


def with_version(client: Client, wire: Any, version: str) -> Any:
    """``wire`` (a request's params) with its ``_meta`` naming protocol ``version``: the
    client's fields as now encoded, or, where the params carry keys of their own, those keys
    with the version replaced."""
    meta = wire.get("_meta") if isinstance(wire, dict) else getattr(wire, "meta", UNSET)
    if isinstance(meta, dict):
        meta = {**meta, PROTOCOL_VERSION: version}
    else:  # the client's fields, encoded (with_meta): encoded again for the new version
        meta = _request_meta(client)[1]
    if isinstance(wire, dict):
        return {**wire, "_meta": meta}
    return msgspec.structs.replace(wire, meta=meta)


def stream_lost(exc: PeerError) -> bool:
    """The request's HTTP response stream broke before its answer (the transport says so)."""
    return isinstance(exc.data, dict) and exc.data.get(STREAM_LOST) is True
