"""Client middleware: one typed layer around every request a ``Client`` sends, on both
protocol eras (``Client(..., middleware=[...])``, the first outermost).

A client middleware is ``async def middleware(call, send_next)``: ``call`` is the
:class:`~mcpbind.connection.OutgoingCall` (method, params, options), ``await send_next(call)``
sends it (through the rest of the chain) and returns the result or raises the error. On
2026-07-28 each request on the wire passes, the rounds of a multi round-trip request and a
re-issued request included, with the per-request ``_meta`` already in its params.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..connection import ClientMiddleware, OutgoingCall, SendNext

__all__ = ["ClientMiddleware", "OutgoingCall", "SendNext", "client_layers"]


def client_layers(configured: Sequence[ClientMiddleware]) -> list[ClientMiddleware]:
    """The layers a client's connection runs: its own, inside OpenTelemetry's when the
    application imported ``opentelemetry`` and configured a tracer or meter provider
    (:mod:`mcpbind.client.telemetry`); mcpbind never imports it otherwise."""
    if "opentelemetry.trace" in sys.modules:
        from .telemetry import ClientTelemetry, client_telemetry

        if not any(isinstance(layer, ClientTelemetry) for layer in configured):
            telemetry = client_telemetry()
            if telemetry is not None:
                return [telemetry, *configured]
    return list(configured)


def __getattr__(name: str) -> object:  # the types, without importing the connection eagerly
    if name in ("ClientMiddleware", "OutgoingCall", "SendNext"):
        from .. import connection

        return getattr(connection, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
