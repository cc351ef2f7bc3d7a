"""Which middleware layers a server runs: its own, inside OpenTelemetry's when the application
configured a provider (issue 32). Apart from :mod:`.middleware` so that the middleware module
never imports the telemetry one (which builds on it)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .middleware import Middleware

__all__ = ["layers_for"]


def layers_for(configured: Sequence[Middleware]) -> list[Middleware]:
    """The layers a server runs: its own, inside OpenTelemetry's when the application has
    configured a tracer or meter provider (:mod:`mcpbind.server.telemetry`). OpenTelemetry is
    looked for only if the application imported it (``opentelemetry.trace`` in
    ``sys.modules``): mcpbind never imports it otherwise."""
    if "opentelemetry.trace" in sys.modules:
        from .telemetry import ServerTelemetry, server_telemetry

        if not any(isinstance(layer, ServerTelemetry) for layer in configured):
            telemetry = server_telemetry()
            if telemetry is not None:
                return [telemetry, *configured]
    return list(configured)
