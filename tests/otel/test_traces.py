"""OpenTelemetry end to end (issue 32): a mcpbind client calling a mcpbind server over stdio and
over Streamable HTTP, on both protocol eras, makes one trace: the server's span of each request
is the child of the client's, its trace context carried in ``params._meta`` (``traceparent``,
SEP-414; OpenTelemetry semantic conventions for MCP, gen-ai/mcp.md "Context propagation").
Spans are named ``"{mcp.method.name} {target}"`` with the conventions' attributes and no
argument values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Client, Server, json_value
from mcpbind.client.telemetry import ClientTelemetry
from mcpbind.http import StreamableHTTPApp
from mcpbind.launch import open_server
from mcpbind.server.telemetry import ServerTelemetry
from tests.http.server._support import LiveServer

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]
SECRET = "s3cr3t-argument"


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    # An explicit provider, never the global one: the rest of the suite runs untraced.
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def traced_server(provider: TracerProvider) -> Server:
    server = Server("traced", middleware=[ServerTelemetry(provider)])

    @server.tool()
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    return server


def _call_spans(spans: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [s for s in spans if s["kind"] == kind and s["name"] == "tools/call greet"]


def _as_dicts(spans: tuple[ReadableSpan, ...]) -> list[dict[str, Any]]:
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


def assert_linked(client: list[dict[str, Any]], server: list[dict[str, Any]], era: str) -> None:
    """One client span and one server span of ``tools/call greet``, in one trace, the server's
    the child of the client's, with the conventions' attributes and no argument value."""
    (outgoing,) = _call_spans(client, "CLIENT")
    (incoming,) = _call_spans(server, "SERVER")
    assert incoming["trace_id"] == outgoing["trace_id"]
    assert incoming["parent_id"] == outgoing["span_id"]
    for span in (outgoing, incoming):
        attributes = span["attributes"]
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.tool.name"] == "greet"
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["mcp.protocol.version"] == era
        assert SECRET not in json.dumps(attributes)
    assert "jsonrpc.request.id" in incoming["attributes"]


@pytest.mark.parametrize("era", ERAS)
async def test_in_memory_one_trace(
    era: str, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    server = traced_server(provider)
    async with Client(
        server, protocol_version=era, middleware=[ClientTelemetry(provider)]
    ) as client:
        await client.call("greet", {"name": SECRET})
    spans = _as_dicts(exporter.get_finished_spans())
    assert_linked(spans, spans, era)


@pytest.fixture
def http_server(provider: TracerProvider) -> Iterator[str]:
    live = LiveServer(StreamableHTTPApp(traced_server(provider))).start()
    try:
        yield live.url
    finally:
        live.stop()


@pytest.mark.parametrize("era", ERAS)
async def test_http_one_trace(
    era: str, http_server: str, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    async with Client(
        http_server, protocol_version=era, middleware=[ClientTelemetry(provider)]
    ) as client:
        await client.call("greet", {"name": SECRET})
    spans = _as_dicts(exporter.get_finished_spans())
    assert_linked(spans, spans, era)
    if era == LATEST_HANDSHAKE:  # a Streamable HTTP session: its id on the server's spans
        (incoming,) = _call_spans(spans, "SERVER")
        assert incoming["attributes"]["mcp.session.id"]


@pytest.mark.parametrize("era", ERAS)
async def test_stdio_one_trace(
    era: str, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """The server process configures only a global provider: telemetry is on by itself."""
    # This environment (a stdio server gets only a safe default one): this checkout's mcpbind.
    spawned = open_server(f"{sys.executable} {HERE / 'traced_server.py'}", env=dict(os.environ))
    async with Client(
        spawned, protocol_version=era, middleware=[ClientTelemetry(provider)]
    ) as client:
        await client.call("greet", {"name": SECRET})
        result = await client.call("spans", {})
    server_spans = json_value(result.structured_content)["result"]
    assert_linked(_as_dicts(exporter.get_finished_spans()), server_spans, era)


def test_on_without_any_setting_when_a_provider_is_configured() -> None:
    """In a process whose application set global providers, a plain ``Client`` and ``Server``
    trace both sides (a subprocess: the global provider is set once per process)."""
    script = textwrap.dedent(
        """
        import json
        import anyio
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from mcpbind import Client, Server

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        server = Server("auto")

        @server.tool()
        def greet(name: str) -> str:
            return name

        async def main() -> None:
            async with Client(server) as client:
                await client.call("greet", {"name": "x"})

        anyio.run(main)
        print(json.dumps([[s.kind.name, s.name, s.context.trace_id, s.context.span_id,
                           s.parent.span_id if s.parent else None]
                          for s in exporter.get_finished_spans()]))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    spans = json.loads(out.stdout.strip().splitlines()[-1])
    client = [s for s in spans if s[0] == "CLIENT" and s[1] == "tools/call greet"]
    server = [s for s in spans if s[0] == "SERVER" and s[1] == "tools/call greet"]
    assert len(client) == 1 and len(server) == 1
    assert server[0][2] == client[0][2] and server[0][4] == client[0][3]


def test_off_and_never_imported_without_opentelemetry() -> None:
    """An application that never imports OpenTelemetry: mcpbind does not import it either (the
    request path has no telemetry layer at all)."""
    script = textwrap.dedent(
        """
        import sys
        import anyio
        from mcpbind import Client, Server
        server = Server("plain")

        @server.tool()
        def greet(name: str) -> str:
            return name

        async def main() -> None:
            async with Client(server) as client:
                await client.call("greet", {"name": "x"})
                assert not client.connection.middleware
            assert not server.active_middleware

        anyio.run(main)
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_official_sdk_client_s_trace_is_continued() -> None:
    """The official Python SDK's client (``mcp``) injects SEP-414 trace context into
    ``params._meta``: a mcpbind server continues its trace (its span is the child of the
    official client's span). In a subprocess: the official SDK traces with the global provider."""
    pytest.importorskip("mcp", reason="the official MCP SDK (`mcp`) is not installed")
    script = textwrap.dedent(
        f"""
        import json, os, sys
        import anyio, mcp
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        params = mcp.StdioServerParameters(
            command=sys.executable, args=[{str(HERE / "traced_server.py")!r}], env=dict(os.environ)
        )

        async def main():
            async with (
                mcp.stdio_client(params) as (read, write),
                mcp.ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.call_tool("greet", {{"name": "x"}})
                result = await session.call_tool("spans", {{}})
            return result.structured_content["result"]

        server = anyio.run(main)
        client = [
            {{"name": s.name, "kind": s.kind.name, "trace_id": s.context.trace_id,
              "span_id": s.context.span_id}}
            for s in exporter.get_finished_spans()
        ]
        print(json.dumps({{"client": client, "server": server}}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    spans = json.loads(out.stdout.strip().splitlines()[-1])
    (incoming,) = _call_spans(spans["server"], "SERVER")
    outgoing = [s for s in spans["client"] if s["kind"] == "CLIENT" and "greet" in s["name"]]
    assert len(outgoing) == 1
    assert incoming["trace_id"] == outgoing[0]["trace_id"]
    assert incoming["parent_id"] == outgoing[0]["span_id"]


@pytest.mark.parametrize("era", ERAS)
async def test_the_official_sdk_server_continues_a_mcpbind_client_s_trace(
    era: str, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """The reverse: a mcpbind client calls the official Python SDK's server over stdio; the
    official server reads SEP-414 ``traceparent`` from ``params._meta`` (its
    ``extract_trace_context``), so its ``tools/call greet`` span carries the mcpbind client's
    trace id and is the child of the client's span."""
    pytest.importorskip("mcp", reason="the official MCP SDK (`mcp`) is not installed")
    command = f"{sys.executable} {HERE / 'official_traced_server.py'}"
    spawned = open_server(command, env=dict(os.environ))
    async with Client(
        spawned, protocol_version=era, middleware=[ClientTelemetry(provider)]
    ) as client:
        assert client.protocol_version == era
        await client.call("greet", {"name": SECRET})
        result = await client.call("spans", {})
    official = json_value(result.structured_content)["spans"]
    (outgoing,) = _call_spans(_as_dicts(exporter.get_finished_spans()), "CLIENT")
    (incoming,) = _call_spans(official, "SERVER")
    assert incoming["trace_id"] == outgoing["trace_id"]
    assert incoming["parent_id"] == outgoing["span_id"]
    assert incoming["attributes"]["gen_ai.tool.name"] == "greet"
