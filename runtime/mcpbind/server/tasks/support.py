"""``Tasks``: task support for a ``Server``, on both protocol eras, through the server's own
method table — no dispatch path of its own.

``Tasks(server, store)`` wraps the server's ``tools/call`` handler, registers ``tasks/get``,
``tasks/result``, ``tasks/list``, ``tasks/cancel`` and ``tasks/update`` as methods, and adds the
capability: ``tasks`` on the handshake era (2025-11-25 basic/utilities/tasks.mdx
§Capabilities), the ``io.modelcontextprotocol/tasks`` extension on 2026-07-28 (SEP-2663
§Capability Negotiation). Each handler answers in the shape of the era of the request.

A tool opts in with ``@server.tool(task="optional" | "required")`` (``execution.taskSupport``).
One whose function takes a ``TaskContext`` runs as a task whenever the request allows it;
one that takes a plain ``Context`` runs in the request (asking for input through multi
round-trip requests on 2026-07-28) and may hand the rest of its work to a task with
``await tasks.hand_off(ctx, work)`` (SEP-2663 §Composition with Multi Round-Trip Requests).
"""

from __future__ import annotations

import contextvars
import dataclasses
import secrets
import threading
import typing
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import msgspec

from mcpbind_types import unified as t
from mcpbind_types.unified import methods as m

from ...protocol import has_capability
from ...protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    McpError,
)
from ...runner import current_request_id
from ...tasks.answers import cancel_task, get_task, list_tasks, task_id_of, task_result
from ...tasks.manager import TaskManager
from ...tasks.record import ANONYMOUS, TaskRecord, raw
from ...tasks.store import TaskStore
from ...tasks.wire import (
    EXTENSION,
    STATUS_2026,
    created_2025,
    created_2026,
    detailed_2026,
    task_2025,
)
from ...versions import era_of
from ..context import Context
from ..principal import principal_key
from ..results import tool_result
from ..signature import ToolSignature
from .task_context import TaskContext

if TYPE_CHECKING:
    from ..app import Handler, Server

__all__ = ["ANONYMOUS", "Tasks", "default_scope"]

_REQUIRED_CAPS: Final[dict[str, Any]] = {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
_sessions: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def default_scope(ctx: Context) -> str:
    """Whose task it is: the authenticated principal if the request has one, else the session
    (handshake era), else nobody in particular (:data:`ANONYMOUS`: 2026-07-28 and the
    sessionless HTTP mode without auth; the unguessable task id is the only key, as tasks.mdx
    §Task Isolation allows, and no ``tasks/list`` exists for such a caller)."""
    principal = getattr(ctx, "principal", None)
    if principal is not None:
        return f"principal:{principal_key(principal)}"
    if era_of(ctx.protocol_version).stateless or getattr(ctx.peer, "sessionless", False):
        # Nothing identifies the caller across requests (a sessionless POST's session object
        # may be reused for someone else's next POST; clientInfo is whatever the caller says).
        return ANONYMOUS
    token = _sessions.get(ctx.peer)
    if token is None:
        token = _sessions[ctx.peer] = secrets.token_hex(8)
    return f"session:{token}"


@dataclasses.dataclass(slots=True)
class _HandOff:
    signature: ToolSignature
    created: Any = None


class Tasks:
    """Task support installed on ``server``; ``store`` defaults to memory.

    ``scope(ctx)`` names who owns a task (default: :func:`default_scope`); a caller of another
    scope gets the same "not found" as for an unknown id. Running in this process at once
    (more is -32600): ``max_active`` tasks per scope, ``max_active_anonymous`` tasks of all
    :data:`ANONYMOUS` callers together, ``max_active_total`` tasks in all. The other keywords go
    to :class:`TaskManager` (``default_ttl_ms``, ``max_ttl_ms``, ``poll_interval_ms``,
    ``lease``).
    """

    def __init__(
        self,
        server: Server,
        store: TaskStore | None = None,
        *,
        scope: Callable[[Context], str] = default_scope,
        page_size: int = 50,
        max_active: int = 100,
        max_active_anonymous: int = 500,
        max_active_total: int = 1000,
        **options: Any,
    ) -> None:
        self.server = server
        self.max_active = max_active
        self.max_active_anonymous = max_active_anonymous
        self.max_active_total = max_active_total
        self._active: Counter[str] = Counter()
        self._active_total = 0
        self.manager = TaskManager(store, **options)
        self.scope = scope
        self.page_size = page_size
        self._results_waiting: dict[str, int | str] = {}
        self._hand_off: contextvars.ContextVar[_HandOff | None] = contextvars.ContextVar(
            "mcpbind_task_hand_off", default=None
        )
        self._wants: dict[Any, bool] = {}
        self.manager.on_change = self._announce
        server.extensions.append(self)
        server.wrap("tools/call", self._wrap_call)
        for name, handler in (
            ("tasks/get", self._get),
            ("tasks/result", self._result),
            ("tasks/list", self._list),
            ("tasks/cancel", self._cancel),
            ("tasks/update", self._update),
        ):
            server.method(name)(handler)

    # ------------------------------------------------------------------ capabilities
    def capabilities(self, caps: t.ServerCapabilities, *, stateless: bool) -> None:
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

    # ------------------------------------------------------------------ status notifications
    def _announce(self, record: TaskRecord) -> None:
        if era_of(record.era).tasks_extension:
            self.server.extension_changed("task", record.task_id)

    def listen_filter(self, wanted: Mapping[str, Any], client_capabilities: Any) -> dict[str, Any]:
        """SEP-2663 §Task Status Notifications: ``taskIds`` on ``subscriptions/listen``;
        -32021 for a client that did not declare the extension."""
        ids = wanted.get("taskIds")
        if not isinstance(ids, list):
            return {}
        if not has_capability(client_capabilities, ("extensions", EXTENSION)):
            raise McpError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: the {EXTENSION} extension",
                _REQUIRED_CAPS,
            )
        return {"taskIds": [i for i in dict.fromkeys(ids) if isinstance(i, str)]}

    async def notification(
        self, what: str, detail: str | None, agreed: Mapping[str, Any], principal: Any
    ) -> tuple[str, dict[str, Any]] | None:
        """``notifications/tasks``: the full ``DetailedTask``, as ``tasks/get`` would answer,
        and only to a listener ``tasks/get`` would answer (tasks.mdx §Task Isolation: another
        principal's task is not sent, even to a listener that knows its id). With a custom
        ``scope`` (it needs a request's context) the task id alone decides."""
        if what != "task" or detail not in agreed.get("taskIds", ()):
            return None
        record = await self.manager.store.get(detail) if detail is not None else None
        if record is None:
            return None
        if self.scope is default_scope:
            listener = ANONYMOUS if principal is None else f"principal:{principal_key(principal)}"
            if record.scope != listener:
                return None
        return STATUS_2026, detailed_2026(record)

    # ------------------------------------------------------------------ tools/call
    def _wrap_call(self, inner: Handler) -> Handler:
        async def call(params: t.CallToolRequestParams, ctx: Context) -> Any:
            entry = self.server.tools.get(params.name)
            support = _support(entry.tool) if entry is not None else None
            extension = era_of(ctx.protocol_version).tasks_extension
            if entry is None or support is None:
                if entry is not None and not extension and params.task is not msgspec.UNSET:
                    # tasks.mdx §Tool-Level Negotiation: forbidden (or absent) -> -32601.
                    raise McpError(
                        METHOD_NOT_FOUND,
                        f"Tool {params.name} does not support task-augmented calls",
                    )
                return await inner(params, ctx)
            ttl: int | None = None
            if extension:
                make_task = ctx.client_supports("extensions", EXTENSION)
                if not make_task and support == "required":
                    # SEP-2663 §Capability Negotiation: cannot serve it without a task.
                    raise McpError(
                        MISSING_REQUIRED_CLIENT_CAPABILITY,
                        f"Tool {params.name} runs only as a task: declare the {EXTENSION} extension",
                        _REQUIRED_CAPS,
                    )
            else:
                make_task = params.task is not msgspec.UNSET
                if not make_task and support == "required":
                    raise McpError(
                        METHOD_NOT_FOUND, f"Tool {params.name} requires task augmentation"
                    )
                if isinstance(params.task, t.TaskMetadata) and isinstance(params.task.ttl, int):
                    ttl = params.task.ttl
                    if ttl < 0:
                        raise McpError(INVALID_PARAMS, "Invalid params: task.ttl must be >= 0")
            plain = _as_task_context(ctx)
            if not make_task:
                return await inner(params, plain)
            if not self._wants_task_context(entry.fn):
                slot = _HandOff(entry.signature)
                token = self._hand_off.set(slot)
                try:
                    value = await inner(params, plain)
                finally:
                    self._hand_off.reset(token)
                return value if slot.created is None else slot.created
            record = await self._start(ctx, "tools/call", ttl, lambda task: inner(params, task))
            return created_2026(record) if extension else created_2025(record)

        return call

    async def hand_off(
        self,
        ctx: Context,
        work: Callable[[TaskContext], Awaitable[Any]],
        *,
        ttl_ms: int | None = None,
    ) -> str:
        """From inside a task-capable tool (one that takes a plain ``Context``): create the task
        now, run ``work(task_context)`` as it, and answer the request with the
        ``CreateTaskResult`` (whatever the tool then returns is not sent). ``work`` returns
        what a tool returns (text, content, structured data). The task id."""
        slot = self._hand_off.get()
        if slot is None or slot.created is not None:
            raise RuntimeError("hand_off works once, inside a tools/call that may create a task")
        signature = slot.signature

        async def run(task: TaskContext) -> t.CallToolResult:
            return tool_result(await work(task), signature)

        record = await self._start(ctx, "tools/call", ttl_ms, run)
        extension = era_of(ctx.protocol_version).tasks_extension
        slot.created = created_2026(record) if extension else created_2025(record)
        return record.task_id

    async def _start(
        self,
        ctx: Context,
        method: str,
        ttl: int | None,
        work: Callable[[TaskContext], Awaitable[Any]],
    ) -> TaskRecord:
        era = era_of(ctx.protocol_version)
        scope = self.scope(ctx)
        self._check_room(scope)
        self._active[scope] += 1  # before the store's await: concurrent calls see the slot
        self._active_total += 1
        try:
            record = await self.manager.create(scope, method, era.version, ttl)
        except BaseException:
            self._release(scope)
            raise
        task_id = record.task_id

        task = _as_task_context(ctx)
        task.task_id = task_id
        task.manager = self.manager
        task.era = era.version
        cancelled = threading.Event()
        task.is_cancelled = cancelled.is_set
        task.route = lambda: self._results_waiting.get(task_id)
        listener = None if era.tasks_extension else _status_notifier(ctx)
        # Unrelated to the request that created it (which is answered now): notifications and
        # side requests travel on the session's own channel, not that request's stream.
        background = contextvars.copy_context()
        background.run(current_request_id.set, None)
        runner = self.manager.start(
            record, lambda: work(task), listener=listener, context=background, cancelled=cancelled
        )
        # Also when cancelled before it ever ran: the slot is freed once the runner is done.
        runner.add_done_callback(lambda _: self._release(scope))
        return record

    def _check_room(self, scope: str) -> None:
        """tasks.mdx §Resource Management: limits on concurrent tasks per requestor (and, for
        callers the server cannot tell apart, on all of them together) and in all."""
        if scope == ANONYMOUS:
            if self._active[scope] >= self.max_active_anonymous:
                raise McpError(
                    INVALID_REQUEST,
                    f"Too many running tasks of unauthenticated callers "
                    f"({self.max_active_anonymous}); try again later",
                )
        elif self._active[scope] >= self.max_active:
            raise McpError(
                INVALID_REQUEST, f"Too many running tasks ({self.max_active}); let one finish first"
            )
        if self._active_total >= self.max_active_total:
            raise McpError(
                INVALID_REQUEST,
                f"Too many running tasks on this server ({self.max_active_total}); try again later",
            )

    def _release(self, scope: str) -> None:
        self._active_total -= 1
        self._active[scope] -= 1
        if self._active[scope] <= 0:
            del self._active[scope]

    def _wants_task_context(self, fn: Any) -> bool:
        wants = self._wants.get(fn)
        if wants is None:
            try:
                hints = typing.get_type_hints(fn)
            except Exception:
                hints = {}
            wants = self._wants[fn] = any(_mentions(h, TaskContext) for h in hints.values())
        return wants

    # ------------------------------------------------------------------ tasks/* methods
    def _check_stateless(self, ctx: Context) -> bool:
        if not era_of(ctx.protocol_version).tasks_extension:
            return False
        if not ctx.client_supports("extensions", EXTENSION):
            # SEP-2663 §Protocol Errors: non-declaring clients get -32021.
            raise McpError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: the {EXTENSION} extension",
                _REQUIRED_CAPS,
            )
        return True

    async def _get(self, params: Any, ctx: Context) -> Any:
        stateless = self._check_stateless(ctx)
        if not stateless:
            return await get_task(self.manager, task_id_of(params), self.scope(ctx))
        return detailed_2026(await self.manager.get(task_id_of(params), self.scope(ctx)))

    async def _result(self, params: Any, ctx: Context) -> Any:
        if era_of(ctx.protocol_version).tasks_extension:
            # SEP-2663 §Backward Compatibility: removed; the result is inlined on tasks/get.
            raise McpError(METHOD_NOT_FOUND, "Method not found: tasks/result")
        task_id = task_id_of(params)
        scope = self.scope(ctx)
        await self.manager.get(task_id, scope)  # another's task is not routed here
        if ctx.request_id is not None:
            # Side requests of the task travel on this request's stream meanwhile.
            self._results_waiting[task_id] = ctx.request_id
        try:
            return await task_result(self.manager, task_id, scope)
        finally:
            if self._results_waiting.get(task_id) == ctx.request_id:
                del self._results_waiting[task_id]

    async def _list(self, params: Any, ctx: Context) -> Any:
        if era_of(ctx.protocol_version).tasks_extension:
            raise McpError(METHOD_NOT_FOUND, "Method not found: tasks/list")
        scope = self.scope(ctx)
        if scope == ANONYMOUS:
            # tasks.mdx §Task Isolation: a receiver that cannot identify the requestor does
            # not list (it would show every caller's tasks); its tasks are reached by id.
            raise McpError(
                METHOD_NOT_FOUND,
                "Method not found: tasks/list (the caller is not identified: tasks are "
                "reached by id only)",
            )
        return await list_tasks(self.manager, params, scope, self.page_size)

    async def _cancel(self, params: Any, ctx: Context) -> Any:
        if not self._check_stateless(ctx):
            return await cancel_task(self.manager, task_id_of(params), self.scope(ctx))
        task_id = task_id_of(params)
        await self.manager.get(task_id, self.scope(ctx))
        # SEP-2663 §Task Cancellation: an ack, also for a task already terminal.
        await self.manager.cancel(task_id)
        return {}

    async def _update(self, params: Any, ctx: Context) -> Any:
        if not era_of(ctx.protocol_version).tasks_extension:
            raise McpError(METHOD_NOT_FOUND, "Method not found: tasks/update")
        self._check_stateless(ctx)
        task_id = task_id_of(params)
        await self.manager.get(task_id, self.scope(ctx))
        responses = params.get("inputResponses") if isinstance(params, dict) else None
        if not isinstance(responses, dict):
            raise McpError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")

        def deliver(rec: TaskRecord) -> bool:
            # SEP-2663 §Task Update Requests: keys not outstanding are ignored.
            taken = [k for k in responses if k in rec.input_requests]
            for key in taken:
                rec.input_responses[key] = raw(responses[key])
                del rec.input_requests[key]
            if taken and not rec.input_requests and rec.status == "input_required":
                rec.status = "working"
            return bool(taken)

        await self.manager.mutate(task_id, deliver)
        return {}

    async def aclose(self) -> None:
        """Stop the tasks running in this process and close the store."""
        await self.manager.aclose()


# ---------------------------------------------------------------------- helpers
def _support(tool: t.Tool) -> str | None:
    execution = tool.execution
    if isinstance(execution, t.ToolExecution) and execution.task_support in (
        "optional",
        "required",
    ):
        return execution.task_support
    return None


def _as_task_context(ctx: Context) -> TaskContext:
    if isinstance(ctx, TaskContext):
        return ctx
    # Every field of the request's context (whatever Context grows: principal, scopes, ...).
    return TaskContext(**msgspec.structs.asdict(ctx))


def _status_notifier(ctx: Context) -> Callable[[TaskRecord], Awaitable[None]]:
    peer = ctx.peer

    async def notify(record: TaskRecord) -> None:
        # tasks.mdx §Task Status Notification: the full Task, no related-task _meta.
        await peer.send_notification(m.S2C_TASK_STATUS, task_2025(record))

    return notify


def _mentions(hint: Any, cls: type) -> bool:
    if isinstance(hint, type):
        return issubclass(hint, cls)
    return any(_mentions(arg, cls) for arg in typing.get_args(hint))
