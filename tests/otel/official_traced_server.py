"""The official MCP Python SDK's server (``mcp``) over stdio in a process whose application
configured a global tracer provider with the SDK's in-memory exporter: the official server
traces every request itself (its ``OpenTelemetryMiddleware``, on by default) and continues the
SEP-414 trace context it finds in ``params._meta``. Its ``spans`` tool returns the spans
finished so far. For tests/otel/test_traces.py (a mcpbind client calling it)."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

server = MCPServer("traced-official", version="1.0.0", log_level="WARNING")


@server.tool()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@server.tool()
def spans() -> dict[str, list[dict[str, Any]]]:
    """The server's finished spans: name, kind, trace id, span id, parent span id."""
    return {
        "spans": [
            {
                "name": span.name,
                "kind": span.kind.name,
                "trace_id": span.context.trace_id,
                "span_id": span.context.span_id,
                "parent_id": span.parent.span_id if span.parent is not None else None,
                "attributes": {k: v for k, v in (span.attributes or {}).items()},
            }
            for span in exporter.get_finished_spans()
        ]
    }


if __name__ == "__main__":
    server.run("stdio")
