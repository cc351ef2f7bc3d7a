"""Tasks through the gateway: a downstream task-augmented ``tools/call`` becomes a task on the
upstream server that owns the tool, and the task methods are routed to it.

The gateway declares tasks for ``tools/call`` while an upstream server does (2025-11-25
basic/utilities/tasks.mdx §Capabilities; the ``io.modelcontextprotocol/tasks`` extension on
2026-07-28, SEP-2663 §Capability Negotiation) and lists a task-capable tool with
``taskSupport: optional`` (it can also run a task-only tool to the end for a caller that asks
for no task, :mod:`.gateway`).

Ids: the gateway mints each downstream task id (unguessable, it names no server) and keeps a
map from it to the upstream server, the upstream task and whose it is (the caller's scope:
its principal, else its session, :func:`~mcpbind.server.tasks.support.default_scope`).
``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel`` of another caller's task
get the same "not found" as an unknown id (tasks.mdx §Task Isolation and Access Control), and
the upstream task id never reaches the downstream client (a result's related-task ``_meta``
names the downstream id). Each answer is in the shape of the era of the downstream request,
whatever the upstream's era. The map is bounded: the oldest finished tasks are forgotten first,
and a caller with too many running ones is refused.

Input: a 2026-07-28 upstream task's ``inputRequests`` and its caller's ``tasks/update`` pass
through; a handshake-era upstream task asks by a request of its own (``elicitation/create``,
``sampling/createMessage`` naming the task), which a 2026-07-28 caller has no channel for
(mrtr.mdx): the gateway holds it, lists it under a key of its own in the task's
``inputRequests`` and answers it with the caller's ``tasks/update`` (SEP-2663 §Task Update
Requests), so that task asks its caller as a 2026-07-28 one would.

Status: an upstream's status notification (a handshake-era server's
``notifications/tasks/status``; a 2026-07-28 server's ``notifications/tasks``, on a listen
stream the gateway opens for each task it creates there) is passed on, under the downstream
id, to the session that created the task (2025-11-25) or to the 2026-07-28 listen streams that
asked for the id (SEP-2663 §Task Status Notifications), as is a change the gateway sees when it
polls.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo
from mcpbind_types.unified import methods as m

from ..client.subscription import Subscription
from ..client.tasks import TaskHandle, start_task
from ..protocol import has_capability
from ..protocol.cursor import decode_cursor, encode_cursor
from ..protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    McpError,
)
from ..server.context import Context
from ..server.principal import principal_key
from ..server.tasks.support import ANONYMOUS, default_scope
from ..tasks.answers import task_id_of
from ..tasks.record import TERMINAL
from ..tasks.wire import EXTENSION, RELATED_TASK, STATUS_2026
from ..versions import era_of
from .forwarding import UpstreamErrors
from .relay import undeclared
from .state import HostError

if TYPE_CHECKING:
    from ..server import Server
    from .catalog import ToolEntry
    from .host import Host
    from .relay import Relay

__all__ = ["GatewayTasks", "HeldAsk", "RoutedTask"]

logger = logging.getLogger("mcpbind.host")

_TOOLS_CALL: Final = ("tasks", "requests", "tools", "call")
_EXTENSION_PATH: Final = ("extensions", EXTENSION)
_REQUIRED_CAPS: Final[dict[str, Any]] = {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
_NOT_FOUND: Final = "Failed to retrieve task: Task not found"
_WAIT_FOR_CREATED: Final = 5.0
#: Asks of one task held unanswered at most (an upstream asking in a loop is refused past it).
_MAX_HELD: Final = 32
#: The kinds of ask a held one can be (capability paths of the client).
_ASKS: Final = (("sampling",), ("elicitation",), ("elicitation", "url"))

R = TypeVar("R")


@dataclass(slots=True, eq=False)
class HeldAsk:
    """One held ask: its ``inputRequests`` entry, the result type its answer must have, and
    that answer once the caller's ``tasks/update`` gave it."""

    request: dict[str, Any]
    result_type: Any
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Any = None


@dataclass(slots=True, eq=False)
class RoutedTask:
    """One downstream task: the upstream task behind it and whose it is."""

    task_id: str
    """The downstream id (minted by the gateway)."""
    scope: str
    server: str
    handle: TaskHandle = field(repr=False)
    peer: Any = field(repr=False)
    """The downstream session that created it (2025-11-25 status notifications go there)."""
    stateless: bool
    """Created by a 2026-07-28 request."""
    state: dict[str, Any] = field(default_factory=dict)
    """The last status seen upstream, era-neutral (``ttl``, ``poll``)."""
    outcome: dict[str, Any] | None = None
    """Once finished: ``{"result": ...}`` or ``{"error": ...}`` as 2026-07-28 inlines them."""
    inputs: dict[str, Any] | None = None
    """While ``input_required`` upstream, its ``inputRequests`` (passed on as they are)."""
    declared: frozenset[tuple[str, ...]] = frozenset()
    """What a 2026-07-28 caller declared it can be asked (capability paths), when it made the
    task: a held ask is refused unless its kind is in it."""
    held: dict[str, HeldAsk] = field(default_factory=dict)
    """A handshake-era upstream task's asks waiting for a 2026-07-28 caller, by key."""
    asked: int = 0
    """Asks held so far (each key is new over the task's lifetime)."""
    listening: Subscription | None = field(default=None, repr=False)
    """A 2026-07-28 upstream's listen stream for the task's status, while it runs."""

    @property
    def relays_inputs(self) -> bool:
        """A 2026-07-28 caller's task on a 2026-07-28 upstream: its ``inputRequests`` and
        the caller's ``tasks/update`` pass through (SEP-2663 §Task Update Requests)."""
        return self.stateless and self.handle.client.era == "stateless"

    @property
    def holds_asks(self) -> bool:
        """A 2026-07-28 caller's task on a handshake-era upstream: the upstream's asks are
        held for the caller's ``tasks/update``."""
        return self.stateless and self.handle.client.era != "stateless"

    @property
    def status(self) -> str:
        status = str(self.state.get("status", "working"))
        if status in TERMINAL or not self.holds_asks:
            return status
        # Waiting on its caller exactly while an ask is held (one on its way up is "working").
        return "input_required" if self.held else "working"

    @property
    def input_requests(self) -> dict[str, Any] | None:
        """The outstanding ``inputRequests`` the caller sees, held or passed through."""
        if self.holds_asks:
            return {key: ask.request for key, ask in self.held.items()} or None
        return self.inputs

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


class GatewayTasks:
    """The gateway's task routes (made by :class:`~.gateway.Gateway`): installed on ``server``
    as an extension (capabilities, listen filter, notifications) and as the ``tasks/*``
    methods. ``max_per_caller`` running tasks per scope; ``max_total`` remembered in all."""

    def __init__(
        self,
        server: Server,
        host: Host,
        relay: Relay,
        *,
        max_per_caller: int = 100,
        max_total: int = 1000,
    ) -> None:
        self.server = server
        self.host = host
        self.relay = relay
        self.max_per_caller = max_per_caller
        self.max_total = max_total
        #: Downstream id -> task, oldest first.
        self.routed: dict[str, RoutedTask] = {}
        #: (upstream server, upstream task id) -> task.
        self.upstream: dict[tuple[str, str], RoutedTask] = {}
        #: Tasks being created, per server, and an event set when one becomes known: a new
        #: task may ask before the answer that names it has arrived (:meth:`related`).
        self._creating: Counter[str] = Counter()
        self._known: anyio.Event | None = None
        #: The task whose upstream request is running in this context (a 2026-07-28
        #: upstream's input requests are answered inside it, :meth:`related`).
        self._task: contextvars.ContextVar[RoutedTask | None] = contextvars.ContextVar(
            "mcpbind_gateway_task", default=None
        )
        server.extensions.append(self)
        for name, handler in (
            ("tasks/get", self._get),
            ("tasks/result", self._result),
            ("tasks/list", self._list),
            ("tasks/cancel", self._cancel),
            ("tasks/update", self._update),
        ):
            server.method(name)(handler)

    # ------------------------------------------------------------------ capabilities
    def capable(self, server: str) -> bool:
        """Whether ``server`` (connected) declares tasks for ``tools/call``, in its era."""
        try:
            client = self.host.client(server)
            return client.peer_has_capability(_TOOLS_CALL) or client.peer_has_capability(
                _EXTENSION_PATH
            )
        except (HostError, RuntimeError):
            return False

    def offered(self) -> bool:
        """Whether any upstream serving a tool declares tasks."""
        return any(self.capable(s) for s in {e.server for e in self.host.catalog.tools.values()})

    def listed_execution(self, entry: ToolEntry) -> t.ToolExecution | msgspec.UnsetType:
        """The ``execution`` a tool is listed with downstream: ``optional`` for one its server
        runs as a task (the gateway serves either way); none for a server without tasks."""
        support = _support(entry.tool)
        if support is None or not self.capable(entry.server):
            return msgspec.UNSET
        return t.ToolExecution(task_support="optional")

    def capabilities(self, caps: t.ServerCapabilities, *, stateless: bool) -> None:
        if not self.offered():
            return
        if stateless:
            current = caps.extensions if isinstance(caps.extensions, dict) else {}
            caps.extensions = {**current, EXTENSION: {}}
        else:
            caps.tasks = t.ServerCapabilitiesTasks(
                cancel={},
                list_={},
                requests=t.ServerCapabilitiesTasksRequests(
                    tools=t.ServerCapabilitiesTasksRequestsTools(call={})
                ),
            )

    def listen_filter(self, wanted: Mapping[str, Any], client_capabilities: Any) -> dict[str, Any]:
        """SEP-2663 §Task Status Notifications: ``taskIds`` on ``subscriptions/listen``."""
        ids = wanted.get("taskIds")
        if not isinstance(ids, list):
            return {}
        if not has_capability(client_capabilities, _EXTENSION_PATH):
            raise McpError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: the {EXTENSION} extension",
                _REQUIRED_CAPS,
            )
        return {"taskIds": [i for i in dict.fromkeys(ids) if isinstance(i, str)]}

    async def notification(
        self, what: str, detail: str | None, agreed: Mapping[str, Any], principal: Any
    ) -> tuple[str, dict[str, Any]] | None:
        """``notifications/tasks`` for a listener that asked for the id and whose task it is
        (another principal's task is not sent, even to a listener that knows its id)."""
        if what != "task" or detail is None or detail not in agreed.get("taskIds", ()):
            return None
        routed = self.routed.get(detail)
        if routed is None:
            return None
        listener = ANONYMOUS if principal is None else f"principal:{principal_key(principal)}"
        if routed.scope != listener:
            return None
        return STATUS_2026, _view(routed, stateless=True, detailed=True)

    # ------------------------------------------------------------------ tools/call
    def wanted(self, params: t.CallToolRequestParams, ctx: Context, entry: ToolEntry) -> bool:
        """Whether this downstream call is to run as a task upstream (2025-11-25: it carries
        ``task``; 2026-07-28: the caller declared the extension and the tool may be one)."""
        capable = _support(entry.tool) is not None and self.capable(entry.server)
        if not era_of(ctx.protocol_version).tasks_extension:
            if params.task is msgspec.UNSET:
                return False
            if not capable:  # tasks.mdx §Tool-Level Negotiation
                raise McpError(
                    METHOD_NOT_FOUND, f"Tool {params.name} does not support task-augmented calls"
                )
            return True
        return capable and ctx.client_supports(*_EXTENSION_PATH)

    async def call(
        self,
        params: t.CallToolRequestParams,
        ctx: Context,
        server: str,
        arguments: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """Start the tool as a task upstream; the downstream ``CreateTaskResult``."""
        stateless = era_of(ctx.protocol_version).tasks_extension
        scope = default_scope(ctx)
        self._make_room(scope)
        ttl = params.task.ttl if isinstance(params.task, t.TaskMetadata) else None
        if isinstance(ttl, int) and ttl < 0:
            raise McpError(INVALID_PARAMS, "Invalid params: task.ttl must be >= 0")
        ttl_ms = ttl if isinstance(ttl, int) else None
        with self.relay.serving(server, ctx):
            entry, client = await self.host.authorize_tool_call(params.name, arguments)

            async def start() -> RoutedTask:
                with UpstreamErrors(entry.server):
                    routed = await self._create(
                        entry.server,
                        lambda: start_task(client, entry.tool.name, arguments, ttl_ms=ttl_ms),
                        scope,
                        ctx.peer,
                        stateless,
                        _declared(ctx) if stateless else frozenset(),
                    )
                    try:
                        await self._refresh(routed)
                    except BaseException:
                        self._forget(routed)
                        raise
                await self._listen(routed)
                return routed

            if not stateless:  # what the new task asks at once goes to this caller
                routed = await start()
        if stateless:
            # Not asked on the way: for a 2026-07-28 caller an ask would be an input round,
            # and its retry would start the task a second time.
            routed = await start()
        view = _view(routed, stateless=stateless, detailed=False)
        if not stateless:
            return {"task": view}
        view["resultType"] = "task"
        text = f"Started task {routed.task_id}; its result comes from tasks/get."
        view["content"] = [{"type": "text", "text": text}]
        return view

    async def _create(
        self,
        server: str,
        start: Callable[[], Awaitable[TaskHandle]],
        scope: str,
        peer: Any,
        stateless: bool,
        declared: frozenset[tuple[str, ...]],
    ) -> RoutedTask:
        """Start the upstream task and know it by both ids before anything more comes of it
        (the task may ask, or change, at once: :meth:`related` waits meanwhile)."""
        self._creating[server] += 1
        try:
            handle = await start()
            routed = RoutedTask(
                secrets.token_urlsafe(16), scope, server, handle, peer, stateless, declared=declared
            )
            self.routed[routed.task_id] = routed
            if handle.task_id is not None:
                self.upstream[(server, handle.task_id)] = routed
            return routed
        finally:
            self._creating[server] -= 1
            if self._creating[server] <= 0:
                del self._creating[server]
            self._wake()

    def _make_room(self, scope: str) -> None:
        """Forget the oldest finished tasks past ``max_total``; refuse a caller that has
        ``max_per_caller`` running (tasks.mdx §Resource Management)."""
        running = sum(1 for r in self.routed.values() if r.scope == scope and not r.terminal)
        if running >= self.max_per_caller:
            raise McpError(
                INVALID_REQUEST,
                f"Too many running tasks ({self.max_per_caller}); let one finish first",
            )
        if len(self.routed) < self.max_total:
            return
        for routed in [r for r in self.routed.values() if r.terminal]:
            self._forget(routed)
            if len(self.routed) < self.max_total:
                return
        raise McpError(INVALID_REQUEST, f"Too many running tasks on the gateway ({self.max_total})")

    @contextlib.contextmanager
    def _on_behalf_of(self, routed: RoutedTask) -> Iterator[None]:
        token = self._task.set(routed)
        try:
            yield
        finally:
            self._task.reset(token)

    def _wake(self) -> None:
        """Asks waiting for a task to become known look again (:meth:`related`)."""
        known, self._known = self._known, None
        if known is not None:
            known.set()

    async def _listen(self, routed: RoutedTask) -> None:
        """Ask a 2026-07-28 upstream for the task's status notifications (SEP-2663 §Task
        Status Notifications), so a change reaches its caller without a poll. A server that
        does not agree, or fails, leaves the task to polling."""
        handle = routed.handle
        client = handle.client
        if client.era != "stateless" or handle.task_id is None or routed.terminal:
            return
        try:
            routed.listening = await client.listen(task_ids=[handle.task_id])
        except (McpError, ConnectionError, RuntimeError) as exc:
            logger.debug("no task status notifications from %s: %s", routed.server, exc)
        if routed.listening is not None and (routed.terminal or routed.task_id not in self.routed):
            routed.listening.cancel()  # it ended, or was forgotten, meanwhile
            routed.listening = None

    def _forget(self, routed: RoutedTask) -> None:
        if routed.listening is not None:
            routed.listening.cancel()
            routed.listening = None
        self.routed.pop(routed.task_id, None)
        if routed.handle.task_id is not None:
            self.upstream.pop((routed.server, routed.handle.task_id), None)

    # ------------------------------------------------------------------ tasks/* methods
    def _owned(self, params: Any, ctx: Context) -> tuple[RoutedTask, bool]:
        """The caller's task and whether the request is 2026-07-28; another caller's task is
        not found, as an unknown one (tasks.mdx §Task Isolation and Access Control)."""
        stateless = era_of(ctx.protocol_version).tasks_extension
        if stateless and not ctx.client_supports(*_EXTENSION_PATH):
            raise McpError(  # SEP-2663 §Protocol Errors
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: the {EXTENSION} extension",
                _REQUIRED_CAPS,
            )
        routed = self.routed.get(task_id_of(params))
        if routed is None or routed.scope != default_scope(ctx):
            raise McpError(INVALID_PARAMS, _NOT_FOUND)
        return routed, stateless

    async def _get(self, params: Any, ctx: Context) -> dict[str, Any]:
        routed, stateless = self._owned(params, ctx)
        with self.relay.serving(routed.server, ctx), UpstreamErrors(routed.server):
            await self._refresh(routed)
            if stateless and routed.terminal:
                await self._fetch_outcome(routed)
        return _view(routed, stateless=stateless, detailed=stateless)

    async def _result(self, params: Any, ctx: Context) -> t.CallToolResult:
        """2025-11-25 ``tasks/result``: waits upstream for the end (its requests for input
        meanwhile go to this caller, :mod:`.relay`); the result names the downstream id."""
        routed, stateless = self._owned(params, ctx)
        if stateless:  # SEP-2663 §Backward Compatibility: the result is inlined on tasks/get
            raise McpError(METHOD_NOT_FOUND, "Method not found: tasks/result")
        server = routed.server
        with self.relay.serving(server, ctx), UpstreamErrors(server), self._on_behalf_of(routed):
            result = await routed.handle.result()
        meta = result.meta if isinstance(result.meta, dict) else {}
        result.meta = {**meta, RELATED_TASK: {"taskId": routed.task_id}}
        return result

    async def _list(self, params: Any, ctx: Context) -> dict[str, Any]:
        if era_of(ctx.protocol_version).tasks_extension:
            raise McpError(METHOD_NOT_FOUND, "Method not found: tasks/list")
        scope = default_scope(ctx)
        if scope == ANONYMOUS:  # tasks.mdx §Task Isolation: it would show every caller's
            raise McpError(
                METHOD_NOT_FOUND,
                "Method not found: tasks/list (the caller is not identified: tasks are "
                "reached by id only)",
            )
        cursor = (
            params.get("cursor") if isinstance(params, dict) else getattr(params, "cursor", None)
        )
        start = decode_cursor(cursor) if isinstance(cursor, str) else 0
        mine = [r for r in self.routed.values() if r.scope == scope]
        end = start + self.server.page_size
        page = mine[start:end]
        for routed in page:
            if not routed.terminal:
                try:
                    with UpstreamErrors(routed.server):
                        await self._refresh(routed)
                except McpError:
                    continue  # listed as last seen
        result: dict[str, Any] = {"tasks": [_view(r, stateless=False) for r in page]}
        if end < len(mine):
            result["nextCursor"] = encode_cursor(end)
        return result

    async def _cancel(self, params: Any, ctx: Context) -> dict[str, Any]:
        routed, stateless = self._owned(params, ctx)
        if routed.handle.task_id is None or (not stateless and routed.terminal):
            if stateless:
                return {}  # SEP-2663 §Task Cancellation: an ack, also for a finished task
            raise McpError(
                INVALID_PARAMS,
                f"Cannot cancel task: already in terminal status '{routed.status}'",
            )
        with UpstreamErrors(routed.server):
            await routed.handle.cancel()
            await self._refresh(routed)  # the cancelled status, for listeners too
        return {} if stateless else _view(routed, stateless=False)

    async def _update(self, params: Any, ctx: Context) -> dict[str, Any]:
        """SEP-2663 §Task Update Requests: the caller's answers to the upstream task's
        ``inputRequests``, passed on (a 2026-07-28 upstream: its keys, as listed)."""
        if not era_of(ctx.protocol_version).tasks_extension:
            raise McpError(METHOD_NOT_FOUND, "Method not found: tasks/update")
        routed, _ = self._owned(params, ctx)
        responses = params.get("inputResponses") if isinstance(params, dict) else None
        if not isinstance(responses, dict):
            raise McpError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        if routed.holds_asks:
            self._answer_held(routed, responses)
            return {}
        with UpstreamErrors(routed.server):
            await routed.handle.update(responses)
        return {}

    def _answer_held(self, routed: RoutedTask, responses: dict[str, Any]) -> None:
        """Answers to held asks, each checked against the result its ask expects before any
        is given (one bad answer: an error, and none taken); keys not outstanding are ignored
        (SEP-2663 §Task Update Requests)."""
        answers: list[tuple[HeldAsk, Any]] = []
        for key, response in responses.items():
            ask = routed.held.get(key)
            if ask is None:
                continue
            try:
                answers.append((ask, msgspec.convert(response, ask.result_type)))
            except msgspec.ValidationError as exc:
                method = ask.request["method"]
                raise McpError(
                    INVALID_PARAMS, f"Invalid params: inputResponses[{key!r}] for {method}: {exc}"
                ) from None
        for ask, answer in answers:
            ask.answer = answer
            ask.answered.set()

    async def hold(self, params: Any, method: MethodInfo[Any, R]) -> R | None:
        """An upstream ask (``params`` after :meth:`related`) held for its task's 2026-07-28
        caller until its ``tasks/update`` answers it; ``None`` when the ask is not of such a
        task (it goes down the usual way, :mod:`.relay`). Refused, as the relay refuses an ask,
        when the caller did not declare the capability when it made the task."""
        meta = getattr(params, "meta", None)
        if not isinstance(meta, dict):
            return None
        related = meta.get(RELATED_TASK)
        task_id = related.get("taskId") if isinstance(related, dict) else None
        routed = self.routed.get(task_id) if isinstance(task_id, str) else None
        if routed is None or not routed.holds_asks:
            return None
        what = method.method.split("/", 1)[0]
        needed = _needed(method, params)
        if needed not in routed.declared:
            raise undeclared(what, needed)
        if len(routed.held) >= _MAX_HELD:
            raise McpError(
                INTERNAL_ERROR, f"{what} refused: {_MAX_HELD} asks of this task are unanswered"
            )
        routed.asked += 1
        key = f"{what}-{routed.asked}"
        rest = {k: v for k, v in meta.items() if k != RELATED_TASK}  # the task is implied
        wire = msgspec.to_builtins(msgspec.structs.replace(params, meta=rest or msgspec.UNSET))
        ask = routed.held[key] = HeldAsk(
            {"method": method.method, "params": wire}, method.result_type
        )
        self.server.extension_changed("task", routed.task_id)
        try:
            await ask.answered.wait()
        finally:
            del routed.held[key]
            self.server.extension_changed("task", routed.task_id)
        answer: R = ask.answer
        return answer

    # ------------------------------------------------------------------ upstream
    async def _refresh(self, routed: RoutedTask) -> None:
        handle = routed.handle
        if handle.task_id is None:  # answered at once (2026-07-28 upstream: no task made)
            if not routed.state:
                now = _now()
                routed.state = {"status": "completed", "createdAt": now, "lastUpdatedAt": now}
                routed.outcome = {"result": handle.result_now}
            return
        with self._on_behalf_of(routed):
            state = await handle.status(answer=not routed.relays_inputs)
        self._observed(routed, state.raw)

    async def _fetch_outcome(self, routed: RoutedTask) -> None:
        """A finished task's result or error, for a 2026-07-28 ``tasks/get`` (a handshake-era
        upstream gives it on ``tasks/result``, its related-task ``_meta`` naming the upstream
        id: left out, as 2026-07-28 has none)."""
        if routed.outcome is not None or routed.status == "cancelled":
            return
        try:
            with self._on_behalf_of(routed):
                result = await routed.handle.result()
        except McpError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            routed.outcome = {"error": error}
        else:
            if isinstance(result.meta, dict) and RELATED_TASK in result.meta:
                rest = {k: v for k, v in result.meta.items() if k != RELATED_TASK}
                result.meta = rest or msgspec.UNSET
            routed.outcome = {"result": msgspec.Raw(msgspec.json.encode(result))}

    async def related(self, server: str, params: Any) -> Any:
        """An upstream ask (sampling, elicitation) on its way down: a related-task ``_meta``
        (tasks.mdx §Related Task Metadata) names the downstream id of that task, and is left
        out for a task the gateway did not create (the upstream id means nothing below). A
        task may ask at once, before the answer naming it has arrived: while a task is being
        created on ``server``, the ask waits for it (up to ``_WAIT_FOR_CREATED`` seconds). An
        ask without one made while the gateway polls a task of ``server`` (a 2026-07-28
        upstream's ``inputRequests``) gets that task's."""
        meta = getattr(params, "meta", None)
        if not isinstance(meta, dict) or RELATED_TASK not in meta:
            # A 2026-07-28 upstream's input request names no task: it is the one whose
            # tasks/get (or result) is running here, if any.
            routed = self._task.get()
            if routed is None or routed.server != server:
                return params
            mine = {**(meta if isinstance(meta, dict) else {})}
            mine[RELATED_TASK] = {"taskId": routed.task_id}
            return msgspec.structs.replace(params, meta=mine)
        related = meta[RELATED_TASK]
        upstream_id = related.get("taskId") if isinstance(related, dict) else None
        if not isinstance(upstream_id, str):
            upstream_id = ""
        key = (server, upstream_id)
        with anyio.move_on_after(_WAIT_FOR_CREATED):
            while key not in self.upstream and self._creating.get(server):
                if self._known is None:
                    self._known = anyio.Event()
                await self._known.wait()
        routed = self.upstream.get(key)
        rest = {k: v for k, v in meta.items() if k != RELATED_TASK}
        if routed is not None:
            rest[RELATED_TASK] = {"taskId": routed.task_id}
        return msgspec.structs.replace(params, meta=rest or msgspec.UNSET)

    async def upstream_status(self, server: str, params: Any) -> None:
        """A task's status from upstream, without a poll: a handshake-era server's
        ``notifications/tasks/status`` (tasks.mdx §Task Status Notification), or a 2026-07-28
        one's ``notifications/tasks`` on the listen stream the gateway opened for the task
        (SEP-2663 §Task Status Notifications). To the downstream caller under the downstream
        id: a 2025-11-25 caller's session, or the 2026-07-28 listen streams that asked."""
        raw = params if isinstance(params, dict) else msgspec.to_builtins(params)
        upstream_id = raw.get("taskId") if isinstance(raw, dict) else None
        routed = self.upstream.get((server, upstream_id)) if isinstance(upstream_id, str) else None
        if routed is None or not self._observed(routed, raw) or routed.stateless:
            return
        await routed.peer.send_notification(m.S2C_TASK_STATUS, _view(routed, stateless=False))

    def _observed(self, routed: RoutedTask, raw: dict[str, Any]) -> bool:
        """Record an upstream view of the task (a 2026-07-28 one's ``DetailedTask`` also
        brings its input requests, result or error); whether its status or message changed (a
        2026-07-28 caller's listen streams are told, SEP-2663 §Task Status Notifications:
        also a change the gateway saw by polling). A finished task is listened for no more."""
        inputs = raw.get("inputRequests") if raw.get("status") == "input_required" else None
        routed.inputs = inputs if isinstance(inputs, dict) else None
        if "result" in raw:
            routed.outcome = {"result": raw["result"]}
        elif "error" in raw:
            routed.outcome = {"error": raw["error"]}
        state = routed.state
        before = (state.get("status"), state.get("statusMessage"))
        state = routed.state = _neutral(raw)
        changed = before != (state["status"], state["statusMessage"])
        if changed and routed.stateless:
            self.server.extension_changed("task", routed.task_id)
        if routed.terminal and routed.listening is not None:
            routed.listening.cancel()
            routed.listening = None
        return changed


def _declared(ctx: Context) -> frozenset[tuple[str, ...]]:
    """The kinds of ask a 2026-07-28 caller declared it can be asked (:meth:`GatewayTasks.hold`)."""
    return frozenset(path for path in _ASKS if ctx.client_supports(*path))


def _needed(method: MethodInfo[Any, Any], params: Any) -> tuple[str, ...]:
    """The capability an ask needs of the client (a URL-mode elicitation: ``url``)."""
    if method.method == "sampling/createMessage":
        return ("sampling",)
    return (
        ("elicitation", "url") if isinstance(params, t.ElicitRequestURLParams) else ("elicitation",)
    )


def _support(tool: t.Tool) -> str | None:
    execution = tool.execution
    if isinstance(execution, t.ToolExecution) and execution.task_support in (
        "optional",
        "required",
    ):
        return execution.task_support
    return None


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _neutral(raw: dict[str, Any]) -> dict[str, Any]:
    """An upstream task (either era's shape) in era-neutral keys."""
    now = _now()
    message = raw.get("statusMessage")
    return {
        "status": str(raw.get("status", "working")),
        "statusMessage": message if isinstance(message, str) else None,
        "createdAt": raw.get("createdAt") or now,
        "lastUpdatedAt": raw.get("lastUpdatedAt") or now,
        "ttl": raw.get("ttl", raw.get("ttlMs")),
        "poll": raw.get("pollInterval", raw.get("pollIntervalMs")),
    }


def _view(routed: RoutedTask, *, stateless: bool, detailed: bool = False) -> dict[str, Any]:
    """The task in the downstream era's shape (tasks.mdx §Data Types; SEP-2663 §Tasks), under
    the downstream id; ``detailed``: a 2026-07-28 ``DetailedTask`` with the outcome inlined."""
    state = routed.state
    status = _status_in_era(routed, stateless=stateless)
    out: dict[str, Any] = {
        "taskId": routed.task_id,
        "status": status,
        "createdAt": state.get("createdAt") or _now(),
        "lastUpdatedAt": state.get("lastUpdatedAt") or _now(),
    }
    if isinstance(state.get("statusMessage"), str):
        out["statusMessage"] = state["statusMessage"]
    ttl, poll = state.get("ttl"), state.get("poll")
    if stateless:
        out["ttlMs"] = ttl
        if isinstance(poll, int):
            out["pollIntervalMs"] = poll
    else:
        out["ttl"] = ttl
        if isinstance(poll, int):
            out["pollInterval"] = poll
    inputs = routed.input_requests if detailed and status == "input_required" else None
    if inputs:
        out["inputRequests"] = inputs
    if detailed and routed.outcome is not None:
        if status == "completed" and "result" in routed.outcome:
            out["result"] = routed.outcome["result"]
        elif status == "failed" and "error" in routed.outcome:
            out["error"] = routed.outcome["error"]
    return out


def _status_in_era(routed: RoutedTask, *, stateless: bool) -> str:
    """The task's status as the downstream era names it: a tool result with ``isError`` is
    ``failed`` on 2025-11-25 (tasks.mdx §Task Status) and ``completed`` with that result on
    2026-07-28, where ``failed`` is a JSON-RPC error only (SEP-2663 §Task Execution Errors)."""
    status = routed.status
    outcome = routed.outcome
    if outcome is None or "result" not in outcome:
        return status
    if stateless and status == "failed":
        return "completed"
    if not stateless and status == "completed" and _is_error(outcome["result"]):
        return "failed"
    return status


def _is_error(result: Any) -> bool:
    if isinstance(result, msgspec.Raw):
        result = msgspec.json.decode(result)
    return isinstance(result, dict) and result.get("isError") is True
