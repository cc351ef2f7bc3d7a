"""OpenTelemetry for the Host: a span for routing one call (its approval included), the parent
of the span of the Host's client (:mod:`mcpbind.client.telemetry`), whose trace context goes
on to the server in ``params._meta`` (SEP-414): a Host call is one trace across the Host, its
client and the server.

On, as the client's and the server's telemetry, wherever the application imported
OpenTelemetry and configured a tracer provider; otherwise :func:`routing` costs a dictionary
lookup and opens nothing.
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .._asyncio import is_cancellation

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["Route", "current_route", "routing"]


class Route:
    """What the routing span learns as the call goes on (a no-op without a span)."""

    __slots__ = ("_method", "_span", "traced")

    def __init__(self, span: Span | None, method: str) -> None:
        self._span = span
        self._method = method
        #: Whether a span records the route (``False``: :meth:`to` and :meth:`approved` do
        #: nothing, so a caller on every call may skip them).
        self.traced = span is not None

    def to(self, server: str, target: str | None) -> None:
        """The call goes to ``server``'s ``target`` (its own name of the tool or prompt, or
        the resource's URI): the conventions' attribute for it, as on the client's span."""
        if self._span is not None:
            from ..server.semconv import span_attributes

            self._span.set_attribute("mcpbind.host.server", server)
            self._span.set_attributes(span_attributes(self._method, target, None))

    def approved(self, verdict: str) -> None:
        """The approval policy's verdict (``allow`` or ``deny``)."""
        if self._span is not None:
            self._span.set_attribute("mcpbind.host.approval", verdict)


_NOWHERE = Route(None, "")
_current: contextvars.ContextVar[Route] = contextvars.ContextVar("mcpbind_host_route")


def current_route() -> Route:
    """The :class:`Route` of the call being routed (a no-op one outside :func:`routing`):
    what the approval step tells where the call goes and what was decided."""
    return _current.get(_NOWHERE)


@contextmanager
def routing(method: str, name: str) -> Iterator[Route]:
    """A span ``"host {method} {name}"`` (``name``: the Host's name for the tool, prompt or
    resource) around routing and running one call, current while it runs; a :class:`Route`
    that records where it went (also :func:`current_route` inside). Without a configured
    tracer provider, no span."""
    if "opentelemetry.trace" not in sys.modules:
        yield Route(None, method)
        return
    from ..server.semconv import SCOPE, configured_providers, error_type

    provider, _ = configured_providers()
    if provider is None:
        yield Route(None, method)
        return
    from opentelemetry import trace

    tracer = trace.get_tracer(SCOPE, tracer_provider=provider)
    attributes: dict[str, Any] = {"mcp.method.name": method, "mcpbind.host.name": name}
    with tracer.start_as_current_span(
        f"host {method} {name}",
        kind=trace.SpanKind.INTERNAL,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        route = Route(span, method)
        token = _current.set(route)
        try:
            yield route
        except BaseException as exc:
            if not is_cancellation(exc):
                span.set_attribute("error.type", error_type(exc)[0])
                span.set_status(trace.Status(trace.StatusCode.ERROR))
            raise
        finally:
            _current.reset(token)
