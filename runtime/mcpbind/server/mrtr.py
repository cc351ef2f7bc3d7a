"""Multi round-trip requests on the server (basic/patterns/mrtr.mdx).

A handler asks the client for input with the same calls on both eras (``await ctx.elicit``,
``ctx.sample``, ``ctx.list_roots``). On 2026-07-28 there are no server-to-client requests, so
the handler is *re-run from the start* on every retry: an ask whose answer the retry carries
(in ``inputResponses``, or from an earlier round inside the signed ``requestState``) returns it
at once; an ask without one parks, and once every concurrent ask has parked the run is
cancelled and the asks become one ``InputRequiredResult``. Keys are the handler's own
(``key=``) or ``"<method>#<n>"`` by call order, which is stable because the run is replayed
deterministically. Side effects before an ask are repeated on each round: keep them idempotent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec

from mcpbind_types._common import MethodInfo, RequestOptions, decoder

from .._asyncio import Raised, carried, is_cancellation
from .._lazy import LazyModule
from ..protocol import INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, McpError
from ..protocol.capabilities import declares_any, has_capability
from ..protocol.subcaps import subcapability_refusal
from ..protocol.wire import encode_notification

if TYPE_CHECKING:
    import asyncio
else:  # imported when a loop first uses it, not with mcpbind (issue 15, cold start)
    asyncio = LazyModule("asyncio", globals())


__all__ = ["MRTR_METHODS", "InputRound", "Outcome", "StatelessPeer", "run_with_inputs"]

MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
"""mrtr.mdx, Supported Requests: the only requests that may answer ``input_required``."""

_SETTLE_STEPS: Final = 8
"""Event-loop turns granted after the first parked ask, so asks started together (gather) all
join the same round."""

Emit = Callable[[bytes], Awaitable[None]]
"""Where one request's notifications go (encoded JSON-RPC messages)."""
EmitFor = Callable[[int | str, bytes], Awaitable[None]]
"""Where a connection's requests' notifications go, by request id."""


class InputRound:
    """The asks of one run: answers available to it, and the requests it could not satisfy."""

    def __init__(self, responses: Mapping[str, msgspec.Raw], caps: Mapping[str, Any]) -> None:
        self.available = dict(responses)
        self.caps = caps
        self.consumed: dict[str, msgspec.Raw] = {}
        self.asked: dict[str, dict[str, Any]] = {}
        #: Called when an ask parks (set by :func:`run_with_inputs`).
        self.wake: Callable[[], None] = _nothing
        self._count = 0

    def next_key(self, method: str, key: str | None) -> str:
        self._count += 1
        return key if key is not None else f"{method}#{self._count}"

    async def ask(self, info: MethodInfo[Any, Any], params: Any, key: str | None) -> Any:
        name = self.next_key(info.method, key)
        raw = self.available.get(name)
        if raw is not None:
            try:
                value = decoder(info.result_type).decode(raw)
            except msgspec.ValidationError as exc:
                message = (
                    f"Invalid params: inputResponses[{name!r}] is not a {info.method} result: {exc}"
                )
                raise McpError(INVALID_PARAMS, message) from None
            self.consumed[name] = raw
            return value
        if info.capability is not None and not has_capability(self.caps, info.capability):
            # mrtr.mdx: never ask for what the client did not declare; basic/index.mdx: -32021.
            cap = info.capability[0]
            raise McpError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: {cap}",
                {"requiredCapabilities": {cap: {}}},
            )
        refusal = subcapability_refusal(info.method, params, self.caps)
        if refusal is not None:  # sampling.mdx §Tools in Sampling, elicitation.mdx §Capabilities
            need, why = refusal
            raise McpError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: {'.'.join(need)} ({why})",
                {"requiredCapabilities": {need[0]: {need[1]: {}}}},
            )
        if name in self.asked:
            raise McpError(INTERNAL_ERROR, f"input request key {name!r} used twice in one request")
        request: dict[str, Any] = {"method": info.method}
        request["params"] = {} if params is None else msgspec.to_builtins(params)
        self.asked[name] = request
        self.wake()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover


class StatelessPeer(msgspec.Struct):
    """The handler context's peer for one 2026-07-28 request (implements ``Peer``): a Struct,
    made on every request without a Python ``__init__`` frame. Built positionally: the
    client's capabilities, the request's log level, where its notifications go, its input
    round (``None``: it cannot ask) and its method."""

    _caps: Mapping[str, Any]
    _log_level: str | None
    _emit: Emit | None
    _round: InputRound | None
    _method: str

    @property
    def log_level(self) -> str | None:
        # logging.mdx (2026-07-28): messages only for requests that asked for a level.
        return self._log_level

    def peer_has_capability(self, path: tuple[str, ...]) -> bool:
        return has_capability(self._caps, path)

    def declares_any(self, names: tuple[str, ...]) -> bool:
        """Whether the client declared any of the top-level capabilities ``names``
        (:func:`~mcpbind.protocol.capabilities.declares_any`)."""
        return declares_any(self._caps, names)

    async def send_request(
        self,
        method: MethodInfo[Any, Any],
        params: Any,
        options: RequestOptions | None = None,
        *,
        key: str | None = None,
    ) -> Any:
        if self._round is None:
            raise McpError(
                INTERNAL_ERROR,
                f"{self._method} cannot ask the client for input on protocol 2026-07-28 "
                "(mrtr.mdx: only tools/call, prompts/get and resources/read)",
            )
        return await self._round.ask(method, params, key)

    async def send_notification(self, method: MethodInfo[Any, None], params: Any) -> None:
        if self._emit is not None:
            await self._emit(encode_notification(method.method, params))


class Outcome:
    """How a run ended: a result, or the input requests it is waiting for."""

    __slots__ = ("asked", "result")

    def __init__(self, result: Any = None, asked: dict[str, dict[str, Any]] | None = None) -> None:
        self.result = result
        self.asked = asked


async def run_with_inputs(call: Callable[[], Awaitable[Any]], round_: InputRound) -> Outcome:
    """Run ``call`` until it returns (or raises) or every ask it made is parked.

    A plain task and a future: several times cheaper than a task group per request, which
    matters because every tools/call, prompts/get and resources/read comes through here."""
    loop = asyncio.get_running_loop()
    wake: asyncio.Future[None] = loop.create_future()

    def wake_up(*_: object) -> None:
        if not wake.done():
            wake.set_result(None)

    round_.wake = wake_up
    task = loop.create_task(_awaited(call))
    task.add_done_callback(wake_up)
    try:
        await wake
        if not task.done():
            for _ in range(_SETTLE_STEPS):  # let asks started together join this round
                await asyncio.sleep(0)
                if task.done():
                    break
            else:
                task.cancel()
                await asyncio.wait({task})
                return Outcome(asked=round_.asked)
    except BaseException:
        task.cancel()
        raise
    if task.cancelled():
        raise McpError(INTERNAL_ERROR, "the handler was cancelled")
    return Outcome(result=Raised.reraise(task.result()))


async def _awaited(call: Callable[[], Awaitable[Any]]) -> Any:
    try:
        return await call()
    except BaseException as exc:  # raised again by the awaiting request (Raised.reraise)
        if carried(exc) and not is_cancellation(exc):
            return Raised(exc)
        raise


def _nothing() -> None:
    return None
