"""A 2026-07-28 downstream client's input rounds without re-running the upstream call.

On 2026-07-28 a server asks its client for input by answering ``tools/call`` with an
``InputRequiredResult``; the client retries the call with the answers and the ``requestState``
it was given (basic/patterns/mrtr.mdx). A handler asking the usual way (``ctx.sample``) is
re-run from the start on the retry: for the gateway that re-ran the whole upstream call on
every round, the upstream tool included.

Here the upstream call runs in a task of its own, kept across rounds (:class:`Suspended`): its
asks (sampling, elicitation, by way of :mod:`.relay`) reach the downstream client as an
``InputRequiredResult`` whose ``requestState`` names the suspended call (a token the gateway
mints; the server seals it in its signed state, bound to the tool, its arguments and the
principal, mrtr.mdx §Server Requirements), and the retry's ``inputResponses`` are handed to
the pending asks: the upstream call goes on where it stopped. Bounded: a suspended call that
is not resumed within ``timeout`` seconds is cancelled (and with it the upstream request); an
authenticated caller (its principal) may have ``max_per_caller`` suspended calls at once, and
the unauthenticated callers, whom nothing tells apart on 2026-07-28, ``max_anonymous``
together.

Used for a 2026-07-28 call whose client declared sampling or elicitation (another call can
be asked nothing, and runs on the plain path) and for every retry naming a suspended call.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, RequestOptions, decoder

from ..protocol.errors import INVALID_PARAMS, INVALID_REQUEST, McpError
from ..server.context import Context, Peer
from ..server.mrtr import StatelessPeer
from ..server.tasks.support import ANONYMOUS, default_scope

if TYPE_CHECKING:
    from ..client import Client
    from .catalog import ToolEntry
    from .host import Host
    from .relay import Relay

__all__ = ["GatewayRounds", "Suspended"]

#: Event-loop turns granted after an ask, so asks made together join one round.
_SETTLE_STEPS: Final = 8
_REQUESTS = decoder(dict[str, t.InputRequest])
#: What a client must declare to be asked something (sampling, elicitation).
_ASKABLE: Final = ("sampling", "elicitation")

Forward = Callable[
    ["ToolEntry", "Client", Any, "msgspec.Raw | dict[str, Any] | None", Context], Awaitable[Any]
]
"""How the gateway calls the tool upstream (entry, client, raw arguments, arguments, context)."""


class _Ask:
    __slots__ = ("future", "info", "request")

    def __init__(self, info: MethodInfo[Any, Any], request: dict[str, Any]) -> None:
        self.info = info
        self.request = request
        self.future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()


class _RoundPeer:
    """The peer of the upstream call's context: its asks wait for the next round's answers;
    its notifications (progress, log messages) go to the round being served, if any."""

    def __init__(self, suspended: Suspended, current: Peer) -> None:
        self.suspended = suspended
        self.current = current
        self.live = True

    @property
    def log_level(self) -> str | None:
        return self.current.log_level

    def peer_has_capability(self, path: tuple[str, ...]) -> bool:
        return self.current.peer_has_capability(path)

    async def send_request(
        self,
        method: MethodInfo[Any, Any],
        params: Any,
        options: RequestOptions | None = None,
        *,
        key: str | None = None,
    ) -> Any:
        return await self.suspended.ask(method, params)

    async def send_notification(self, method: MethodInfo[Any, None], params: Any) -> None:
        if self.live:
            with contextlib.suppress(McpError, ConnectionError):
                await self.current.send_notification(method, params)


class Suspended:
    """One upstream call kept across the downstream client's input rounds."""

    def __init__(self, name: str, scope: str, peer: Peer) -> None:
        self.name = name
        self.scope = scope
        self.token: str | None = None
        self.peer = _RoundPeer(self, peer)
        self.asks: dict[str, _Ask] = {}
        self.count = 0
        self.changed = asyncio.Event()
        self.task: asyncio.Task[Any] | None = None
        self.timer: asyncio.TimerHandle | None = None

    async def ask(self, info: MethodInfo[Any, Any], params: Any) -> Any:
        """An ask of the upstream call: waits for the answer of a later round."""
        self.count += 1
        key = f"{info.method}#{self.count}"
        request = {"method": info.method, "params": {} if params is None else params}
        ask = self.asks[key] = _Ask(info, msgspec.to_builtins(request))
        self.changed.set()
        try:
            return await ask.future
        finally:
            self.asks.pop(key, None)

    def unanswered(self) -> dict[str, dict[str, Any]]:
        return {k: a.request for k, a in self.asks.items() if not a.future.done()}

    def answer(self, responses: Any) -> None:
        """The retry's ``inputResponses`` to the pending asks (others are ignored, mrtr.mdx
        §Error Handling); one not of the asked method's result shape is -32602."""
        if not isinstance(responses, Mapping):
            return
        for key, value in responses.items():
            ask = self.asks.get(key)
            if ask is None or ask.future.done():
                continue
            try:
                answer = decoder(ask.info.result_type).decode(msgspec.json.encode(value))
            except msgspec.ValidationError as exc:
                raise McpError(
                    INVALID_PARAMS,
                    f"Invalid params: inputResponses[{key!r}] is not a "
                    f"{ask.info.method} result: {exc}",
                ) from None
            ask.future.set_result(answer)

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.task is not None:
            self.task.cancel()


class GatewayRounds:
    """The gateway's suspended calls, by token (made by :class:`~.gateway.Gateway`)."""

    def __init__(
        self,
        host: Host,
        relay: Relay,
        forward: Forward,
        *,
        timeout: float = 300.0,
        max_per_caller: int = 16,
        max_anonymous: int = 256,
    ) -> None:
        self.host = host
        self.relay = relay
        self.forward = forward
        self.timeout = timeout
        self.max_per_caller = max_per_caller
        self.max_anonymous = max_anonymous
        #: Calls waiting for a round's answers, by the token their requestState carries.
        self.pending: dict[str, Suspended] = {}

    @staticmethod
    def wanted(params: t.CallToolRequestParams, peer: StatelessPeer) -> bool:
        """A 2026-07-28 call (``peer``: its client) that names a suspended call, or whose
        client can be asked something (declared sampling or elicitation: one test, as this
        runs on every 2026-07-28 call of the gateway)."""
        return isinstance(params.request_state, str) or peer.declares_any(_ASKABLE)

    async def call(
        self,
        params: t.CallToolRequestParams,
        ctx: Context,
        server: str,
        arguments: dict[str, Any] | None,
    ) -> Any:
        """The call's result, or an ``InputRequiredResult`` for what its upstream asks."""
        token = params.request_state
        if isinstance(token, str):
            suspended = self.pending.get(token)
            if suspended is None or suspended.scope != default_scope(ctx):
                raise McpError(
                    INVALID_PARAMS,
                    "Invalid params: the call this input was for has ended (it timed out or "
                    "was cancelled); call the tool again",
                )
            suspended.answer(params.input_responses)  # a malformed answer: -32602, kept
            if suspended.timer is not None:
                suspended.timer.cancel()
                suspended.timer = None
            suspended.peer.current = ctx.peer
            suspended.peer.live = True
        else:
            suspended = Suspended(params.name, default_scope(ctx), ctx.peer)
            upstream_ctx = msgspec.structs.replace(ctx, peer=suspended.peer)
            raw = params.arguments

            async def run() -> Any:
                # The approval's ask, then the upstream's, reach the caller as this call's
                # input requests (the gateway's own rounds: nothing asks through ``ctx``).
                with self.relay.serving(server, upstream_ctx):
                    entry, client = await self.host.authorize_tool_call(params.name, arguments)
                with self.relay.serving(entry.server, upstream_ctx):
                    return await self.forward(entry, client, raw, arguments, upstream_ctx)

            task = suspended.task = asyncio.get_running_loop().create_task(run())
            task.add_done_callback(lambda _: suspended.changed.set())
            task.add_done_callback(_retrieved)
        try:
            return await self._next(suspended)
        except BaseException:
            # The downstream request ended otherwise (cancelled, the client went away).
            self._drop(suspended)
            raise
        finally:
            suspended.peer.live = False

    async def _next(self, suspended: Suspended) -> Any:
        task = suspended.task
        assert task is not None
        while True:
            if task.done():
                self._drop(suspended)
                return task.result()
            if suspended.unanswered():
                for _ in range(_SETTLE_STEPS):  # asks made together join this round
                    await asyncio.sleep(0)
                if not task.done():
                    return self._suspend(suspended)
                continue
            suspended.changed.clear()
            await suspended.changed.wait()

    def _suspend(self, suspended: Suspended) -> t.InputRequiredResult:
        """Keep the call for the retry; the asks as the downstream's input round."""
        if suspended.token is None:
            waiting = sum(1 for s in self.pending.values() if s.scope == suspended.scope)
            limit = self.max_anonymous if suspended.scope == ANONYMOUS else self.max_per_caller
            if waiting >= limit:
                self._drop(suspended)
                raise McpError(
                    INVALID_REQUEST,
                    f"Too many calls waiting for input ({limit}); answer or abandon one first",
                )
            suspended.token = secrets.token_urlsafe(18)
            self.pending[suspended.token] = suspended
        suspended.timer = asyncio.get_running_loop().call_later(self.timeout, self._drop, suspended)
        return t.InputRequiredResult(
            input_requests=_REQUESTS.decode(msgspec.json.encode(suspended.unanswered())),
            request_state=suspended.token,
            result_type="input_required",
        )

    def _drop(self, suspended: Suspended) -> None:
        """Forget the call and cancel it upstream if it still runs."""
        if suspended.token is not None:
            self.pending.pop(suspended.token, None)
        suspended.cancel()


def _retrieved(task: asyncio.Task[Any]) -> None:
    """A call nobody waits for any more ends without a 'never retrieved' warning."""
    if not task.cancelled():
        task.exception()
