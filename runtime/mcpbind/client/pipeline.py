"""The 2026-07-28 request pipeline: one request with its per-request ``_meta``, the result
cache, multi round-trip input rounds (basic/patterns/mrtr.mdx), re-issue of a request whose
response stream broke, and the HeaderMismatch retry of tools/call. Imported when a client
negotiates the stateless era; a handshake-era client never loads it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final, Protocol

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
from ..protocol.meta import PROTOCOL_VERSION, with_meta
from ..transports.lost import STREAM_LOST
from .cache import CACHED_METHODS, ResultCache
from .handlers import answer_inputs
from .negotiation import mutual_version, use_version
from .tool_headers import reread_tools, vet_tools

if TYPE_CHECKING:
    from .handlers import ClientHandlers
    from .outgoing_meta import OutgoingMeta

__all__ = ["Pipeline", "PipelineOwner", "stream_lost"]

logger = logging.getLogger("mcpbind.client")


class PipelineOwner(Protocol):
    """What the pipeline reads of the client it serves, at each use (they may change between
    requests): the handlers and roots that answer input rounds, the result cache, the bounds
    on input rounds and re-issues, and the tool list (read again after a HeaderMismatch).
    ``Client`` has these as public attributes and methods."""

    @property
    def handlers(self) -> ClientHandlers: ...

    @property
    def roots(self) -> list[t.Root]: ...

    @property
    def cache(self) -> ResultCache | None: ...

    @property
    def max_input_rounds(self) -> int: ...

    @property
    def max_reissues(self) -> int: ...

    def iter_tools(self) -> AsyncIterator[t.Tool]: ...


class Pipeline:
    """The 2026-07-28 request pipeline of one client connection, made once that era is
    negotiated: requests go out on ``conn`` with the client's per-request ``meta``; ``owner``
    answers input rounds and bounds them; ``tool_headers`` is the transport's registry of
    tools' ``x-mcp-header`` paths (``None``: a transport without one)."""

    __slots__ = ("_conn", "_meta", "_owner", "_plain", "_tool_headers", "sendable")

    def __init__(
        self,
        conn: Connection,
        meta: OutgoingMeta,
        owner: PipelineOwner,
        tool_headers: object = None,
    ) -> None:
        self._conn = conn
        self._meta = meta
        self._owner = owner
        self._tool_headers = tool_headers
        #: The methods found sendable as they are on this connection's version (each checked
        #: once), and of those the ones sent the shortest way (:func:`_is_plain`).
        self.sendable: set[str] = set()
        self._plain: set[str] = set()

    @property
    def max_reissues(self) -> int:
        """How often a request whose response stream broke is re-issued (the owner's)."""
        return self._owner.max_reissues

    @property
    def meta(self) -> OutgoingMeta:
        """The client's per-request ``_meta``."""
        return self._meta

    async def request(
        self, method: MethodInfo[Any, Any], params: Any, options: RequestOptions | None
    ) -> Any:
        """One request on 2026-07-28: ``_meta``, the cache, and the MRTR retry loop."""
        name = method.method
        meta = self._meta.encoded
        if (
            name in self._plain
            and meta is not None
            and type(params) is method.params_type
            and params.meta is UNSET
        ):
            # The usual request (a tool call): a plain method whose params carry no ``_meta``
            # of their own. with_meta's steps for it, copied: a copy carrying the client's
            # encoded fields (make bench-inlines; tests/test_inlines.py ties them).
            wire = params.__copy__()
            wire.meta = meta[1]
            try:
                result = await self._conn.request(name, wire, options, info=method)
            except PeerError as exc:
                result = await self._retry_round(name, wire, options, exc, method)
            if type(result) is method.result_type and result.result_type == "complete":
                return result
            return await self._rounds(method, params, wire, options, None, result)
        if name not in self.sendable:  # checked once per method and connection
            if name in _NOT_SENT_AS_IS:
                return await self._special(method, params)
            version = self._conn.core.version
            if method.versions and version not in method.versions:
                raise McpError(METHOD_NOT_FOUND, f"{name} is not part of protocol {version}")
            self.sendable.add(name)
            if _is_plain(method):
                self._plain.add(name)
        cacheable = name in CACHED_METHODS and ResultCache.cacheable(name, params)
        cache = self._owner.cache if cacheable else None
        if cache is not None:
            hit = cache.get(name, params)
            if hit is not None:
                return hit
        wire = with_meta(method, params, *self._meta.wire())
        try:
            result = await self._conn.request(name, wire, options, info=method)
        except PeerError as exc:
            result = await self._retry_round(name, wire, options, exc, method)
        return await self._rounds(method, params, wire, options, cache, result)

    async def _rounds(
        self,
        method: MethodInfo[Any, Any],
        params: Any,
        wire: Any,
        options: RequestOptions | None,
        cache: ResultCache | None,
        result: Any,
    ) -> Any:
        """The request's answer ``result`` checked, and its input rounds (mrtr.mdx) until it
        is complete: a new round answers the server's input requests."""
        name = method.method
        owner = self._owner
        rounds = 0
        while True:
            kind = getattr(result, "result_type", UNSET)
            if kind == "complete" and type(result) not in _LOOKED_AT:  # the usual result
                if cache is not None and rounds == 0:
                    cache.put(name, params, result)
                return result
            if isinstance(result, t.InputRequiredResult):
                rounds += 1
                if rounds > owner.max_input_rounds:
                    raise McpError(
                        INTERNAL_ERROR, f"{name} still needs input after {rounds - 1} rounds"
                    )
                requests = result.input_requests
                handlers = owner.handlers
                responses = await answer_inputs(
                    requests if isinstance(requests, dict) else {},
                    sampling=handlers.sampling,
                    elicitation=handlers.elicitation,
                    roots=owner.roots if handlers.roots is not None else None,
                    caps=self._conn.core.local_capabilities,
                )
                # mrtr.mdx, Client Requirements: echo requestState exactly (or omit it); the
                # retry is a new request with a new id.
                wire = msgspec.structs.replace(
                    wire,
                    input_responses=responses if responses else UNSET,
                    request_state=result.request_state,
                )
                try:
                    result = await self._conn.request(name, wire, options, info=method)
                except PeerError as exc:
                    result = await self._retry_round(name, wire, options, exc, method)
                continue
            if kind != "complete" and kind is not UNSET:
                # basic/index.mdx, ResultType: an unrecognized value is invalid.
                raise RemoteProtocolError(
                    INTERNAL_ERROR, f"Unrecognized resultType {kind!r} for {name}"
                )
            if type(result) is t.ListToolsResult and name == "tools/list":
                result = vet_tools(self._tool_headers, result)
            if cache is not None and rounds == 0:
                cache.put(name, params, result)
            return result

    async def _special(self, method: MethodInfo[Any, Any], params: Any) -> Any:
        """The requests this era has no wire form for: ``ping`` (no ping in this era;
        discover answers "are you there" as well) and ``logging/setLevel`` (logging.mdx,
        2026-07-28: a level per request)."""
        if method.method == "ping":
            fields, encoded = self._meta.wire()
            await self._conn.request("server/discover", with_meta(method, None, fields, encoded))
            return {}
        self._conn.core.check_send_capability(method)  # refused as on the handshake era
        self._meta.log_level = params.level
        return {}

    async def send(
        self,
        name: str,
        wire: Any,
        options: RequestOptions | None = None,
        info: MethodInfo[Any, Any] | None = None,
    ) -> Any:
        """One 2026-07-28 request whose params ``wire`` carry their ``_meta`` already (the
        low-level ``Client.request``, the tasks extension's calls), sent again where a refusal
        says that may help (:meth:`_retry_round`)."""
        try:
            return await self._conn.request(name, wire, options, info=info)
        except PeerError as exc:
            return await self._retry_round(name, wire, options, exc, info)

    async def _retry_round(
        self,
        name: str,
        wire: Any,
        options: RequestOptions | None,
        error: PeerError,
        info: MethodInfo[Any, Any] | None = None,
    ) -> Any:
        """A round the server refused with ``error``, sent again where that may help: a
        request whose response stream broke is re-issued with a new id (streamable-http.mdx,
        2026-07-28: no resumption), a tools/call refused with HeaderMismatch is retried once
        after re-reading the tool list (§Client Behavior of Custom Headers), and a request
        refused with UnsupportedProtocolVersion is retried once with a version from the
        error's ``supported`` list (versioning.mdx §Protocol Version Negotiation); else the
        error is raised."""
        reissues = 0
        refreshed = switched = False
        conn = self._conn
        while True:
            if stream_lost(error) and reissues < self.max_reissues and not conn.closed:
                reissues += 1
                logger.info("%s lost its response stream; re-issuing it", name)
            elif error.code == HEADER_MISMATCH and name == "tools/call" and not refreshed:
                refreshed = True
                await reread_tools(self._owner.cache, self._owner.iter_tools)
            elif (
                error.code == UNSUPPORTED_PROTOCOL_VERSION
                and not switched
                and (version := mutual_version(error)) is not None
            ):
                switched = True
                logger.info(
                    "%s: the server refused the protocol version; retrying %s", name, version
                )
                wire = self.switch_version(wire, version)
            else:
                raise error
            try:
                return await conn.request(name, wire, options, info=info)
            except PeerError as exc:
                error = exc

    def switch_version(self, wire: Any, version: str) -> Any:
        """Speak ``version`` from now on (a mutually supported one, from the server's
        refusal); ``wire`` (a request's params) with its ``_meta`` naming it: the client's
        fields as now encoded, or, where the params carry keys of their own, those keys with
        the version replaced."""
        use_version(self._conn.core, self._meta, version)
        meta = wire.get("_meta") if isinstance(wire, dict) else getattr(wire, "meta", UNSET)
        if isinstance(meta, dict):
            meta = {**meta, PROTOCOL_VERSION: version}
        else:  # the client's fields, encoded (with_meta): encoded again for the new version
            meta = self._meta.wire()[1]
        if isinstance(wire, dict):
            return {**wire, "_meta": meta}
        return msgspec.structs.replace(wire, meta=meta)


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


def stream_lost(exc: PeerError) -> bool:
    """The request's HTTP response stream broke before its answer (the transport says so)."""
    return isinstance(exc.data, dict) and exc.data.get(STREAM_LOST) is True
