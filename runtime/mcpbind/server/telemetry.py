"""OpenTelemetry for the server side (the ``otel`` extra: ``opentelemetry-api`` only), built
as middleware (:mod:`.middleware`).

Named after the OpenTelemetry semantic conventions for MCP (gen-ai/mcp.md, Development):

- a ``SERVER`` span per request, ``"{mcp.method.name} {target}"`` (target: the tool or prompt
  name) with ``mcp.method.name``, ``jsonrpc.request.id``, ``mcp.protocol.version``,
  ``mcp.session.id`` (Streamable HTTP sessions), ``gen_ai.tool.name`` / ``gen_ai.prompt.name``
  / ``mcp.resource.uri``, ``gen_ai.operation.name`` (``execute_tool``), and on failure
  ``error.type`` (the JSON-RPC code, an exception's type, or ``tool_error`` for a tool result
  with ``isError``) and ``rpc.response.status_code``. No argument values.
- its parent: the trace context in the request's ``params._meta`` (``traceparent``,
  ``tracestate``: SEP-414), else in the request's HTTP headers (``ctx.headers`` where the
  transport gives them), else the current context (an ASGI instrumentation's span).
- metrics: ``mcp.server.operation.duration`` (s), ``mcp.server.active_requests`` (in flight),
  ``mcp.server.errors`` (by ``error.type``), and per session (stdio, in memory, Streamable HTTP
  and the legacy endpoint; a 2026-07-28 request has none) ``mcp.server.session.duration`` (s,
  the conventions' histogram, with ``network.transport``, ``network.protocol.name``,
  ``mcp.protocol.version`` and ``error.type``) and ``mcp.server.active_sessions`` (open).

It is on, with no mcpbind setting, wherever the application configured a tracer or meter
provider (``trace.set_tracer_provider``, ``metrics.set_meter_provider`` or the
``opentelemetry-instrument`` agent) before the server first serves; add
:class:`ServerTelemetry` to ``Server(middleware=...)`` yourself to choose its place in the chain
or give it providers of its own. Without ``opentelemetry`` imported by the application, this
module is never imported.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._asyncio import is_cancellation
from .middleware import IncomingCall, Next, SessionEnded, TransportName, is_tool_error
from .semconv import (
    DURATION_BUCKETS,
    SCOPE,
    configured_providers,
    error_type,
    instruments,
    span_attributes,
    span_name,
)

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

__all__ = ["ServerTelemetry", "server_telemetry", "session_attributes"]


def session_attributes(transport: TransportName | None) -> dict[str, str]:
    """The conventions' network attributes of a session over ``transport`` (stdio: a pipe;
    Streamable HTTP and the legacy endpoint: HTTP over TCP; in memory: none)."""
    if transport == "stdio":
        return {"network.transport": "pipe"}
    if transport == "http":
        return {"network.transport": "tcp", "network.protocol.name": "http"}
    return {}


def _carrier(call: IncomingCall) -> Mapping[str, Any] | None:
    """Where the request's trace context is: its ``_meta``, else its HTTP headers."""
    meta = call.meta
    if "traceparent" in meta:
        return meta
    headers = getattr(call.context, "headers", None)  # set by HTTP transports (issue 32)
    if isinstance(headers, Mapping) and "traceparent" in headers:
        return headers
    return None


def _session_id() -> str | None:
    """The Streamable HTTP session serving this request, if any (read where the HTTP layer
    keeps it, without importing it)."""
    module = sys.modules.get("mcpbind.http.server.http_session")
    if module is None:
        return None
    session = module.current_http_session.get()
    found = getattr(session, "id", None)
    return found if isinstance(found, str) else None


class ServerTelemetry:
    """The server's OpenTelemetry middleware: a span and metrics per request, and the session
    metrics (a :class:`~.middleware.SessionObserver`). ``None`` providers: the global ones."""

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        from opentelemetry import metrics, propagate, trace

        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self._extract = propagate.extract
        self._kind = trace.SpanKind.SERVER
        self._error = trace.Status(trace.StatusCode.ERROR)
        self.instruments = instruments("server", meter)
        self.session_duration = meter.create_histogram(
            "mcp.server.session.duration",
            unit="s",
            description="MCP session duration as observed on the server",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.sessions = meter.create_up_down_counter(
            "mcp.server.active_sessions", unit="{session}", description="MCP sessions open"
        )

    async def __call__(self, call: IncomingCall, call_next: Next) -> Any:
        method = call.method
        target = call.target
        ctx = call.context
        attributes = span_attributes(method, target, ctx.protocol_version)
        if ctx.request_id is not None:
            attributes["jsonrpc.request.id"] = str(ctx.request_id)
        session = _session_id()
        if session is not None:
            attributes["mcp.session.id"] = session
        carrier = _carrier(call)
        parent = self._extract(carrier) if carrier is not None else None
        measure = self.instruments
        started = measure.begin(method)
        failure: str | None = None
        with self.tracer.start_as_current_span(
            span_name(method, target),
            context=parent,
            kind=self._kind,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await call_next(call)
            except BaseException as exc:
                if not is_cancellation(exc):
                    failure, code = error_type(exc)
                    span.set_attribute("error.type", failure)
                    if code is not None:
                        span.set_attribute("rpc.response.status_code", code)
                    span.set_status(self._error)
                raise
            else:
                if method == "tools/call" and is_tool_error(result):
                    failure = "tool_error"
                    span.set_attribute("error.type", failure)
                    span.set_status(self._error)
                return result
            finally:
                measure.end(method, started, failure)

    def session_started(self, transport: TransportName | None) -> SessionEnded:
        """Count a session open over ``transport``; the callable counts it closed, with its
        duration, negotiated version and (when it ended by an exception) ``error.type``."""
        network = session_attributes(transport)
        self.sessions.add(1, network)
        started = time.perf_counter()

        def ended(version: str | None, failure: BaseException | None) -> None:
            self.sessions.add(-1, network)
            measured = dict(network)
            if version is not None:
                measured["mcp.protocol.version"] = version
            if failure is not None and not is_cancellation(failure):
                measured["error.type"] = error_type(failure)[0]
            self.session_duration.record(time.perf_counter() - started, measured)

        return ended


_auto: dict[tuple[int, int], ServerTelemetry] = {}


def server_telemetry() -> ServerTelemetry | None:
    """The middleware for the application's global providers, ``None`` when it configured
    none (one instance per pair of providers)."""
    providers = configured_providers()
    if providers == (None, None):
        return None
    key = (id(providers[0]), id(providers[1]))
    found = _auto.get(key)
    if found is None:
        found = _auto[key] = ServerTelemetry(*providers)
    return found
