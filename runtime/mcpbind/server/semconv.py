"""The OpenTelemetry semantic conventions for MCP (gen-ai/mcp.md, Development) as both sides
use them: span names and attributes, ``error.type``, the instruments of each side, and the
application's configured providers. One module, imported by :mod:`.telemetry`,
:mod:`mcpbind.client.telemetry` and the Host's routing span, so the two sides name things the
same way. Imported only once the application imported OpenTelemetry.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final, Literal

from ..protocol import McpError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from opentelemetry.metrics import (
        CallbackOptions,
        Counter,
        Histogram,
        Meter,
        MeterProvider,
        Observation,
    )
    from opentelemetry.trace import TracerProvider

__all__ = [
    "DURATION_BUCKETS",
    "SCOPE",
    "Instruments",
    "configured_providers",
    "error_type",
    "instruments",
    "span_attributes",
    "span_name",
]

SCOPE: Final = "mcpbind"
"""The instrumentation scope name of mcpbind's spans and metrics."""

#: Histogram buckets of the conventions' operation and session durations (seconds).
DURATION_BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

_NAMED: Final = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}

#: Where each side observes a request, for the instruments' descriptions.
_OBSERVED: Final = {"client": "on the sender", "server": "on the receiver"}


def configured_providers() -> tuple[TracerProvider | None, MeterProvider | None]:
    """The application's global tracer and meter providers, ``None`` for one not configured
    (still OpenTelemetry's proxy or no-op default)."""
    from opentelemetry import metrics, trace

    tracer: TracerProvider | None = trace.get_tracer_provider()
    if isinstance(tracer, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        tracer = None
    meter: MeterProvider | None = metrics.get_meter_provider()
    if (
        isinstance(meter, metrics.NoOpMeterProvider)
        or type(meter).__name__ == "_ProxyMeterProvider"
    ):
        meter = None
    return tracer, meter


def span_name(method: str, target: str | None) -> str:
    """``"{mcp.method.name} {target}"`` for a tool or prompt, else the method."""
    return f"{method} {target}" if target is not None and method in _NAMED else method


def span_attributes(
    method: str, target: str | None, protocol_version: str | None
) -> dict[str, Any]:
    """The conventions' attributes of a request, on either side."""
    attributes: dict[str, Any] = {"mcp.method.name": method}
    if protocol_version is not None:
        attributes["mcp.protocol.version"] = protocol_version
    if target is not None:
        attributes[_NAMED.get(method, "mcp.resource.uri")] = target
    if method == "tools/call":
        attributes["gen_ai.operation.name"] = "execute_tool"
    return attributes


def error_type(exc: BaseException) -> tuple[str, str | None]:
    """``error.type`` of a failure, and its JSON-RPC code as ``rpc.response.status_code``."""
    if isinstance(exc, McpError):
        return str(exc.code), str(exc.code)
    kind = type(exc)
    return f"{kind.__module__}.{kind.__qualname__}", None


class Instruments:
    """The request instruments of one side: ``mcp.{side}.operation.duration`` (the
    conventions' histogram, seconds), ``mcp.{side}.active_requests`` (in flight) and
    ``mcp.{side}.errors`` (by ``error.type``).

    The in-flight count is kept here, per method, and read by the meter when it collects
    (an observable up-down counter): a dict update per request where two SDK ``add`` calls
    cost about a quarter of the instrumentation's time per request."""

    __slots__ = ("duration", "errors", "inflight")

    def __init__(self, duration: Histogram, errors: Counter) -> None:
        self.duration = duration
        self.errors = errors
        #: Requests in flight by method (``mcp.method.name``).
        self.inflight: dict[str, int] = {}

    def begin(self, method: str) -> float:
        """Count a request of ``method`` in flight; its start time for :meth:`end`."""
        inflight = self.inflight
        inflight[method] = inflight.get(method, 0) + 1
        return time.perf_counter()

    def end(self, method: str, started: float, failure: str | None) -> None:
        """Count it done: its duration, and its ``error.type`` when it failed."""
        self.inflight[method] -= 1
        if failure is None:
            measured = {"mcp.method.name": method}
        else:
            measured = {"mcp.method.name": method, "error.type": failure}
            self.errors.add(1, measured)
        self.duration.record(time.perf_counter() - started, measured)

    def observe(self, options: CallbackOptions) -> Iterable[Observation]:
        """The in-flight counts, for the meter's collection (on its own thread: a copy of
        the counts is taken first)."""
        from opentelemetry.metrics import Observation

        for method, count in list(self.inflight.items()):
            yield Observation(count, {"mcp.method.name": method})


_made: dict[tuple[Meter, str], Instruments] = {}


def instruments(side: Literal["client", "server"], meter: Meter) -> Instruments:
    """The request instruments of ``side`` on ``meter``, created once: a second telemetry
    layer on the same meter counts into the same in-flight table (a meter keeps the first
    callback of an instrument name)."""
    found = _made.get((meter, side))
    if found is not None:
        return found
    made = _made[meter, side] = Instruments(
        meter.create_histogram(
            f"mcp.{side}.operation.duration",
            unit="s",
            description=f"MCP request duration as observed {_OBSERVED[side]}",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        ),
        meter.create_counter(
            f"mcp.{side}.errors", unit="{error}", description="MCP requests failed, by error.type"
        ),
    )
    meter.create_observable_up_down_counter(
        f"mcp.{side}.active_requests",
        callbacks=[made.observe],
        unit="{request}",
        description="MCP requests in flight",
    )
    return made
