"""A stdio server for the OpenTelemetry tests: it configures a global tracer provider with the
SDK's in-memory exporter and a global meter provider with an in-memory reader (no mcpbind
setting: telemetry turns itself on). Its ``spans`` tool returns the spans finished so far, its
``metrics`` tool the metric points so far; with ``TRACED_METRICS_OUT`` set, the points are
written there as JSON once the session ended (the session metrics)."""

from __future__ import annotations

import json
import os
import sys
import types
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpbind import Server, serve_stdio

exporter = InMemorySpanExporter()
if not isinstance(trace.get_tracer_provider(), TracerProvider):
    trace.set_tracer_provider(TracerProvider())
# The launcher may load this file twice (as __main__ and by name): each copy's exporter gets
# the spans of the one global provider.
provider = trace.get_tracer_provider()
assert isinstance(provider, TracerProvider)
provider.add_span_processor(SimpleSpanProcessor(exporter))
# One reader for both copies of this file (the meter provider is set once per process).
_STATE = "_traced_server_metrics"
if _STATE not in sys.modules:
    shared = types.ModuleType(_STATE)
    shared.reader = InMemoryMetricReader()  # type: ignore[attr-defined]
    metrics.set_meter_provider(MeterProvider(metric_readers=[shared.reader]))  # type: ignore[attr-defined]
    sys.modules[_STATE] = shared
reader: InMemoryMetricReader = sys.modules[_STATE].reader  # type: ignore[attr-defined]


def points() -> list[dict[str, Any]]:
    """Every metric point so far: name, attributes, and value (a sum) or count (a histogram)."""
    found: list[dict[str, Any]] = []
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    found.append(
                        {
                            "name": metric.name,
                            "attributes": dict(point.attributes or {}),
                            "value": getattr(point, "value", None),
                            "count": getattr(point, "count", None),
                        }
                    )
    return found


server = Server("traced")


@server.tool()
def greet(name: str) -> str:
    return f"Hello, {name}!"


@server.tool()
def spans() -> list[dict[str, Any]]:
    """The server's finished spans: name, kind, trace id, span id, parent span id, attributes."""
    return [
        {
            "name": span.name,
            "kind": span.kind.name,
            "trace_id": span.context.trace_id,
            "span_id": span.context.span_id,
            "parent_id": span.parent.span_id if span.parent is not None else None,
            "attributes": dict(span.attributes or {}),
        }
        for span in exporter.get_finished_spans()
    ]


@server.tool()
def metric_points() -> list[dict[str, Any]]:
    """The metric points so far (see :func:`points`)."""
    return points()


if __name__ == "__main__":
    serve_stdio(server)
    out = os.environ.get("TRACED_METRICS_OUT")
    if out:  # whole or not at all: the test polls for it
        with open(out + ".part", "w") as file:
            json.dump(points(), file)
        os.replace(out + ".part", out)
