"""Metrics (issue 32), read with the OpenTelemetry SDK's in-memory reader: both sides record the
same request instruments (``mcp.{client,server}.operation.duration``, the conventions'
histograms (OpenTelemetry semantic conventions for MCP, gen-ai/mcp.md "Metrics"),
``active_requests`` and ``errors`` by ``error.type``), from one definition
(``mcpbind.server.semconv.instruments``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from mcpbind import Client, Server
from mcpbind.client.telemetry import ClientTelemetry
from mcpbind.server.telemetry import ServerTelemetry

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
