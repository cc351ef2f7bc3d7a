"""A Host call is one trace (issue 32): the Host's routing span (``host tools/call <host
name>``, the approval asked inside it; ``HostTasks.start`` too) is the parent of its client's ``CLIENT`` span, whose
trace context goes to the server in ``params._meta`` (SEP-414; OpenTelemetry semantic
conventions for MCP, gen-ai/mcp.md "Context propagation"), so the server's ``SERVER`` span is
the client span's child; over Streamable HTTP and stdio, on both protocol eras. In a
subprocess (host_traced.py): telemetry follows the application's global provider, set once per
process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS

HERE = Path(__file__).resolve().parent


def _one(spans: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [s for s in spans if s["kind"] == kind and s["name"] == name]
    assert len(found) == 1, (kind, name, [(s["kind"], s["name"]) for s in spans])
    return found[0]


@pytest.mark.parametrize("era", [LATEST_HANDSHAKE, LATEST_STATELESS])
def test_a_host_call_is_one_trace_over_http_and_stdio(era: str) -> None:
    out = subprocess.run(
        [sys.executable, str(HERE / "host_traced.py"), era],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=dict(os.environ),
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    spans = seen["host"]
    for server, server_spans in (("web", spans), ("local", seen["stdio_server"])):
        routed = _one(spans, "INTERNAL", f"host tools/call {server}__greet")
        assert routed["attributes"]["mcpbind.host.server"] == server
        assert routed["attributes"]["mcpbind.host.approval"] == "allow"
        assert routed["attributes"]["gen_ai.tool.name"] == "greet"
        # The approver ran inside the routing span.
        assert seen["asked"][f"{server}__greet"] == routed["span_id"]
        client = [
            s
            for s in spans
            if s["kind"] == "CLIENT"
            and s["name"] == "tools/call greet"
            and s["parent_id"] == routed["span_id"]
        ]
        assert len(client) == 1
        assert client[0]["trace_id"] == routed["trace_id"]
        assert client[0]["attributes"]["mcp.protocol.version"] == era
        incoming = [
            s
            for s in server_spans
            if s["kind"] == "SERVER"
            and s["name"] == "tools/call greet"
            and s["parent_id"] == client[0]["span_id"]
        ]
        assert len(incoming) == 1
        assert incoming[0]["trace_id"] == routed["trace_id"]
    # A tool started as a task through HostTasks: the same routing span over its client span.
    routed = _one(spans, "INTERNAL", "host tools/call web__build")
    assert routed["attributes"]["mcpbind.host.approval"] == "allow"
    started = [
        s
        for s in spans
        if s["kind"] == "CLIENT"
        and s["name"] == "tools/call build"
        and s["parent_id"] == routed["span_id"]
    ]
    assert len(started) == 1 and started[0]["trace_id"] == routed["trace_id"]
