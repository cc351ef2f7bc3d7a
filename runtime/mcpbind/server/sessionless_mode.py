"""The 2025 sessionless HTTP mode (``StreamableHTTPApp(sessionless=True)``): handshake-era
requests answered one POST at a time, with no session (basic/transports.mdx §Session
Management: a server MAY assign no session id).

Nothing reaches the client after its request's response, so the server advertises only what
one request can deliver (:func:`sessionless_capabilities`) and a handler's context can send
nothing but this request's own notifications (:class:`SessionlessPeer`). A request is accepted
and decoded by the method table of the version its POST names (``MCP-Protocol-Version``), the
same step (:class:`mcpbind.protocol.accept.MethodTable`) the 2026-07-28 era uses; it is run by
:func:`mcpbind.server.dispatch.answer`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, RequestOptions

from ..protocol import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    LocalProtocolError,
    McpError,
    SessionOptions,
)
from ..protocol.accept import MethodTable, decode_params, meta_of
from ..protocol.wire import encode_notification
from ..versions import HANDSHAKE_VERSIONS
from .context import Context, current_request_headers
from .mrtr import Emit
from .options import options_of

if TYPE_CHECKING:
    from .app import Server

__all__ = ["SessionlessPeer", "initialize_result", "run_sessionless", "sessionless_capabilities"]


def sessionless_capabilities(server: Server) -> t.ServerCapabilities:
    """The server's capabilities in the sessionless mode: no logging (no level outlives
    ``logging/setLevel``), no ``resources.subscribe`` and no ``listChanged`` (no stream is
    left to carry their notifications; basic/lifecycle.mdx §Capability Negotiation:
    advertise only what can be honoured), no ``tasks.list`` (no caller to list for)."""
    caps = server.capabilities()
    caps.logging = msgspec.UNSET
    for kind in (caps.tools, caps.prompts, caps.resources):
        if not isinstance(kind, msgspec.UnsetType):
            kind.list_changed = msgspec.UNSET
    if not isinstance(caps.resources, msgspec.UnsetType):
        caps.resources.subscribe = msgspec.UNSET
    if isinstance(caps.tasks, t.ServerCapabilitiesTasks):
        # tasks.mdx §Task Isolation: without a session the server cannot tell callers apart
        # (unless an auth layer does): their tasks are reached by id, never listed.
        caps.tasks.list_ = msgspec.UNSET
    return caps


def initialize_result(
    server: Server, params: t.InitializeRequestParams, capabilities: t.ServerCapabilities
) -> t.InitializeResult:
    """The answer to ``initialize`` (basic/lifecycle.mdx §Version Negotiation): the version
    asked for if the server offers it, else the newest handshake version it offers."""
    offered = tuple(v for v in options_of(server).versions if v in HANDSHAKE_VERSIONS)
    offered = offered or HANDSHAKE_VERSIONS
    requested = params.protocol_version
    result = t.InitializeResult(
        capabilities=capabilities,
        protocol_version=requested if requested in offered else offered[0],
        server_info=server.info(),
    )
    if server.instructions is not None:
        result.instructions = server.instructions
    return result


class SessionlessPeer:
    """The handler context's peer for one sessionless request (implements ``Peer``): its
    notifications (progress) go out on its response; no log level is set and no request can
    be sent to the client."""

    __slots__ = ("_emit",)

    #: Read by the tasks extension: no session outlives the request.
    sessionless: Final = True
    log_level: Final = None

    def __init__(self, emit: Emit | None) -> None:
        self._emit = emit

    def peer_has_capability(self, path: tuple[str, ...]) -> bool:
        return False  # nothing the client declared outlives its initialize POST

    async def send_request(
        self,
        method: MethodInfo[Any, Any],
        params: Any,
        options: RequestOptions | None = None,
        *,
        key: str | None = None,
    ) -> Any:
        raise LocalProtocolError(
            f"cannot send {method.method}: a sessionless server sends no requests to the client"
        )

    async def send_notification(self, method: MethodInfo[Any, None], params: Any) -> None:
        if self._emit is not None:
            await self._emit(encode_notification(method.method, params))


async def run_sessionless(
    server: Server,
    table: MethodTable,
    request_id: int | str,
    method: str,
    raw: msgspec.Raw | bytes,
    initialize: bool,
    emit: Emit | None,
    options: SessionOptions,
    headers: Mapping[str, str] | None = None,
) -> Any:
    """Accept, decode and run one request: ``table`` is what its version accepts;
    ``initialize``: the POST is an ``initialize`` (before any version), answered with
    :func:`sessionless_capabilities`; ``headers``: the HTTP request's (``Context.headers``;
    ``None``: those the caller's task set, if any). Refusals are raised as
    :class:`McpError`."""
    if method == "initialize" and not initialize:
        raise McpError(INVALID_REQUEST, "Invalid Request: already initialized")
    params = decode_params(table.accept(method), raw, options.max_meta_bytes)
    if initialize:
        return initialize_result(server, params, sessionless_capabilities(server))
    if method == "ping":
        return {}
    handler = server.handlers.get(method)
    if handler is None:
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
    meta = meta_of(params)
    token = meta.get("progressToken") if type(meta) is dict else None
    ctx = Context(
        peer=SessionlessPeer(emit),
        protocol_version=table.versions[0],
        request_id=request_id,
        progress_token=token
        if isinstance(token, int | str) and not isinstance(token, bool)
        else None,
        debug_errors=options.debug or server.debug,
        lifespan_state=server.lifespan_state,
        headers=headers if headers is not None else current_request_headers.get(),
    )
    return await handler(params, ctx)
