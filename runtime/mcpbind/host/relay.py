"""The gateway's relay: what an upstream server asks or says during a call, taken to the
downstream client whose request that call serves.

An upstream server's ``sampling/createMessage`` and ``elicitation/create`` (handshake era: a
request on its own connection, not tied to one of ours on stdio) and its log messages belong
to the downstream request its current call serves. The relay keeps, per upstream server, the
downstream requests in flight to it (:meth:`Relay.serving`) and takes each ask to the newest
one, for as long as that request runs (2025-11-25 client/sampling.mdx and
client/elicitation.mdx: the client, here the downstream one, decides). While requests of more
than one downstream session run on the same upstream server, its asks are refused and its log
messages kept in the Host only: the ask does not say which call it belongs to, and one client
must never see another's. A downstream client
that did not declare the capability gets nothing: the upstream server gets a clear error.

It also asks the downstream client for the Host's approvals (:meth:`Relay.approve`): a call
the policy marks ``ask`` becomes a form elicitation to the client that made it, and is refused
when that client did not declare elicitation.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import msgspec

from mcpbind_types import unified as t

from ..protocol import INTERNAL_ERROR, METHOD_NOT_FOUND, McpError
from ..server.context import Context
from .approval import Approver, ToolCallRequest

__all__ = ["APPROVE_FIELD", "MAX_PENDING_COMPLETIONS", "Downstream", "Relay", "undeclared"]

R = TypeVar("R")

#: URL-mode elicitations whose completion is still passed on (a server that never announces
#: completions cannot grow the table without bound).
MAX_PENDING_COMPLETIONS = 1000

#: The boolean field of the approval form (accepted with it ``false``: denied).
APPROVE_FIELD = "approve"


class Downstream(msgspec.Struct, eq=False):
    """One downstream request in flight to an upstream server: the relay's record of it
    (:meth:`Relay.serving`), made on every routed call, so a Struct (made without running a
    Python frame). ``context``: its handler context; ``task``: the task it runs in (the
    Host's approver asks the request whose task awaits the approval, :meth:`Relay.approve`);
    ``records``: the relay's list of its server's requests, which holds it until :meth:`end`;
    ``done``: it has ended. A ``with`` block ends it on leaving."""

    server: str
    context: Context
    task: asyncio.Task[Any] | None
    records: list[Downstream]
    done: bool = False
    waited: anyio.Event | None = None

    @property
    def ended(self) -> anyio.Event:
        """Set once the request has ended (made when something first waits for it: most
        calls are never asked anything)."""
        event = self.waited
        if event is None:
            event = self.waited = anyio.Event()
            if self.done:
                event.set()
        return event

    def end(self) -> None:
        """The request has ended: out of the relay."""
        records = self.records
        if records[-1] is self:
            records.pop()
        else:  # not the newest: another request to the server began since
            records.remove(self)
        self.done = True
        if self.waited is not None:
            self.waited.set()

    def __enter__(self) -> Downstream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


class Relay:
    """The downstream requests in flight, by upstream server; the relays to them."""

    def __init__(self, fallback_approver: Approver | None = None) -> None:
        #: The downstream requests in flight to each server, oldest first (a server's list
        #: stays, empty, when its last one ends: the next call reuses it).
        self.inflight: dict[str, list[Downstream]] = {}
        #: Asked for a call that no downstream request made (``Host.call_tool`` from Python).
        self.fallback_approver = fallback_approver
        #: URL-mode elicitations passed down, by (server, elicitation id): how to announce
        #: each one's completion to the client that was asked.
        self.completions: dict[tuple[str, str], Callable[[], Awaitable[None]]] = {}

    def serving(self, server: str, context: Context) -> Downstream:
        """From now until the record returned ends (:meth:`Downstream.end`, or the end of a
        ``with`` block on it), what ``server`` asks or logs goes to ``context``'s client, and
        so do the Host's approvals asked in this task. (Entered here, as ``open`` opens: the
        gateway's tools/call ends it in a ``finally``, without a block's two method frames.)"""
        records = self.inflight.get(server)
        if records is None:
            records = self.inflight[server] = []
        record = Downstream(server, context, asyncio.current_task(), records)
        records.append(record)
        return record

    def newest(self, server: str) -> Downstream | None:
        """The newest downstream request in flight to ``server``; ``None`` when none is, or
        when requests of more than one downstream session are (:meth:`ambiguous`)."""
        records = self.inflight.get(server)
        if not records or self.ambiguous(server):
            return None
        return records[-1]

    def ambiguous(self, server: str) -> bool:
        """Whether requests of more than one downstream session are in flight to ``server``:
        an ask of it then cannot be told apart (a handshake-era ask is not tied to the call
        that caused it), and taking it to the newest could show one client what another's
        call asked."""
        records = self.inflight.get(server)
        if not records or len(records) == 1:
            return False
        first = records[0].context.peer
        return any(record.context.peer is not first for record in records)

    # ------------------------------------------------------------------ upstream -> downstream
    async def sample(
        self, server: str, params: t.CreateMessageRequestParams
    ) -> t.CreateMessageResult:
        """``sampling/createMessage`` of ``server``, asked of the downstream client (after the
        Host's review, :class:`~.gate.Gate`)."""
        record = self._asked(server, "sampling", ("sampling",))
        return await _within(record, lambda: record.context.sample(params))

    async def elicit(self, server: str, params: Any) -> t.ElicitResult:
        """``elicitation/create`` of ``server``, asked of the downstream client. A URL-mode
        one's completion, announced later by the server, is passed on (:meth:`completed`)."""
        url = isinstance(params, t.ElicitRequestURLParams)
        record = self._asked(server, "elicitation", ("elicitation", "url") if url else ())
        if url and isinstance(params.elicitation_id, str):
            key = (server, params.elicitation_id)
            self.completions[key] = record.context.elicitation_completion(params.elicitation_id)
            while len(self.completions) > MAX_PENDING_COMPLETIONS:  # never completed: oldest go
                del self.completions[next(iter(self.completions))]
        return await _within(record, lambda: record.context.elicit(params))

    async def completed(self, server: str, elicitation_id: str) -> None:
        """``notifications/elicitation/complete`` of ``server``: to the client it asked
        (elicitation.mdx §Completion Notifications for URL Mode Elicitation); an id it did
        not send through here is ignored."""
        complete = self.completions.pop((server, elicitation_id), None)
        if complete is not None:
            await complete()

    async def log(self, server: str, params: t.LoggingMessageNotificationParams) -> None:
        """A log message of ``server``, to the client of its newest call (at its level)."""
        record = self.newest(server)
        if record is None:
            return  # no call of ours running there, or several clients': kept in Host.logs only
        logger = params.logger if isinstance(params.logger, str) else server
        await record.context.log(params.level, params.data, logger)

    def _asked(self, server: str, what: str, path: tuple[str, ...]) -> Downstream:
        if self.ambiguous(server):
            raise McpError(
                INTERNAL_ERROR,
                f"{what} refused: calls of several clients of the gateway are running on "
                f"{server}, and its request does not say which one it belongs to",
            )
        records = self.inflight.get(server)
        if not records:
            raise McpError(
                INTERNAL_ERROR, f"{what} refused: no request of the gateway's client is running"
            )
        record = records[-1]  # the newest (not ambiguous: checked above)
        context = record.context
        if not context.client_supports(what) or (path and not context.client_supports(*path)):
            raise undeclared(what, path or (what,))
        return record

    # ------------------------------------------------------------------ approvals
    async def approve(self, request: ToolCallRequest) -> bool:
        """The Host's approver: a form elicitation to the client whose call it is."""
        record = self._in_this_task()
        if record is None:
            if self.fallback_approver is None:
                raise LookupError("no client to ask: the call did not come through the gateway")
            return await self.fallback_approver(request)
        context = record.context
        if not context.client_supports("elicitation"):
            raise McpError(
                METHOD_NOT_FOUND, "the client did not declare elicitation, so it cannot approve"
            )
        arguments = json.dumps(request.arguments or {}, ensure_ascii=False, sort_keys=True)
        approve = t.BooleanSchema(
            type="boolean",
            title="Approve",
            description=f"Run {request.tool} on {request.server}",
            default=False,
        )
        params = t.ElicitRequestFormParams(
            message=(
                f"Allow the tool {request.tool} of server {request.server} with arguments "
                f"{arguments[:500]}? ({request.reason})"
            ),
            requested_schema=t.ElicitRequestFormParamsRequestedSchema(
                type="object", properties={APPROVE_FIELD: approve}, required=[APPROVE_FIELD]
            ),
        )
        answer = await context.elicit(params, key=f"approve {request.host_name}")
        if answer.action != "accept":
            return False
        content = answer.content if isinstance(answer.content, dict) else {}
        return content.get(APPROVE_FIELD) is True

    def _in_this_task(self) -> Downstream | None:
        """The newest downstream request in flight whose task is the current one."""
        task = asyncio.current_task()
        for records in self.inflight.values():
            for record in reversed(records):
                if record.task is task:
                    return record
        return None


def undeclared(what: str, path: tuple[str, ...]) -> McpError:
    """The refusal of an upstream's ask (``sampling``, ``elicitation``) of a downstream client
    that did not declare the capability at ``path``."""
    detail = ".".join(path)
    return McpError(
        METHOD_NOT_FOUND,
        f"{what} refused: the gateway's client did not declare the {detail} capability",
    )


async def _within(record: Downstream, ask: Callable[[], Awaitable[R]]) -> R:
    """``ask()``, given up (an error for the upstream server) once the request ends."""
    found: list[R] = []
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            await record.ended.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        found.append(await ask())
        tg.cancel_scope.cancel()
    if not found:
        raise McpError(INTERNAL_ERROR, "the request this was asked for has ended")
    return found[0]
