"""A stdio server for the OpenTelemetry tests: it configures a global tracer provider with the
SDK's in-memory exporter (no mcpbind setting: telemetry turns itself on), and its ``spans`` tool
returns the spans finished so far as JSON."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
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


if __name__ == "__main__":
    serve_stdio(server)
