"""Tasks on an mcpbind server, both eras, driven by mcpbind's own client handle (in memory).

2025-11-25: basic/utilities/tasks.mdx (§Capabilities, §Tool-Level Negotiation, §Creating
Tasks, §Retrieving Task Results, §Listing Tasks, §Cancelling Tasks, §Input Required Status,
§Task Isolation and Access Control). 2026-07-28: the tasks extension (SEP-2663)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import anyio
import msgspec
import pytest

from mcpbind import Client, ClientHandlers, McpError, Server
from mcpbind import types as t
from mcpbind.client import TaskHandle, start_task
from mcpbind.server.tasks import RELATED_TASK, TaskContext, Tasks
from mcpbind.tasks.wire import REQUEST_CANCELLED
from tests.tasks.forms import ask_name

pytestmark = pytest.mark.anyio

HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"


def _server(**options: Any) -> tuple[Server, Tasks]:
    server = Server("tasks-test")
    tasks = Tasks(server, poll_interval_ms=20, **options)
    gate = asyncio.Event()
    noticed = threading.Event()
    started = threading.Event()

    @server.tool(task="optional")
    async def research(topic: str, task: TaskContext) -> str:
        await task.status(f"reading about {topic}")
        await task.report_progress(1, 2)
        return f"notes on {topic}"

    @server.tool(task="required")
    async def build(task: TaskContext) -> str:
        await gate.wait()
        return "built"

    @server.tool()
    def plain(x: int) -> int:
        return x * 2

    @server.tool(task="optional")
    async def ask(task: TaskContext) -> str:
        answer = await task.elicit(ask_name())
        return f"hello {(answer.content or {}).get('name')}"

    @server.tool(task="optional")
    def crunch(task: TaskContext) -> str:
        """A plain def (a worker thread): it notices cancellation by polling."""
        started.set()
        while not task.cancelled:
            time.sleep(0.01)
        noticed.set()
        return "stopped"

    @server.tool(task="optional")
    async def broken(task: TaskContext) -> str:
        raise McpError(-32603, "broken on purpose")

    @server.tool(task="optional")
    async def tool_error(task: TaskContext) -> str:
        raise RuntimeError("the tool failed")

    server.gate = gate  # type: ignore[attr-defined]
    server.noticed = noticed  # type: ignore[attr-defined]
    server.started = started  # type: ignore[attr-defined]
    return server, tasks


def _elicitation(seen: list[Any]) -> ClientHandlers:
    async def elicit(params: Any) -> t.ElicitResult:
        seen.append(params)
        return t.ElicitResult(action="accept", content={"name": "Ada"})

    async def notified(method: str, params: Any) -> None:
        seen.append((method, params))

    return ClientHandlers(elicitation=elicit, notification=notified)


def _statuses(seen: list[Any]) -> list[str]:
    """The statuses of the ``notifications/tasks/status`` the client received, in order."""
    return [
        x[1].status for x in seen if isinstance(x, tuple) and x[0] == "notifications/tasks/status"
    ]


async def _json(client: Client, method: str, params: dict[str, Any]) -> Any:
    """A request's result as plain JSON (the handshake era decodes known methods into types)."""
    return msgspec.to_builtins(await client.request(method, params))


async def _error(coro: Any) -> McpError:
    with pytest.raises(McpError) as info:
        await coro
    return info.value


# ---------------------------------------------------------------------- 2025-11-25
async def test_capability_and_tool_level_support_are_declared() -> None:
    server, _ = _server()
    async with Client(server, protocol_version=HANDSHAKE) as client:
        caps = client.server_capabilities
        assert caps is not None and isinstance(caps.tasks, t.ServerCapabilitiesTasks)
        assert msgspec.to_builtins(caps.tasks) == {
            "cancel": {},
            "list": {},
            "requests": {"tools": {"call": {}}},
        }
        tools = {tool.name: tool for tool in (await client.list_tools(None)).tools}
        assert tools["research"].execution == t.ToolExecution(task_support="optional")
        assert tools["build"].execution == t.ToolExecution(task_support="required")
        assert isinstance(tools["plain"].execution, msgspec.UnsetType)


async def test_task_augmented_call_completes_and_tasks_result_carries_related_task() -> None:
    server, _ = _server()
    seen: list[Any] = []
    async with Client(server, protocol_version=HANDSHAKE, handlers=_elicitation(seen)) as client:
        handle = await start_task(client, "research", {"topic": "mcp"}, ttl_ms=60_000)
        assert handle.task_id
        result = await handle.result()
        assert [c.text for c in result.content if isinstance(c, t.TextContent)] == ["notes on mcp"]
        assert isinstance(result.meta, dict)
        assert result.meta[RELATED_TASK] == {"taskId": handle.task_id}
        state = await handle.status()
        assert state.status == "completed" and state.raw["ttl"] == 60_000
        assert state.raw["pollInterval"] == 20
        statuses = _statuses(seen)
        assert statuses and statuses[-1] == "completed"


async def test_required_and_forbidden_are_enforced_with_32601() -> None:
    server, _ = _server()
    async with Client(server, protocol_version=HANDSHAKE) as client:
        err = await _error(client.call("build", {}))
        assert err.code == -32601 and "requires task augmentation" in err.message
        err = await _error(start_task(client, "plain", {"x": 1}))
        assert err.code == -32601
        plain = await client.call("plain", {"x": 2})
        assert plain.content == [t.TextContent(text="4")]


async def test_list_pages_cancel_and_errors() -> None:
    server, _ = _server(page_size=2)
    async with Client(server, protocol_version=HANDSHAKE) as client:
        handles = [await start_task(client, "build", {}) for _ in range(3)]
        first = await _json(client, "tasks/list", {})
        assert len(first["tasks"]) == 2 and "nextCursor" in first
        second = await _json(client, "tasks/list", {"cursor": first["nextCursor"]})
        assert "nextCursor" not in second
        ids = [x["taskId"] for x in first["tasks"] + second["tasks"]]
        assert ids == [h.task_id for h in handles]
        err = await _error(client.request("tasks/list", {"cursor": "!!bogus"}))
        assert err.code == -32602
        cancelled = await _json(client, "tasks/cancel", {"taskId": handles[0].task_id})
        assert cancelled["status"] == "cancelled"
        err = await _error(client.request("tasks/cancel", {"taskId": handles[0].task_id}))
        assert err.code == -32602 and "terminal status 'cancelled'" in err.message
        err = await _error(client.request("tasks/get", {"taskId": "nope"}))
        assert err.code == -32602 and "not found" in err.message
        server.gate.set()  # type: ignore[attr-defined]
        assert (await handles[1].result()).content[0] == t.TextContent(text="built")
        state = await handles[0].status()
        assert state.status == "cancelled"  # it stays cancelled


async def test_input_required_sends_the_elicitation_with_related_task_meta() -> None:
    server, _ = _server()
    seen: list[Any] = []
    async with Client(server, protocol_version=HANDSHAKE, handlers=_elicitation(seen)) as client:
        handle = await start_task(client, "ask", {})
        result = await handle.result()
        assert result.content[0] == t.TextContent(text="hello Ada")
        asked = [p for p in seen if isinstance(p, t.ElicitRequestFormParams)]
        assert asked and asked[0].meta == {RELATED_TASK: {"taskId": handle.task_id}}
        statuses = _statuses(seen)
        assert "input_required" in statuses


async def test_tool_errors_fail_the_task_and_protocol_errors_come_back_from_result() -> None:
    server, _ = _server()
    async with Client(server, protocol_version=HANDSHAKE) as client:
        handle = await start_task(client, "tool_error", {})
        result = await handle.result()
        assert result.is_error is True
        assert (await handle.status()).status == "failed"  # 2025-11-25: isError fails it
        handle = await start_task(client, "broken", {})
        err = await _error(handle.result())
        assert (err.code, err.message) == (-32603, "broken on purpose")


async def test_another_session_cannot_see_the_task() -> None:
    """§Task Isolation: same -32602 as an unknown id; list shows nothing of another's."""
    server, _ = _server()
    async with (
        Client(server, protocol_version=HANDSHAKE) as alice,
        Client(server, protocol_version=HANDSHAKE) as mallory,
    ):
        handle = await start_task(alice, "build", {})
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            err = await _error(mallory.request(method, {"taskId": handle.task_id}))
            assert err.code == -32602 and "not found" in err.message
        assert (await _json(mallory, "tasks/list", {}))["tasks"] == []
        assert (await handle.status()).status == "working"
        await handle.cancel()


async def test_ttl_expiry_makes_the_task_unknown() -> None:
    server, _ = _server()
    async with Client(server, protocol_version=HANDSHAKE) as client:
        handle = await start_task(client, "research", {"topic": "x"}, ttl_ms=200)
        assert (await handle.status()).raw["ttl"] == 200
        for _ in range(100):
            try:
                await handle.status()
            except McpError as err:
                assert err.code == -32602
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the task outlived its ttl")


# ---------------------------------------------------------------------- 2026-07-28
async def test_extension_task_with_input_by_tasks_update() -> None:
    server, _ = _server()
    seen: list[Any] = []
    async with Client(server, protocol_version=STATELESS, handlers=_elicitation(seen)) as client:
        handle = await start_task(client, "ask", {})
        assert isinstance(handle, TaskHandle) and handle.task_id
        states = [s.status async for s in handle.updates()]
        assert "input_required" in states and states[-1] == "completed"
        result = await handle.result()
        assert result.content[0] == t.TextContent(text="hello Ada")
        assert any(isinstance(p, t.ElicitRequestFormParams) for p in seen)


async def test_client_listen_for_task_ids_hears_the_status_without_polling() -> None:
    """SEP-2663 §Task Status Notifications from the client side: ``Client.listen(task_ids=...)``
    sends ``taskIds`` with the extension declared on that request, and the task's
    ``notifications/tasks`` (its ``DetailedTask``, the result inlined) reach the notification
    handler once it ends, with no ``tasks/get`` sent."""
    server, _ = _server()
    statuses: list[Any] = []
    heard = anyio.Event()

    async def notified(method: str, params: Any) -> None:
        if method == "notifications/tasks":
            statuses.append(params)
            heard.set()

    handlers = ClientHandlers(notification=notified)
    async with Client(server, protocol_version=STATELESS, handlers=handlers) as client:
        handle = await start_task(client, "build", {})
        assert handle.task_id is not None
        subscription = await client.listen(task_ids=[handle.task_id])
        server.gate.set()  # type: ignore[attr-defined]
        with anyio.fail_after(10):
            await heard.wait()
        await subscription.close()
    (status,) = statuses
    assert status["taskId"] == handle.task_id and status["status"] == "completed"
    assert status["result"]["content"] == [{"type": "text", "text": "built"}]


async def test_extension_errors_cancel_and_capability() -> None:
    server, _ = _server()
    async with Client(server, protocol_version=STATELESS) as client:
        handle = await start_task(client, "tool_error", {})
        result = await handle.result()  # SEP-2663: isError completes the task
        assert result.is_error is True and (await handle.status()).status == "completed"
        handle = await start_task(client, "broken", {})
        err = await _error(handle.result())
        assert err.code == -32603
        handle = await start_task(client, "build", {})
        await handle.cancel()
        assert (await handle.status()).status == "cancelled"
        await handle.cancel()  # an ack again: cancel is idempotent in the extension
        err = await _error(client.call("build", {}))  # no extension declared on this call
        assert err.code == -32021
        assert err.data == {
            "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        }
        err = await _error(client.request("tasks/get", {"taskId": handle.task_id}))
        assert err.code == -32021
        plain = await client.call("research", {"topic": "sync"})  # optional: runs plainly
        assert plain.content[0] == t.TextContent(text="notes on sync")


async def test_a_threaded_tool_notices_cancellation_and_bad_ttl_is_refused() -> None:
    server, _ = _server()
    async with Client(server, protocol_version=HANDSHAKE) as client:
        handle = await start_task(client, "crunch", {})
        assert await asyncio.to_thread(server.started.wait, 10)  # type: ignore[attr-defined]
        await handle.cancel()
        assert await asyncio.to_thread(server.noticed.wait, 10)  # type: ignore[attr-defined]
        assert (await handle.status()).status == "cancelled"
        err = await _error(start_task(client, "research", {"topic": "x"}, ttl_ms=-1))
        assert err.code == -32602


async def test_a_scope_may_run_only_max_active_tasks_at_once() -> None:
    """§Resource Management: receivers SHOULD limit concurrent tasks per requestor."""
    server, _ = _server(max_active=2)
    async with Client(server, protocol_version=HANDSHAKE) as client:
        first = await start_task(client, "build", {})
        await start_task(client, "build", {})
        err = await _error(start_task(client, "build", {}))
        assert err.code == -32600 and "Too many running tasks (2)" in err.message
        await first.cancel()
        for _ in range(100):  # the slot frees once the cancelled work has stopped
            try:
                third = await start_task(client, "build", {})
                break
            except McpError:
                await asyncio.sleep(0.02)
        else:
            pytest.fail("the cancelled task's slot was never freed")
        await third.cancel()


async def test_extension_tasks_are_bound_to_the_scope_the_server_names() -> None:
    """SEP-2663 §Security Implications (auth binding): with a scope per caller (here the
    per-request clientInfo name; in production the authenticated principal), another caller
    gets -32602 from tasks/get, tasks/update and tasks/cancel, as for an unknown id."""

    def caller(ctx: Any) -> str:
        info = ctx.meta.get("io.modelcontextprotocol/clientInfo") or {}
        return f"client:{info.get('name')}"

    server, _ = _server(scope=caller)
    async with (
        Client(server, protocol_version=STATELESS, name="alice") as alice,
        Client(server, protocol_version=STATELESS, name="mallory") as mallory,
    ):
        handle = await start_task(alice, "build", {})
        theirs = TaskHandle(mallory, handle.task_id)
        for attempt in (
            theirs.status(),
            theirs.cancel(),
            theirs._call("tasks/update", {"taskId": handle.task_id, "inputResponses": {}}),
        ):
            err = await _error(attempt)
            assert err.code == -32602 and "not found" in err.message
        assert (await handle.status()).status == "working"
        await handle.cancel()


@pytest.mark.parametrize("version", [HANDSHAKE, STATELESS])
async def test_a_cancelled_tasks_result_is_the_same_error_on_both_eras(version: str) -> None:
    """A cancelled task has no result, and neither era's spec names the error for asking it:
    2025-11-25 tasks.mdx §Result Retrieval returns what the underlying request would have
    returned, and §Protocol Errors keeps -32602 for an invalid or nonexistent taskId (a
    cancelled task's id is neither) and -32603 for internal errors (a requested cancel is not
    one); SEP-2663 §Task Status gives a CancelledTask no error. So -32800 (Request cancelled,
    as the official Python SDK answers a cancelled request) on both eras: from the server's
    2025 ``tasks/result`` and from the 2026-07-28 task handle (issue 31 item 7: it was -32602
    from 2025 ``tasks/result`` and -32603 on 2026-07-28)."""
    server, _ = _server()
    async with Client(server, protocol_version=version) as client:
        handle = await start_task(client, "build", {})
        await handle.cancel()
        err = await _error(handle.result())
        assert err.code == REQUEST_CANCELLED == -32800
        assert err.message == f"Task {handle.task_id} was cancelled before it had a result"
