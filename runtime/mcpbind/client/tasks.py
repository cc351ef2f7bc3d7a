"""The client side of tasks: start a tool call as a task and hold a handle to it.

    handle = await start_task(client, "research", {"topic": "mcp"})
    async for task in handle.updates():        # every status change, until it ends
        print(task.status, task.status_message)
    result = await handle.result()             # the CallToolResult (or the McpError)

On 2025-11-25 the call carries ``params.task`` and the server answers ``CreateTaskResult``
(basic/utilities/tasks.mdx §Creating Tasks); side requests (elicitation, sampling) arrive as
ordinary requests and go to the client's usual handlers. On 2026-07-28 the call declares the
tasks extension in its per-request capabilities and the server decides (SEP-2663); the
``inputRequests`` of an ``input_required`` task are answered through the same handlers and sent
with ``tasks/update``. ``TaskHandle(client, task_id)`` re-attaches to a task by id (after a
reconnect or a restart of the client).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import decoder

from ..protocol import (
    INTERNAL_ERROR,
    LocalProtocolError,
    McpError,
    RemoteProtocolError,
    custom_method,
)
from ..tasks.record import TERMINAL
from ..tasks.wire import EXTENSION, cancelled_error
from .handlers import answer_inputs

if TYPE_CHECKING:
    from .client import Client

__all__ = ["TaskHandle", "TaskState", "start_task"]


_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
_ROWS: Final = {
    name: custom_method(name, "client_to_server")
    for name in ("tools/call", "tasks/get", "tasks/result", "tasks/cancel", "tasks/update")
}
"""Rows that hand back plain JSON: a task call's result depends on the era and on the server."""


async def _request(client: Client, method: str, params: dict[str, Any]) -> Any:
    row = _ROWS[method]
    conn = client.connection
    if (
        conn is not None
        and client.era == "stateless"
        and method != "tools/call"
        and conn.core.outbound_method(method) is not row
    ):
        # The tasks extension's methods are no part of the 2026-07-28 core table.
        conn.core.register_method(row)
    return await client.request(method, params, info=row)


@dataclass(frozen=True, slots=True)
class TaskState:
    """One observation of a task (``tasks/get``), in either era's shape."""

    task_id: str
    status: str
    status_message: str | None
    poll_interval_ms: int | None
    raw: dict[str, Any]

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @classmethod
    def of(cls, data: dict[str, Any]) -> TaskState:
        poll = data.get("pollIntervalMs", data.get("pollInterval"))
        message = data.get("statusMessage")
        return cls(
            str(data["taskId"]),
            str(data["status"]),
            message if isinstance(message, str) else None,
            poll if isinstance(poll, int) else None,
            data,
        )


class TaskHandle:
    """A task on the server. ``result_now`` is set when the server answered at once (2026-07-28:
    it may skip the task); then every method reports that result."""

    def __init__(self, client: Client, task_id: str | None, *, result_now: Any = None) -> None:
        self.client = client
        self.task_id = task_id
        self.result_now = result_now
        self._answered: set[str] = set()
        #: 2025-11-25: the ``tasks/result`` started when the task first needed input.
        self._waiting: asyncio.Task[Any] | None = None

    @property
    def _stateless(self) -> bool:
        return self.client.era == "stateless"

    async def _call(self, method: str, params: dict[str, Any]) -> Any:
        if self._stateless:
            params = {**params, "_meta": with_tasks_extension(self.client)}
        return await _request(self.client, method, params)

    async def status(self, *, answer: bool = True) -> TaskState:
        """One ``tasks/get`` (on 2026-07-28, input requests it lists are answered first).
        ``answer=False``: they are not (nor, on 2025-11-25, is ``tasks/result`` started for
        them): the caller answers the ``inputRequests`` of ``raw`` with :meth:`update`."""
        if self.task_id is None:
            return TaskState("", "completed", None, None, {})
        data = await self._call("tasks/get", {"taskId": self.task_id})
        if not isinstance(data, dict) or not isinstance(data.get("taskId"), str):
            raise RemoteProtocolError(INTERNAL_ERROR, f"tasks/get {self.task_id}: not a task")
        state = TaskState.of(data)
        if state.status == "input_required" and answer:
            if self._stateless:
                await self._answer(state.raw.get("inputRequests") or {})
            elif self._waiting is None:
                # tasks.mdx §Input Required Status: call tasks/result preemptively; the
                # server's requests for input travel on it (to the usual handlers).
                self._waiting = asyncio.get_running_loop().create_task(
                    self._call("tasks/result", {"taskId": self.task_id})
                )
        return state

    async def _answer(self, requests: dict[str, Any]) -> None:
        fresh = {k: v for k, v in requests.items() if k not in self._answered}
        if not fresh:
            return
        typed = decoder(dict[str, t.InputRequest]).decode(msgspec.json.encode(fresh))
        handlers = self.client.handlers
        responses = await answer_inputs(
            typed,
            sampling=handlers.sampling,
            elicitation=handlers.elicitation,
            roots=handlers.roots,
        )
        self._answered.update(fresh)
        if responses:
            params = {"taskId": self.task_id, "inputResponses": msgspec.to_builtins(responses)}
            await self._call("tasks/update", params)

    async def update(self, responses: dict[str, Any]) -> None:
        """2026-07-28 ``tasks/update``: answers to the task's ``inputRequests``, by key, as the
        caller's own (SEP-2663 §Task Update Requests; keys not outstanding are ignored)."""
        if not self._stateless:
            raise LocalProtocolError("tasks/update is a 2026-07-28 method (tasks extension)")
        await self._call("tasks/update", {"taskId": self.task_id, "inputResponses": responses})
        self._answered.update(responses)

    async def updates(self) -> AsyncIterator[TaskState]:
        """Each change of status or status message, polled at the server's interval, until
        the task ends (the last one yielded is terminal)."""
        last: tuple[str, str | None] | None = None
        while True:
            state = await self.status()
            if (state.status, state.status_message) != last:
                last = (state.status, state.status_message)
                yield state
            if state.terminal:
                return
            await anyio.sleep((state.poll_interval_ms or 500) / 1000)

    async def wait(self) -> TaskState:
        """Poll until the task ends; its final state."""
        final = None
        async for update in self.updates():
            final = update
        assert final is not None
        return final

    async def result(self) -> t.CallToolResult:
        """Wait for the end; the tool's result, or the ``McpError`` the call ended with."""
        if self.task_id is None:
            return _as_tool_result(self.result_now)
        if not self._stateless:
            # tasks.mdx §Retrieving Task Results: tasks/result blocks until the end.
            waiting, self._waiting = self._waiting, None
            if waiting is not None:
                return _as_tool_result(await waiting)
            value = await self._call("tasks/result", {"taskId": self.task_id})
            return _as_tool_result(value)
        state = await self.wait()
        if state.status == "completed":
            return _as_tool_result(state.raw.get("result") or {})
        if state.status == "cancelled":  # the same error as a 2025-11-25 tasks/result
            raise cancelled_error(state.task_id)
        error = state.raw.get("error")
        if isinstance(error, dict):
            raise McpError(
                int(error.get("code", INTERNAL_ERROR)), str(error.get("message")), error.get("data")
            )
        raise McpError(INTERNAL_ERROR, f"task {self.task_id} was {state.status}")

    async def cancel(self) -> None:
        """``tasks/cancel``: stop the task (the server records ``cancelled``)."""
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None
        if self.task_id is not None:
            await self._call("tasks/cancel", {"taskId": self.task_id})


def _as_tool_result(value: Any) -> t.CallToolResult:
    # Re-encoded: CallToolResult keeps some fields as raw JSON, which convert() cannot fill.
    result: t.CallToolResult = decoder(t.CallToolResult).decode(msgspec.json.encode(value))
    return result


def with_tasks_extension(client: Client) -> dict[str, Any]:
    """The client's per-request ``_meta`` with the tasks extension declared (the task methods
    and a ``subscriptions/listen`` for task ids send it; SEP-2663 §Capability Negotiation)."""
    meta = dict(client.request_meta)
    caps = dict(meta.get(_CAPABILITIES) or {})
    caps["extensions"] = {**(caps.get("extensions") or {}), EXTENSION: {}}
    meta[_CAPABILITIES] = caps
    return meta


async def start_task(
    client: Client,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    ttl_ms: int | None = None,
) -> TaskHandle:
    """Call tool ``name`` as a task; the handle to it."""
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if client.era != "stateless":
        params["task"] = {} if ttl_ms is None else {"ttl": ttl_ms}
        created = await _request(client, "tools/call", params)
        task = created.get("task") if isinstance(created, dict) else None
        if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
            raise RemoteProtocolError(INTERNAL_ERROR, f"tools/call {name}: not a CreateTaskResult")
        return TaskHandle(client, task["taskId"])
    params["_meta"] = with_tasks_extension(client)
    rounds = 0
    while True:
        value = await _request(client, "tools/call", params)
        kind = value.get("resultType", "complete") if isinstance(value, dict) else None
        if kind == "task" and isinstance(value.get("taskId"), str):
            return TaskHandle(client, value["taskId"])
        if kind != "input_required" or rounds >= client.max_input_rounds:
            return TaskHandle(client, None, result_now=value)
        # SEP-2663 §Composition with MRTR: input rounds come before the task is created.
        rounds += 1
        requests = decoder(dict[str, t.InputRequest]).decode(
            msgspec.json.encode(value.get("inputRequests") or {})
        )
        responses = await answer_inputs(
            requests,
            sampling=client.handlers.sampling,
            elicitation=client.handlers.elicitation,
            roots=client.handlers.roots,
        )
        params = {**params, "inputResponses": msgspec.to_builtins(responses)}
        if "requestState" in value:
            params["requestState"] = value["requestState"]
