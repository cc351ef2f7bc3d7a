"""OpenTelemetry for the client side (the ``otel`` extra), built as client middleware
(:mod:`.middleware`): a ``CLIENT`` span per request sent, named and attributed as the
server's (:mod:`mcpbind.server.telemetry`), whose trace context goes to the server in the
request's ``params._meta`` (``traceparent``, ``tracestate``: SEP-414) on both eras; metrics
``mcp.client.operation.duration`` (s), ``mcp.client.active_requests`` and
``mcp.client.errors``.

On, with no mcpbind setting, wherever the application configured a tracer or meter provider
before the client connects; or add :class:`ClientTelemetry` to ``Client(middleware=...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ..connection import OutgoingCall, SendNext
from ..server.middleware import is_tool_error, target_of
from ..server.semconv import (
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

__all__ = ["ClientTelemetry", "client_telemetry", "with_trace_context"]


def with_trace_context(params: Any, carrier: dict[str, str]) -> Any:
    """``params`` with ``carrier`` (``traceparent``, ``tracestate``) added to its ``_meta``:
    a params Struct (``_meta`` absent, a dict, or the 2026-07-28 pipeline's pre-encoded
    ``msgspec.Raw``), a dict, or ``None`` (made ``{"_meta": carrier}``). Anything else is
    sent as it is."""
    if not carrier:
        return params
    if params is None:
        return {"_meta": carrier}
    if isinstance(params, dict):
        meta = params.get("_meta")
        return {**params, "_meta": {**meta, **carrier} if isinstance(meta, dict) else carrier}
    meta = getattr(params, "meta", None)
    if meta is None and not hasattr(params, "meta"):
        return params
    if isinstance(meta, msgspec.Raw):
        raw = bytes(meta)
        added = msgspec.json.encode(carrier)
        merged = added if raw.strip() == b"{}" else added[:-1] + b"," + raw.lstrip()[1:]
        return msgspec.structs.replace(params, meta=msgspec.Raw(merged))
    if isinstance(meta, dict):
        return msgspec.structs.replace(params, meta={**meta, **carrier})
    return msgspec.structs.replace(params, meta=dict(carrier))


class ClientTelemetry:
    """The client's OpenTelemetry middleware. ``None`` providers: the global ones."""

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        from opentelemetry import metrics, propagate, trace

        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self._inject = propagate.inject
        self._kind = trace.SpanKind.CLIENT
        self._error = trace.Status(trace.StatusCode.ERROR)
        self.instruments = instruments("client", meter)

    async def __call__(self, call: OutgoingCall, send_next: SendNext) -> Any:
        method = call.method
        params = call.params
        target = target_of(params)
        version = call.connection.core.version
        attributes = span_attributes(method, target, version)
        measure = self.instruments
        started = measure.begin(method)
        failure: str | None = None
        with self.tracer.start_as_current_span(
            span_name(method, target),
            kind=self._kind,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            carrier: dict[str, str] = {}
            self._inject(carrier)  # this span's context (SEP-414)
            call = msgspec.structs.replace(call, params=with_trace_context(params, carrier))
            try:
                result = await send_next(call)
            except BaseException as exc:
                if isinstance(exc, Exception):
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


_auto: dict[tuple[int, int], ClientTelemetry] = {}


def client_telemetry() -> ClientTelemetry | None:
    """The middleware for the application's global providers, ``None`` when it configured
    none (one instance per pair of providers)."""
    providers = configured_providers()
    if providers == (None, None):
        return None
    key = (id(providers[0]), id(providers[1]))
    found = _auto.get(key)
    if found is None:
        found = _auto[key] = ClientTelemetry(*providers)
    return found
