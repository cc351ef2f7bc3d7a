"""Metrics (issue 32), read with the OpenTelemetry SDK's in-memory reader. Both sides record the
same request instruments (``mcp.{client,server}.operation.duration``, the conventions'
histograms, ``active_requests`` and ``errors`` by ``error.type``: one definition,
``mcpbind.server.semconv.instruments``). Sessions: the open
sessions (``mcp.server.active_sessions``) and the conventions' ``mcp.server.session.duration``
histogram (OpenTelemetry semantic conventions for MCP, gen-ai/mcp.md "Metric:
mcp.server.session.duration": ``network.transport``, ``network.protocol.name``,
``mcp.protocol.version``, ``error.type`` when the session ended with an error) for a
handshake-era Streamable HTTP session and a stdio session; a 2026-07-28 request opens none
(basic/transports: the stateless era has no session)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from support.polling import until_async

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Client, Server, json_value
from mcpbind.client.telemetry import ClientTelemetry
from mcpbind.http import StreamableHTTPApp
from mcpbind.launch import open_server
from mcpbind.server.telemetry import ServerTelemetry
from tests.http.server._support import LiveServer

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
HTTP = {"network.transport": "tcp", "network.protocol.name": "http"}


def _points(reader: InMemoryMetricReader) -> list[dict[str, Any]]:
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


def _open(points: list[dict[str, Any]]) -> dict[str, int]:
    """Open sessions by ``network.transport``."""
    return {
        p["attributes"].get("network.transport", ""): p["value"]
        for p in points
        if p["name"] == "mcp.server.active_sessions"
    }


def _durations(points: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    return [
        (p["attributes"], p["count"]) for p in points if p["name"] == "mcp.server.session.duration"
    ]


async def test_both_sides_record_the_same_request_instruments() -> None:
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    server = Server("metered", middleware=[ServerTelemetry(meter_provider=meters)])

    @server.tool()
    def greet(name: str) -> str:
        if name == "bad":
            raise ValueError("no")
        return name

    telemetry = ClientTelemetry(meter_provider=meters)
    async with Client(server, middleware=[telemetry]) as client:
        await client.call("greet", {"name": "x"})
        await client.call("greet", {"name": "bad"})  # a tool error (isError), not a raise
    points = _points(reader)
    for side in ("client", "server"):
        calls = [
            (p["attributes"], p["count"])
            for p in points
            if p["name"] == f"mcp.{side}.operation.duration"
            and p["attributes"]["mcp.method.name"] == "tools/call"
        ]
        failed = {"mcp.method.name": "tools/call", "error.type": "tool_error"}
        assert sorted(calls, key=str) == sorted(
            [({"mcp.method.name": "tools/call"}, 1), (failed, 1)], key=str
        )
        errors = [
            (p["attributes"], p["value"]) for p in points if p["name"] == f"mcp.{side}.errors"
        ]
        assert errors == [(failed, 1)]
        in_flight = [
            p["value"]
            for p in points
            if p["name"] == f"mcp.{side}.active_requests"
            and p["attributes"]["mcp.method.name"] == "tools/call"
        ]
        assert in_flight == [0]


def _in_flight(points: list[dict[str, Any]], side: str) -> list[Any]:
    return [
        p["value"]
        for p in points
        if p["name"] == f"mcp.{side}.active_requests"
        and p["attributes"]["mcp.method.name"] == "tools/call"
    ]


async def test_requests_in_flight_are_read_while_they_run() -> None:
    """``active_requests`` is read when the meter collects: 1 on each side while a call
    runs, 0 after; two telemetry layers on one meter count into one table."""
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    twice = [ServerTelemetry(meter_provider=meters), ServerTelemetry(meter_provider=meters)]
    server = Server("metered", middleware=twice)
    during: list[list[Any]] = []

    @server.tool()
    def look() -> str:
        points = _points(reader)
        during.append(_in_flight(points, "server") + _in_flight(points, "client"))
        return "ok"

    async with Client(server, middleware=[ClientTelemetry(meter_provider=meters)]) as client:
        await client.call("look", {})
    assert during == [[2, 1]]  # the call passed both server layers, one client layer
    points = _points(reader)
    assert (_in_flight(points, "server"), _in_flight(points, "client")) == ([0], [0])


async def test_an_http_session_is_counted_open_then_measured() -> None:
    reader = InMemoryMetricReader()
    server = Server(
        "metered",
        middleware=[ServerTelemetry(meter_provider=MeterProvider(metric_readers=[reader]))],
    )

    @server.tool()
    def greet(name: str) -> str:
        return name

    live = LiveServer(StreamableHTTPApp(server)).start()
    try:
        async with Client(live.url, protocol_version=LATEST_HANDSHAKE) as client:
            await client.call("greet", {"name": "x"})
            assert _open(_points(reader)) == {"tcp": 1}
        # The server ends the session on its own task, after the client left.
        await until_async(lambda: _open(_points(reader)) == {"tcp": 0})
        points = _points(reader)
        assert _durations(points) == [({**HTTP, "mcp.protocol.version": LATEST_HANDSHAKE}, 1)]
        # 2026-07-28: a request of its own, no session to count.
        async with Client(live.url, protocol_version=LATEST_STATELESS) as client:
            await client.call("greet", {"name": "x"})
            assert _open(_points(reader)) == {"tcp": 0}
        assert len(_durations(_points(reader))) == 1
    finally:
        live.stop()


async def test_a_stdio_session_is_counted_open_then_measured(tmp_path: Path) -> None:
    """The server process configured only global providers (no mcpbind setting)."""
    out = tmp_path / "metrics.json"
    env = {**os.environ, "TRACED_METRICS_OUT": str(out)}
    spawned = open_server(f"{sys.executable} {HERE / 'traced_server.py'}", env=env)
    async with Client(spawned, protocol_version=LATEST_HANDSHAKE) as client:
        result = await client.call("metric_points", {})
        assert _open(json_value(result.structured_content)["result"]) == {"pipe": 1}
    await until_async(out.exists)  # written by the server process once its session ended
    points = json.loads(out.read_text())
    assert _open(points) == {"pipe": 0}
    assert _durations(points) == [
        ({"network.transport": "pipe", "mcp.protocol.version": LATEST_HANDSHAKE}, 1)
    ]
