"""The server as the requestor of a client-side task (2025-11-25 basic/utilities/tasks.mdx
§Task-Augmented Sampling Request): ``await ctx.sample(params, task=True)`` (or ``elicit``)
sends the request with ``params.task``, takes the client's ``CreateTaskResult``, polls
``tasks/get`` at the client's interval and fetches the result with ``tasks/result``.

Only toward a client that declared ``tasks.requests.<kind>.<method>`` (§Capability
Negotiation); otherwise nothing is sent and ``LocalProtocolError`` is raised. The 2026-07-28
tasks extension has no client-side tasks.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Final, Protocol

import anyio
import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, RequestOptions, decoder
from mcpbind_types.unified import methods as m

from ...protocol import (
    INTERNAL_ERROR,
    REQUEST_TIMEOUT,
    LocalProtocolError,
    McpError,
    RemoteProtocolError,
    custom_method,
)
from ...tasks.record import TERMINAL
from ...versions import era_of

__all__ = ["Requester", "ask_as_task"]

_CAPABILITY: Final = {
    "sampling/createMessage": ("tasks", "requests", "sampling", "createMessage"),
    "elicitation/create": ("tasks", "requests", "elicitation", "create"),
}
_CREATE: Final = {name: custom_method(name, "server_to_client") for name in _CAPABILITY}
"""The same requests, answered with a ``CreateTaskResult`` (plain JSON) instead."""


class Requester(Protocol):
    """The session this asks through (a handler context's ``peer``,
    :class:`mcpbind.server.context.Peer`)."""

    async def send_request(
        self, method: MethodInfo[Any, Any], params: Any, options: RequestOptions | None = None
    ) -> Any: ...

    def peer_has_capability(self, path: tuple[str, ...]) -> bool: ...


async def ask_as_task(
    peer: Requester,
    protocol_version: str | None,
    method: MethodInfo[Any, Any],
    params: Any,
    *,
    timeout: float | None = None,
    ttl_ms: int | None = None,
) -> Any:
    """Send ``method`` to the client of ``peer`` (speaking ``protocol_version``) as a task and
    wait for its result (``timeout``: for all of it; the task is cancelled when it passes or
    when the caller is cancelled)."""
    path = _CAPABILITY[method.method]
    if era_of(protocol_version).tasks_extension:
        raise LocalProtocolError(
            f"{method.method} as a task: {protocol_version} has no client tasks"
        )
    if not peer.peer_has_capability(path):
        raise LocalProtocolError(
            f"{method.method} as a task needs the client capability "
            f"{'.'.join(path)!r}, which the client did not declare"
        )
    task = t.TaskMetadata() if ttl_ms is None else t.TaskMetadata(ttl=ttl_ms)
    created = await peer.send_request(
        _CREATE[method.method], msgspec.structs.replace(params, task=task)
    )
    info = created.get("task") if isinstance(created, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("taskId"), str):
        raise RemoteProtocolError(INTERNAL_ERROR, f"{method.method}: not a CreateTaskResult")
    task_id: str = info["taskId"]
    deadline = None if timeout is None else time.monotonic() + timeout
    ended = False
    try:
        state = info
        # §Getting Tasks: poll at the receiver's interval until a terminal status.
        while state.get("status") not in TERMINAL:
            if deadline is not None and time.monotonic() >= deadline:
                raise McpError(
                    REQUEST_TIMEOUT, f"{method.method} task {task_id}: no result in time"
                )
            poll = state.get("pollInterval")
            await anyio.sleep((poll if isinstance(poll, int) else 500) / 1000)
            state = await _ask(peer, m.S2C_GET_TASK, task_id, deadline)
        ended = True
        value = await _ask(peer, m.S2C_GET_TASK_PAYLOAD, task_id, deadline)
    finally:
        if not ended:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await _ask(peer, m.S2C_CANCEL_TASK, task_id, None)
    return decoder(method.result_type).decode(msgspec.json.encode(value))


async def _ask(
    peer: Requester, row: MethodInfo[Any, Any], task_id: str, deadline: float | None
) -> Any:
    left = None if deadline is None else max(deadline - time.monotonic(), 0.001)
    options = None if left is None else RequestOptions(timeout=left)
    return await peer.send_request(row, {"taskId": task_id}, options)
