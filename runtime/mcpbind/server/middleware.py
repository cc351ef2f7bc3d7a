"""Server middleware: one typed layer around every inbound request, on both protocol eras and
every transport (stdio, in-memory, Streamable HTTP sessions, 2026-07-28 POSTs, the 2025
sessionless mode).

A middleware is an async callable ``middleware(call, call_next)``: ``call`` is the
:class:`IncomingCall` (the method, its typed params, the handler :class:`~.context.Context`),
``await call_next(call)`` runs the rest of the chain and the handler and returns the result
(or raises the error the client gets). Register them in order on the server
(``Server(middleware=[...])`` or ``server.add_middleware(...)``): the first is the outermost.

They wrap the handler of each method (``Server.handlers``, custom methods included) and the
methods a session answers itself (``initialize``, ``ping``, ``logging/setLevel``,
``resources/subscribe``/``unsubscribe``). A layer with a ``methods`` attribute (a collection
of method names) wraps those methods only: the others run as if it were not registered. With
none registered (and OpenTelemetry not active, see :mod:`mcpbind.server.telemetry`) nothing is
wrapped: the request path is the same as without this module. The chain of each method is
built once per change of the handler table, not per request.

On 2026-07-28 a handler that asks the client for input (``ctx.elicit``) is run again on the
client's retry: each round is a request of its own, seen by the chain, and the round that ends
in ``input_required`` ends with the handler's cancellation (a ``CancelledError`` passing out
of ``call_next``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import msgspec

from .context import Context

if TYPE_CHECKING:
    from .principal import Principal

__all__ = [
    "IncomingCall",
    "Middleware",
    "Next",
    "SessionEnded",
    "SessionObserver",
    "TransportName",
    "compose",
    "is_tool_error",
    "session_started",
    "target_of",
]


class IncomingCall(msgspec.Struct):
    """One inbound request as a middleware sees it. ``params`` is the method's typed params
    (a ``CallToolRequestParams`` for ``tools/call``; a ``dict`` for a custom method; ``None``
    when the request had none); ``context`` is the handler's context (request id, protocol
    version, principal, ``_meta``, progress and logging). Pass a changed copy on
    (``msgspec.structs.replace(call, params=...)``) to change what the handler gets."""

    method: str
    params: Any
    context: Context

    @property
    def request_id(self) -> int | str | None:
        return self.context.request_id

    @property
    def protocol_version(self) -> str | None:
        return self.context.protocol_version

    @property
    def principal(self) -> Principal | None:
        """The authenticated caller, ``None`` without auth."""
        return self.context.principal

    @property
    def target(self) -> str | None:
        """What the call is about: the tool (``tools/call``) or prompt (``prompts/get``)
        name, the resource URI (``resources/read``, ``resources/subscribe``), else ``None``."""
        return target_of(self.params)

    @property
    def meta(self) -> dict[str, Any]:
        """The request's ``params._meta`` (``{}`` when it has none)."""
        if self.context.meta:
            return self.context.meta  # 2026-07-28: the per-request _meta, as the context has it
        params = self.params
        found = (
            params.get("_meta")
            if isinstance(params, dict)
            else getattr(params, "meta", None)
            if params is not None
            else None
        )
        return found if isinstance(found, dict) else {}


def is_tool_error(result: Any) -> bool:
    """A ``tools/call`` result with ``isError``: the tool failed, answered as a result."""
    flag = result.get("isError") if isinstance(result, dict) else getattr(result, "is_error", None)
    return flag is True


def target_of(params: Any) -> str | None:
    """The ``name`` or ``uri`` of a request's params (typed or a dict), if any."""
    if params is None:
        return None
    if isinstance(params, dict):
        value = params.get("name", params.get("uri"))
    else:
        value = getattr(params, "name", None) or getattr(params, "uri", None)
    return value if isinstance(value, str) else None


Next = Callable[[IncomingCall], Awaitable[Any]]
"""The rest of the chain: the next middleware, or the handler."""

Middleware = Callable[[IncomingCall, Next], Awaitable[Any]]
"""``async def middleware(call, call_next) -> result``."""

Handler = Callable[[Any, Context], Awaitable[Any]]


def compose(method: str, layers: Sequence[Middleware], handler: Handler) -> Handler:
    """``handler`` (``handler(params, ctx)``) wrapped by ``layers``, the first outermost; a
    layer whose ``methods`` leave ``method`` out is skipped (none left: ``handler`` itself)."""
    layers = [layer for layer in layers if _wraps(layer, method)]
    if not layers:
        return handler

    def innermost(call: IncomingCall) -> Awaitable[Any]:
        return handler(call.params, call.context)

    chain: Next = innermost
    for layer in reversed(layers):
        chain = _link(layer, chain)
    first = chain

    def layered(params: Any, ctx: Context) -> Awaitable[Any]:
        return first(IncomingCall(method, params, ctx))

    return layered


def _wraps(layer: Middleware, method: str) -> bool:
    """Whether ``layer`` wraps ``method``: every method, unless it names its ``methods``."""
    methods = getattr(layer, "methods", None)
    return methods is None or method in methods


def _link(layer: Middleware, call_next: Next) -> Next:
    def step(call: IncomingCall) -> Awaitable[Any]:
        return layer(call, call_next)

    return step


TransportName = Literal["stdio", "http"]
"""What carries a session: stdio, or HTTP (a Streamable HTTP session, the legacy endpoint)."""

SessionEnded = Callable[[str | None, BaseException | None], None]
"""Told that a session ended: its negotiated protocol version (``None``: it never had one),
and the exception that ended it (``None``: the client went away)."""


@runtime_checkable
class SessionObserver(Protocol):
    """A layer that also wants to know when sessions open and close (OpenTelemetry's
    session metrics, :class:`~.telemetry.ServerTelemetry`)."""

    def session_started(self, transport: TransportName | None) -> SessionEnded:
        """A session opened over ``transport`` (``None``: in memory); the callable returned
        is told when it ends."""
        ...


def session_started(
    layers: Sequence[object], transport: TransportName | None
) -> SessionEnded | None:
    """Tell the first :class:`SessionObserver` among ``layers`` (if any) that a session opened
    over ``transport``; the callable returned tells it the session ended."""
    for layer in layers:
        if isinstance(layer, SessionObserver):
            return layer.session_started(transport)
    return None
