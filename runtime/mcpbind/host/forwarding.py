"""What the gateway and a remote mount pass between a downstream request and the upstream one
that serves it: the upstream's progress to the caller's token (basic/utilities/progress.mdx),
an upstream failure as the caller's error (a server's own error keeps its code, message and
data; a lost connection or a timeout is one line naming the server), and a ``tools/call``
result passed on as the upstream's JSON (:class:`PassedToolResult`)."""

from __future__ import annotations

import contextlib
from typing import Any, Final

import msgspec
from msgspec import UNSET, UnsetType

from mcpbind_types._common import MethodInfo, RequestOptions
from mcpbind_types.unified import methods as m
from mcpbind_types.unified import types as t

from ..peer_errors import ConnectionClosed, RequestTimeout
from ..protocol import INTERNAL_ERROR, McpError
from ..protocol.meta import SERVER_INFO
from ..server.context import Context
from .state import HostError

__all__ = [
    "PASS_CALL_TOOL",
    "PassedToolResult",
    "UpstreamErrors",
    "passed_on",
    "progress_to",
    "raise_upstream",
]


class PassedToolResult(msgspec.Struct, kw_only=True, gc=False, omit_defaults=True):
    """A ``tools/call`` result as the upstream server sent it, to be sent on: the content and
    structured content stay its JSON (never decoded into blocks and encoded again); ``_meta``
    is opened one level (its server identity is the upstream's, not the gateway's) and
    ``resultType`` read (an input round is decoded as such, not passed on). The fields are
    ``CallToolResult``'s, under the same names."""

    content: msgspec.Raw
    meta: dict[str, msgspec.Raw] | UnsetType = msgspec.field(default=UNSET, name="_meta")
    is_error: bool | UnsetType = msgspec.field(default=UNSET, name="isError")
    result_type: str | UnsetType = msgspec.field(default=UNSET, name="resultType")
    structured_content: msgspec.Raw | UnsetType = msgspec.field(
        default=UNSET, name="structuredContent"
    )


_TABLE_ROW: MethodInfo[Any, Any] = m.C2S_CALL_TOOL
PASS_CALL_TOOL: Final[MethodInfo[t.CallToolRequestParams, PassedToolResult]] = (
    msgspec.structs.replace(_TABLE_ROW, result_type=PassedToolResult)
)
"""``tools/call`` with its result kept as :class:`PassedToolResult` (its wire type stays the
table's: an ``InputRequiredResult`` of the 2026-07-28 era is decoded as one and answered by the
client's input rounds, whose last answer may then come typed)."""


def passed_on(result: Any) -> Any:
    """An upstream ``tools/call`` result as the gateway's own: without the upstream's
    ``resultType`` (a 2025-11-25 client has none; on 2026-07-28 the server stamps its own) and
    without the upstream's identity in ``_meta`` (basic/index.mdx, 2026-07-28: the server that
    answers, here the gateway)."""
    result.result_type = UNSET
    meta = result.meta
    if type(meta) is dict and SERVER_INFO in meta:
        del meta[SERVER_INFO]
        if not meta:
            result.meta = UNSET
    return result


def progress_to(ctx: Context) -> RequestOptions | None:
    """The upstream request's options: its progress goes to the caller's progress token, and
    each report restarts its timeout (``None``: the caller asked for no progress)."""
    if ctx.progress_token is None:
        return None

    async def progress(value: float, total: float | None, message: str | None) -> None:
        with contextlib.suppress(McpError, ConnectionError):
            await ctx.report_progress(value, total, message)

    return RequestOptions(on_progress=progress, reset_timeout_on_progress=True)


def raise_upstream(server: str, exc: McpError) -> None:
    """Raise ``exc``, an upstream call's failure, as the downstream client's error: a lost
    connection or a timeout as one line naming ``server``; a server's own error with its code,
    message and data. Returns for a Host error, which goes on as it is (the caller re-raises
    it). For a hot path's ``except McpError`` (no block to enter); :class:`UpstreamErrors` is
    the same as a block."""
    if isinstance(exc, HostError):
        return
    if isinstance(exc, ConnectionClosed):
        raise McpError(
            INTERNAL_ERROR, f"server {server!r} closed the connection: {exc.message}"
        ) from None
    if isinstance(exc, RequestTimeout):
        raise McpError(INTERNAL_ERROR, f"server {server!r} did not answer in time") from None
    raise McpError(exc.code, exc.message, exc.data) from None


class UpstreamErrors:
    """Raise what went wrong upstream as the downstream client's error (a plain context
    manager: it is entered on routed calls): :func:`raise_upstream`."""

    __slots__ = ("server",)

    def __init__(self, server: str) -> None:
        self.server = server

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, McpError):
            raise_upstream(self.server, exc)
