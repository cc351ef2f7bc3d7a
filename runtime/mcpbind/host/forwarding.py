"""What the gateway and a remote mount pass between a downstream request and the upstream one
that serves it: the upstream's progress to the caller's token (basic/utilities/progress.mdx),
and an upstream failure as the caller's error (a server's own error keeps its code, message
and data; a lost connection or a timeout is one line naming the server)."""

from __future__ import annotations

import contextlib

from mcpbind_types._common import RequestOptions

from ..peer_errors import ConnectionClosed, RequestTimeout
from ..protocol import INTERNAL_ERROR, McpError
from ..server.context import Context
from .state import HostError

__all__ = ["UpstreamErrors", "progress_to", "upstream_errors"]


def progress_to(ctx: Context) -> RequestOptions | None:
    """The upstream request's options: its progress goes to the caller's progress token, and
    each report restarts its timeout (``None``: the caller asked for no progress)."""
    if ctx.progress_token is None:
        return None

    async def progress(value: float, total: float | None, message: str | None) -> None:
        with contextlib.suppress(McpError, ConnectionError):
            await ctx.report_progress(value, total, message)

    return RequestOptions(on_progress=progress, reset_timeout_on_progress=True)


def upstream_errors(server: str) -> UpstreamErrors:
    """Raise what went wrong upstream as the downstream client's error."""
    return UpstreamErrors(server)


class UpstreamErrors:
    """:func:`upstream_errors`' block (a plain context manager: it is entered on every routed
    call): a Host error as it is; a lost connection or a timeout as one line naming the server;
    a server's own error with its code, message and data."""

    __slots__ = ("server",)

    def __init__(self, server: str) -> None:
        self.server = server

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if exc is None or not isinstance(exc, McpError) or isinstance(exc, HostError):
            return
        server = self.server
        if isinstance(exc, ConnectionClosed):
            raise McpError(
                INTERNAL_ERROR, f"server {server!r} closed the connection: {exc.message}"
            ) from None
        if isinstance(exc, RequestTimeout):
            raise McpError(INTERNAL_ERROR, f"server {server!r} did not answer in time") from None
        raise McpError(exc.code, exc.message, exc.data) from None
