"""A process whose application configured a global tracer provider (the SDK's in-memory
exporter) and runs a ``Host`` over two servers: ``web`` (Streamable HTTP, served by this process
under uvicorn) and ``local`` (``traced_server.py`` over stdio, a process of its own). It calls
``greet`` on each through the approval policy (``ask``, approved) at the protocol version named
by ``argv[1]``, starts ``web``'s ``build`` as a task (``HostTasks``), and prints, as JSON, this process's finished spans, the stdio server's spans
and the span that was current while the approver was asked.

Run by tests/otel/test_host_trace.py."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: the suite's live-server helper

from support.live_server import LiveServer  # noqa: E402

from mcpbind import Server, json_value  # noqa: E402
from mcpbind.host import Host, ServerConfig, ToolCallRequest  # noqa: E402
from mcpbind.host.tasks import HostTasks  # noqa: E402
from mcpbind.http import StreamableHTTPApp  # noqa: E402
from mcpbind.server.tasks import TaskContext, Tasks  # noqa: E402

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)


def _web() -> Server:
    server = Server("web")
    Tasks(server, poll_interval_ms=50)

    @server.tool()
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(task="required")
    async def build(task: TaskContext) -> str:
        await task.status("building")
        return "built"

    return server


def _dicts(spans: tuple[ReadableSpan, ...]) -> list[dict[str, Any]]:
    return [
        {
            "name": s.name,
            "kind": s.kind.name,
            "trace_id": s.context.trace_id,
            "span_id": s.context.span_id,
            "parent_id": s.parent.span_id if s.parent is not None else None,
            "attributes": dict(s.attributes or {}),
        }
        for s in spans
    ]


async def main(version: str) -> dict[str, Any]:
    asked: dict[str, int] = {}

    async def approve(request: ToolCallRequest) -> bool:
        asked[request.host_name] = trace.get_current_span().get_span_context().span_id
        return True

    live = LiveServer(StreamableHTTPApp(_web())).start()
    try:
        config = {
            "web": ServerConfig(url=live.url, approval="ask", protocol_version=version),
            "local": ServerConfig(
                command=sys.executable,
                args=[str(HERE / "traced_server.py")],
                env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")},
                approval="ask",
                protocol_version=version,
            ),
        }
        async with Host(config, approve=approve) as host:
            await host.wait_settled(30)
            await host.call_tool("web__greet", {"name": "x"})
            await host.call_tool("local__greet", {"name": "x"})
            await HostTasks(host).start("web__build", {})
            result = await host.call_tool("local__spans", {})
    finally:
        live.stop()
    return {
        "host": _dicts(exporter.get_finished_spans()),
        "stdio_server": json_value(result.structured_content)["result"],
        "asked": asked,
    }


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, sys.argv[1])))
