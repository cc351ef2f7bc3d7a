"""The built-in server middleware (:mod:`.middleware`): :class:`Timing` (a duration and an
outcome per request, logged or handed to you), :class:`RateLimit` (a token bucket per caller)
and :class:`ErrorReport` (failures handed to your reporter)."""

from __future__ import annotations

import inspect
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable
from typing import Any, Final

from .._asyncio import is_cancellation
from ..protocol import McpError
from .middleware import IncomingCall, Next, is_tool_error

__all__ = ["RATE_LIMITED", "ErrorReport", "RateLimit", "Timing", "ToolFailed"]

RATE_LIMITED: Final = -32000
"""The JSON-RPC code of a request refused by :class:`RateLimit`. JSON-RPC 2.0 leaves -32000 to
-32099 to implementations; MCP has taken codes in that range (-32002, -32020 to -32022, -32042),
so mcpbind uses the first, generic one, as FastMCP's rate limiting does: a client that handles
one server's limit handles the other's. ``data`` carries ``retryAfterMs``."""

_OUTCOME_OK: Final = "ok"


def _outcome(exc: BaseException) -> str:
    if is_cancellation(exc):
        return "cancelled"
    return f"error {exc.code}" if isinstance(exc, McpError) else f"error {type(exc).__name__}"


class Timing:
    """Measure every request: ``record(call, seconds, outcome)`` (``outcome``: ``"ok"``,
    ``"tool_error"``, ``"error <code or exception type>"`` or ``"cancelled"``), by default a
    line on the ``mcpbind.server.timing`` logger at ``level``."""

    def __init__(
        self,
        record: Callable[[IncomingCall, float, str], None] | None = None,
        *,
        level: int = logging.INFO,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.record = record or self._log
        self.level = level
        self.clock = clock
        self.logger = logging.getLogger("mcpbind.server.timing")

    async def __call__(self, call: IncomingCall, call_next: Next) -> Any:
        started = self.clock()
        try:
            result = await call_next(call)
        except BaseException as exc:
            self.record(call, self.clock() - started, _outcome(exc))
            raise
        outcome = "tool_error" if is_tool_error(result) else _OUTCOME_OK
        self.record(call, self.clock() - started, outcome)
        return result

    def _log(self, call: IncomingCall, seconds: float, outcome: str) -> None:
        target = call.target
        name = call.method if target is None else f"{call.method} {target}"
        self.logger.log(self.level, "%s %.3f ms %s", name, seconds * 1000, outcome)


class RateLimit:
    """A token bucket per caller: ``rate`` requests a second on average, bursts of up to
    ``burst`` (default: ``rate``, at least 1). A request beyond it is refused at once with
    :data:`RATE_LIMITED` (``"Rate limit exceeded"``, ``data.retryAfterMs``) and its handler
    does not run.

    The caller (``key``, by default :meth:`caller`): the authenticated principal, else the
    session (stdio, in-memory, a Streamable HTTP session); anonymous requests without a session
    (2026-07-28, the sessionless HTTP mode) share one bucket. ``key`` may return ``None`` for a
    request never limited. ``methods``: only these are counted (default: all but ``ping`` and
    ``initialize``). At most ``max_callers`` buckets are kept (the least recently used goes)."""

    def __init__(
        self,
        rate: float,
        burst: float | None = None,
        *,
        key: Callable[[IncomingCall], Hashable | None] | None = None,
        methods: Collection[str] | None = None,
        max_callers: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.burst = max(1.0, float(rate if burst is None else burst))
        self.key = key or self.caller
        self.methods = None if methods is None else frozenset(methods)
        self.max_callers = max_callers
        self.clock = clock
        #: Tokens left and when they were counted, per caller.
        self._buckets: OrderedDict[Hashable, list[float]] = OrderedDict()

    @staticmethod
    def caller(call: IncomingCall) -> Hashable | None:
        """The default key: the principal, else the session, else ``"anonymous"``."""
        principal = call.principal
        if principal is not None:
            return ("principal", principal.key)
        from .session import ServerSession  # a session's requests share its peer

        peer = call.context.peer
        if isinstance(peer, ServerSession):
            return ("session", id(peer))
        return "anonymous"

    async def __call__(self, call: IncomingCall, call_next: Next) -> Any:
        method = call.method
        limited = method not in _NEVER_LIMITED if self.methods is None else method in self.methods
        if limited:
            key = self.key(call)
            if key is not None:
                self._take(key)
        return await call_next(call)

    def _take(self, key: Hashable) -> None:
        now = self.clock()
        buckets = self._buckets
        bucket = buckets.get(key)
        if bucket is None:
            bucket = buckets[key] = [self.burst, now]
            if len(buckets) > self.max_callers:
                buckets.popitem(last=False)
        else:
            buckets.move_to_end(key)
            bucket[0] = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)
            bucket[1] = now
        if bucket[0] < 1:
            wait_ms = math.ceil((1 - bucket[0]) / self.rate * 1000)
            raise McpError(
                RATE_LIMITED,
                f"Rate limit exceeded: retry in {wait_ms} ms",
                {"retryAfterMs": wait_ms},
            )
        bucket[0] -= 1


_NEVER_LIMITED: Final = frozenset({"initialize", "ping"})


class ToolFailed(Exception):
    """What :class:`ErrorReport` reports for a ``tools/call`` answered with ``isError`` (the
    tool's own failure, already turned into a result): the result's text."""


class ErrorReport:
    """Hand every failed request to ``report(call, exc)`` (sync or async; its own failure is
    logged, never raised): a handler's unexpected exception, and a tool result with ``isError``
    as :class:`ToolFailed`. ``protocol_errors``: also errors chosen on purpose (``McpError``:
    invalid params, not found, rate limited). Cancellation is never a failure."""

    def __init__(
        self,
        report: Callable[[IncomingCall, BaseException], Any],
        *,
        protocol_errors: bool = False,
        tool_errors: bool = True,
    ) -> None:
        self.report = report
        self.protocol_errors = protocol_errors
        self.tool_errors = tool_errors
        self.logger = logging.getLogger("mcpbind.server")

    async def __call__(self, call: IncomingCall, call_next: Next) -> Any:
        try:
            result = await call_next(call)
        except BaseException as exc:
            if not is_cancellation(exc) and (self.protocol_errors or not isinstance(exc, McpError)):
                await self._report(call, exc)
            raise
        if self.tool_errors and is_tool_error(result):
            await self._report(call, ToolFailed(_text_of(result)))
        return result

    async def _report(self, call: IncomingCall, exc: BaseException) -> None:
        try:
            outcome = self.report(call, exc)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:
            self.logger.exception("the error reporter failed")


def _text_of(result: Any) -> str:
    content = result.get("content") if isinstance(result, dict) else getattr(result, "content", ())
    texts = [getattr(block, "text", None) for block in content or ()]
    return "\n".join(text for text in texts if isinstance(text, str)) or "tool error"
