"""Tasks passed through the gateway (issue 33): a downstream task-augmented ``tools/call`` is a
task on the upstream server that owns the tool, and ``tasks/get``, ``tasks/result``,
``tasks/list`` and ``tasks/cancel`` are routed to it; a real mcpbind upstream (``Tasks``), in
memory, upstreams of both eras, mcpbind's client downstream on both eras. (The official Python
SDK in the venv, 2.3.0, has no client side of tasks: nothing of it to drive here.)

Spec: 2025-11-25 basic/utilities/tasks.mdx (§Capabilities, §Tool-Level Negotiation, §Creating
Tasks, §Getting Tasks, §Result Retrieval, §Listing Tasks, §Cancelling Tasks, §Task Status
Notification, §Task Isolation and Access Control); the 2026-07-28 tasks extension
(extensions/sep-2663-tasks-extension.mdx §Capability Negotiation, §Task Creation, §Task
Polling, §Task Cancellation).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from mcpbind import Client, ClientHandlers, McpError, Server
from mcpbind import types as t
from mcpbind.client.tasks import TaskHandle, start_task
from mcpbind.host import Host, ToolCallRequest
from mcpbind.host.config import PolicyValue
from mcpbind.protocol import INVALID_PARAMS, METHOD_NOT_FOUND
from mcpbind.server.options import StatelessOptions
from mcpbind.server.tasks import TaskContext, Tasks
from mcpbind.tasks.wire import EXTENSION, RELATED_TASK
from mcpbind.transports import StdioClientTransport
from mcpbind.versions import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_STATELESS,
    STATELESS_VERSIONS,
)
from tests.tasks.forms import ask_name

from .helpers import text_of, wait_for
from .servers import READ_ONLY

pytestmark = pytest.mark.anyio

ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]
TASK_APP = str(Path(__file__).resolve().parents[1] / "tasks" / "task_app.py")
UPSTREAM_ERAS = {"handshake": HANDSHAKE_VERSIONS, "stateless": STATELESS_VERSIONS}


class Jobs:
    """A real upstream with task-capable tools; records what ran and what was cancelled."""

    def __init__(self, versions: tuple[str, ...]) -> None:
        self.ran: list[int] = []
        self.release = anyio.Event()
        self.cancelled: list[str] = []
        self.upstream_ids: list[str] = []
        server = self.server = Server("jobs", version="1.0.0")
        server.stateless = StatelessOptions(versions=versions)
        Tasks(server, poll_interval_ms=20)

        @server.tool(task="optional", annotations=READ_ONLY)
        async def build(steps: int, task: TaskContext) -> str:
            self.ran.append(steps)
            assert task.task_id is not None
            self.upstream_ids.append(task.task_id)
            for step in range(1, steps + 1):
                await task.status(f"step {step}")
                await anyio.sleep(0.02)
            return f"built in {steps} steps"

        @server.tool(task="required", annotations=READ_ONLY)
        async def forever(task: TaskContext) -> str:
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.cancelled.append("forever")
                raise
            return "never"

        @server.tool(task="optional", annotations=READ_ONLY)
        async def held(task: TaskContext) -> str:
            assert task.task_id is not None
            self.upstream_ids.append(task.task_id)
            await self.release.wait()
            return "released"

        @server.tool(task="optional", annotations=READ_ONLY)
        async def breaks(task: TaskContext) -> t.CallToolResult:
            return t.CallToolResult(content=[t.TextContent(text="disk full")], is_error=True)

        @server.tool(annotations=READ_ONLY)
        def plain(text: str) -> str:
            return f"plain {text}"

        @server.tool(task="optional", annotations=READ_ONLY)
        async def ask(task: TaskContext) -> str:
            assert task.task_id is not None
            self.upstream_ids.append(task.task_id)
            answer = await task.elicit(ask_name())
            return f"hello {(answer.content or {}).get('name')}"


async def allow(request: ToolCallRequest) -> PolicyValue:
    return "allow"


@asynccontextmanager
async def gateway(
    upstream: Server, *versions: str, handlers: ClientHandlers | None = None
) -> AsyncIterator[tuple[Host, list[Client]]]:
    """The Host serving ``upstream`` as ``j``, behind the gateway; one client per version."""
    host = Host({"j": upstream}, check=allow)
    server = host.as_server()
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(host)
        clients = [
            await stack.enter_async_context(Client(server, protocol_version=v, handlers=handlers))
            for v in versions
        ]
        yield host, clients


def task_id(handle: TaskHandle) -> str:
    assert handle.task_id is not None
    return handle.task_id


@pytest.mark.parametrize("upstream_era", list(UPSTREAM_ERAS))
@pytest.mark.parametrize("version", ERAS)
async def test_the_gateway_declares_tasks_when_its_upstream_does(
    version: str, upstream_era: str
) -> None:
    """tasks.mdx §Capabilities (2025-11-25: ``tasks.requests.tools.call``) and SEP-2663
    §Capability Negotiation (2026-07-28: the extension in ``server/discover``); §Tool-Level
    Negotiation: a task-capable tool is listed ``optional`` (the gateway also runs a
    task-only one to the end for a caller that asks for no task), a plain one without."""
    jobs = Jobs(UPSTREAM_ERAS[upstream_era])
    async with gateway(jobs.server, version) as (_, (client,)):
        if version == LATEST_HANDSHAKE:
            assert client.peer_has_capability(("tasks", "requests", "tools", "call"))
            assert client.peer_has_capability(("tasks", "cancel"))
        else:
            assert client.peer_has_capability(("extensions", EXTENSION))
        tools = {tool.name: tool async for tool in client.iter_tools()}
        for name in ("j__build", "j__forever"):
            execution = tools[name].execution
            assert not isinstance(execution, msgspec.UnsetType)
            assert execution.task_support == "optional"
        assert isinstance(tools["j__plain"].execution, msgspec.UnsetType)


@pytest.mark.parametrize("version", ERAS)
async def test_without_an_upstream_with_tasks_none_are_declared(version: str) -> None:
    """tasks.mdx §Capabilities: nothing behind the gateway runs tasks, so it declares none."""
    plain = Server("plain", version="1.0.0")

    @plain.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        return text

    async with gateway(plain, version) as (_, (client,)):
        assert not client.peer_has_capability(("tasks",))
        assert not client.peer_has_capability(("extensions", EXTENSION))


@pytest.mark.parametrize("upstream_era", list(UPSTREAM_ERAS))
@pytest.mark.parametrize("version", ERAS)
async def test_a_task_call_runs_as_a_task_upstream_under_a_gateway_id(
    version: str, upstream_era: str
) -> None:
    """§Creating Tasks, §Getting Tasks, §Result Retrieval (SEP-2663 §Task Polling): the call
    makes one task upstream; the client polls it through the gateway under an id the gateway
    minted (never the upstream's) and gets the tool's result, naming the downstream id."""
    jobs = Jobs(UPSTREAM_ERAS[upstream_era])
    async with gateway(jobs.server, version) as (_, (client,)):
        handle = await start_task(client, "j__build", {"steps": 3})
        down = task_id(handle)
        seen = [state async for state in handle.updates()]
        assert seen[-1].status == "completed"
        assert {"step 1", "step 2", "step 3"} & {s.status_message for s in seen}
        result = await handle.result()
        assert text_of(result) == "built in 3 steps"
        assert jobs.ran == [3]  # one upstream run for the whole task
        assert jobs.upstream_ids and down not in jobs.upstream_ids
        if version == LATEST_HANDSHAKE:
            assert isinstance(result.meta, dict)
            assert result.meta[RELATED_TASK] == {"taskId": down}


@pytest.mark.parametrize("upstream_era", list(UPSTREAM_ERAS))
@pytest.mark.parametrize("version", ERAS)
async def test_cancelling_the_downstream_task_cancels_the_upstream_one(
    version: str, upstream_era: str
) -> None:
    """§Cancelling Tasks (SEP-2663 §Task Cancellation): ``tasks/cancel`` reaches the upstream
    task, which stops; the task is then ``cancelled`` through the gateway."""
    jobs = Jobs(UPSTREAM_ERAS[upstream_era])
    async with gateway(jobs.server, version) as (_, (client,)):
        handle = await start_task(client, "j__forever", {})
        assert (await handle.status()).status == "working"
        await handle.cancel()
        await wait_for(lambda: jobs.cancelled == ["forever"])
        assert (await handle.status()).status == "cancelled"


@pytest.mark.parametrize("upstream_era", list(UPSTREAM_ERAS))
async def test_tasks_list_shows_the_callers_tasks_only(upstream_era: str) -> None:
    """§Listing Tasks with §Task Isolation: each session lists its own tasks, under the
    gateway's ids, a page at a time (``nextCursor``); a cursor not minted here is -32602."""
    jobs = Jobs(UPSTREAM_ERAS[upstream_era])
    async with gateway(jobs.server, LATEST_HANDSHAKE, LATEST_HANDSHAKE) as (_, (a, b)):
        mine = [task_id(await start_task(a, "j__build", {"steps": 1})) for _ in range(3)]
        theirs = task_id(await start_task(b, "j__build", {"steps": 1}))
        listed_b = await b.request("tasks/list", {})
        assert [task.task_id for task in listed_b.tasks] == [theirs]
        assert isinstance(listed_b.next_cursor, msgspec.UnsetType)
        first = await a.request("tasks/list", {})
        assert len(first.tasks) == 3
        assert [task.task_id for task in first.tasks] == mine
        with pytest.raises(McpError) as caught:
            await a.request("tasks/list", {"cursor": "not-ours"})
        assert caught.value.code == INVALID_PARAMS


async def test_tasks_list_pages() -> None:
    """§Listing Tasks: pages of the server's size, followed by ``nextCursor``."""
    jobs = Jobs(HANDSHAKE_VERSIONS)
    host = Host({"j": jobs.server}, check=allow)
    server = host.as_server()
    server.page_size = 2
    async with host, Client(server, protocol_version=LATEST_HANDSHAKE) as client:
        mine = [task_id(await start_task(client, "j__build", {"steps": 1})) for _ in range(3)]
        first = await client.request("tasks/list", {})
        assert [task.task_id for task in first.tasks] == mine[:2]
        assert isinstance(first.next_cursor, str)
        rest = await client.request("tasks/list", {"cursor": first.next_cursor})
        assert [task.task_id for task in rest.tasks] == mine[2:]
        assert isinstance(rest.next_cursor, msgspec.UnsetType)


async def test_one_session_cannot_read_or_cancel_anothers_task() -> None:
    """§Task Isolation and Access Control: another session's task id is "not found" for
    ``tasks/get``, ``tasks/result`` and ``tasks/cancel``, exactly as an unknown id is, and
    the owner's task runs on untouched."""
    jobs = Jobs(HANDSHAKE_VERSIONS)
    async with gateway(jobs.server, LATEST_HANDSHAKE, LATEST_HANDSHAKE) as (_, (owner, other)):
        handle = await start_task(owner, "j__forever", {})
        stolen = task_id(handle)
        unknown: list[tuple[int, str]] = []
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            for target in (stolen, "no-such-task"):
                with pytest.raises(McpError) as caught:
                    await other.request(method, {"taskId": target})
                unknown.append((caught.value.code, caught.value.message))
        assert set(unknown) == {(INVALID_PARAMS, "Failed to retrieve task: Task not found")}
        assert jobs.cancelled == []
        assert (await handle.status()).status == "working"
        await handle.cancel()


@pytest.mark.parametrize("upstream_era", list(UPSTREAM_ERAS))
async def test_what_an_upstream_task_asks_reaches_its_client_under_the_gateway_id(
    upstream_era: str,
) -> None:
    """§Input Required Status and §Related Task Metadata: the upstream task's elicitation
    reaches the 2025-11-25 client waiting on ``tasks/result``; its related-task ``_meta``
    names the gateway's id (a handshake-era upstream's names its own, replaced; a
    2026-07-28 upstream's input request names none, added), never the upstream's."""
    seen: list[Any] = []

    async def elicit(params: Any) -> t.ElicitResult:
        seen.append(params.meta)
        return t.ElicitResult(action="accept", content={"name": "Ada"})

    jobs = Jobs(UPSTREAM_ERAS[upstream_era])
    handlers = ClientHandlers(elicitation=elicit)
    async with gateway(jobs.server, LATEST_HANDSHAKE, handlers=handlers) as (_, (client,)):
        handle = await start_task(client, "j__ask", {})
        assert text_of(await handle.result()) == "hello Ada"
    assert seen == [{RELATED_TASK: {"taskId": task_id(handle)}}]
    assert jobs.upstream_ids and jobs.upstream_ids[0] != task_id(handle)


async def test_a_2026_task_asks_its_2026_client_through_input_requests_and_tasks_update() -> None:
    """SEP-2663 §Task Polling and §Task Update Requests: a 2026-07-28 upstream task in
    ``input_required`` lists its ``inputRequests`` on ``tasks/get`` through the gateway; the
    2026-07-28 client answers with ``tasks/update`` to the gateway's id, which reaches the
    upstream task: it completes with the answer, having run once."""
    asked: list[str] = []

    async def elicit(params: Any) -> t.ElicitResult:
        asked.append(params.message)
        return t.ElicitResult(action="accept", content={"name": "Ada"})

    jobs = Jobs(STATELESS_VERSIONS)
    handlers = ClientHandlers(elicitation=elicit)
    async with gateway(jobs.server, LATEST_STATELESS, handlers=handlers) as (_, (client,)):
        handle = await start_task(client, "j__ask", {})
        assert text_of(await handle.result()) == "hello Ada"
    assert asked == ["Name?"]
    assert len(jobs.upstream_ids) == 1


async def test_a_handshake_era_task_asks_its_2026_client_through_input_requests() -> None:
    """A handshake-era upstream task asks by a request of its own, which a 2026-07-28 client
    has no channel for (mrtr.mdx): the gateway holds it and lists it in the task's
    ``inputRequests`` under a key of its own, with no related-task ``_meta`` (SEP-2663 §Task
    Polling: status ``input_required``); a malformed ``tasks/update`` answer is an error and
    leaves the ask waiting, an unknown key is ignored (§Task Update Requests); the answer
    reaches the upstream task, which completes with it, having run once."""

    async def unused(params: Any) -> t.ElicitResult:
        raise AssertionError("the test answers with tasks/update itself")

    jobs = Jobs(HANDSHAKE_VERSIONS)
    handlers = ClientHandlers(elicitation=unused)  # declares elicitation
    async with gateway(jobs.server, LATEST_STATELESS, handlers=handlers) as (_, (client,)):
        handle = await start_task(client, "j__ask", {})
        state = await handle.status(answer=False)
        with anyio.fail_after(10):
            while state.status != "input_required":  # polled, as a client does
                await anyio.sleep(0.02)
                state = await handle.status(answer=False)
        ((key, asked),) = state.raw["inputRequests"].items()
        assert asked["method"] == "elicitation/create"
        assert asked["params"]["message"] == "Name?"
        assert RELATED_TASK not in (asked["params"].get("_meta") or {})
        with pytest.raises(McpError) as caught:
            await handle.update({key: {"action": "maybe"}})
        assert caught.value.code == INVALID_PARAMS and key in caught.value.message
        assert (await handle.status(answer=False)).raw["inputRequests"] == {key: asked}
        await handle.update({"elsewhere": {"action": "decline"}})  # not outstanding: ignored
        await handle.update({key: {"action": "accept", "content": {"name": "Ada"}}})
        assert text_of(await handle.result()) == "hello Ada"
    assert len(jobs.upstream_ids) == 1


async def test_the_2026_client_answers_a_handshake_era_task_with_its_handlers() -> None:
    """The same through mcpbind's task handle, as an application uses it: the client's
    elicitation handler answers the held ask once, and the task completes."""
    asked: list[str] = []

    async def elicit(params: Any) -> t.ElicitResult:
        asked.append(params.message)
        return t.ElicitResult(action="accept", content={"name": "Ada"})

    jobs = Jobs(HANDSHAKE_VERSIONS)
    handlers = ClientHandlers(elicitation=elicit)
    async with gateway(jobs.server, LATEST_STATELESS, handlers=handlers) as (_, (client,)):
        handle = await start_task(client, "j__ask", {})
        assert text_of(await handle.result()) == "hello Ada"
    assert asked == ["Name?"]
    assert len(jobs.upstream_ids) == 1


async def test_a_handshake_era_task_cannot_ask_a_2026_client_without_the_capability() -> None:
    """A 2026-07-28 client that declared no elicitation is not asked: the upstream's ask is
    refused, one line, and the tool's error result (the task ``failed`` on 2025-11-25,
    tasks.mdx §Task Status) is ``completed`` with that result for the 2026-07-28 caller,
    where ``failed`` is a JSON-RPC error only (SEP-2663 §Task Execution Errors); it names no
    upstream id, and the task was created once (an ask during the creating ``tools/call``
    would have been an input round whose retry starts it again)."""
    jobs = Jobs(HANDSHAKE_VERSIONS)
    async with gateway(jobs.server, LATEST_STATELESS) as (_, (client,)):
        handle = await start_task(client, "j__ask", {})
        result = await handle.result()
        state = await handle.status()
    assert result.is_error is True
    message = text_of(result)
    assert "did not declare the elicitation capability" in message and "\n" not in message
    assert state.status == "completed" and state.raw["result"]["isError"] is True
    assert len(jobs.upstream_ids) == 1
    assert jobs.upstream_ids[0] not in json.dumps(state.raw)


@pytest.mark.parametrize("upstream_era", list(UPSTREAM_ERAS))
@pytest.mark.parametrize("version", ERAS)
async def test_a_tool_error_is_failed_on_2025_and_completed_on_2026(
    upstream_era: str, version: str
) -> None:
    """A tool's error result (``isError``), whatever the upstream's era: ``failed`` for a
    2025-11-25 caller (tasks.mdx §Task Status: "this includes cases where the tool call
    result has isError"), ``completed`` with the result inlined for a 2026-07-28 one
    (SEP-2663 §Task Execution Errors: ``failed`` is a JSON-RPC error only)."""
    jobs = Jobs(UPSTREAM_ERAS[upstream_era])
    async with gateway(jobs.server, version) as (_, (client,)):
        handle = await start_task(client, "j__breaks", {})
        result = await handle.result()
        state = await handle.status()
    assert result.is_error is True and "disk full" in text_of(result)
    if version == LATEST_STATELESS:
        assert state.status == "completed"
        assert state.raw["result"]["isError"] is True
    else:
        assert state.status == "failed"


async def test_a_task_only_tool_without_a_task_request_still_runs_to_the_end() -> None:
    """§Tool-Level Negotiation: the gateway lists a ``required`` tool ``optional`` and runs
    it to the end as a task upstream for a caller that asks for no task."""
    jobs = Jobs(HANDSHAKE_VERSIONS)
    async with gateway(jobs.server, LATEST_HANDSHAKE) as (_, (client,)):
        with anyio.move_on_after(0.3):
            await client.call("j__forever", {})
        await wait_for(lambda: jobs.cancelled == ["forever"])


async def test_a_task_request_for_a_tool_without_tasks_is_method_not_found() -> None:
    """§Tool-Level Negotiation: ``task`` on a tool that does not support it is -32601."""
    jobs = Jobs(HANDSHAKE_VERSIONS)
    async with gateway(jobs.server, LATEST_HANDSHAKE) as (_, (client,)):
        with pytest.raises(McpError) as caught:
            await start_task(client, "j__plain", {"text": "x"})
        assert caught.value.code == METHOD_NOT_FOUND
        assert "j__plain" in caught.value.message


async def test_upstream_status_notifications_reach_the_creating_session() -> None:
    """§Task Status Notification: the upstream's ``notifications/tasks/status`` arrive at
    the session that made the task, under the gateway's id; another session hears none."""
    heard: dict[str, list[dict[str, Any]]] = {"owner": [], "other": []}

    def listener(who: str) -> ClientHandlers:
        async def notification(method: str, params: Any) -> None:
            if method == "notifications/tasks/status":
                heard[who].append(msgspec.to_builtins(params))

        return ClientHandlers(notification=notification)

    jobs = Jobs(HANDSHAKE_VERSIONS)
    host = Host({"j": jobs.server}, check=allow)
    server = host.as_server()
    async with (
        host,
        Client(server, protocol_version=LATEST_HANDSHAKE, handlers=listener("owner")) as owner,
        Client(server, protocol_version=LATEST_HANDSHAKE, handlers=listener("other")) as other,
    ):
        assert other.peer_has_capability(("tasks",))
        handle = await start_task(owner, "j__build", {"steps": 2})
        await handle.result()
        down = task_id(handle)
        await wait_for(lambda: any(n["status"] == "completed" for n in heard["owner"]))
        assert {n["taskId"] for n in heard["owner"]} == {down}
        assert heard["owner"][-1]["status"] == "completed"
        assert {"ttl", "createdAt", "lastUpdatedAt"} <= set(heard["owner"][-1])  # a 2025 Task
        assert heard["other"] == []


@pytest.mark.parametrize("version", ERAS)
async def test_a_2026_upstream_tasks_status_reaches_its_caller_without_a_poll(
    version: str,
) -> None:
    """SEP-2663 §Task Status Notifications, upstream: the gateway listens for the ``taskIds``
    of each task it creates on a 2026-07-28 server, so the task's end reaches its caller as
    soon as it happens, with no ``tasks/get`` upstream after the creation: a 2026-07-28 caller
    listening for the gateway's id hears ``notifications/tasks`` with the result inlined; a
    2025-11-25 caller's session hears ``notifications/tasks/status`` (tasks.mdx §Task Status
    Notification). Neither names the upstream id."""
    heard: list[tuple[str, dict[str, Any]]] = []
    polled: list[str] = []

    async def notification(method: str, params: Any) -> None:
        if method.startswith("notifications/tasks"):
            heard.append(
                (method, params if isinstance(params, dict) else msgspec.to_builtins(params))
            )

    jobs = Jobs(STATELESS_VERSIONS)

    async def count_polls(call: Any, call_next: Any) -> Any:
        if call.method == "tasks/get":
            polled.append(call.method)
        return await call_next(call)

    jobs.server.add_middleware(count_polls)
    handlers = ClientHandlers(notification=notification)
    async with gateway(jobs.server, version, handlers=handlers) as (_, (client,)):
        handle = await start_task(client, "j__held", {})
        down = task_id(handle)
        if version == LATEST_STATELESS:
            await client.listen(task_ids=[down])
        polls = len(polled)
        jobs.release.set()
        await wait_for(lambda: any(p.get("status") == "completed" for _, p in heard))
        assert len(polled) == polls  # nothing polled the upstream meanwhile
    (method, params), *_ = [(m, p) for m, p in heard if p.get("status") == "completed"]
    assert params["taskId"] == down
    assert jobs.upstream_ids[0] not in json.dumps(params)
    if version == LATEST_STATELESS:
        assert method == "notifications/tasks"
        assert params["result"]["content"][0]["text"] == "released"
    else:
        assert method == "notifications/tasks/status"


async def test_a_listen_stream_hears_the_status_of_its_task_under_the_gateway_id(
    tmp_path: Path,
) -> None:
    """SEP-2663 §Task Status Notifications, through ``mcpbind host --serve`` over stdio with
    raw 2026-07-28 messages: ``taskIds`` on ``subscriptions/listen`` are agreed (-32021
    without the extension); cancelling the task upstream (a handshake-era task server,
    tests/tasks/task_app.py) arrives as one ``notifications/tasks`` under the gateway's id,
    tagged with the subscription id."""
    jobs = {
        "command": sys.executable,
        "args": [TASK_APP, "stdio"],
        "approval": "allow",
        "protocolVersion": LATEST_HANDSHAKE,
    }
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"jobs": jobs}}))
    caps: dict[str, Any] = {"extensions": {EXTENSION: {}}}
    meta = {
        "io.modelcontextprotocol/protocolVersion": LATEST_STATELESS,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    }
    command = ["-m", "mcpbind.cli", "host", "-c", str(config), "--serve"]
    path = os.environ.get("PYTHONPATH")  # this checkout's code (unset where it is installed)
    env = {"PYTHONPATH": path} if path else None
    async with StdioClientTransport.spawn(sys.executable, command, env=env) as wire:

        async def request(rid: int, method: str, params: dict[str, Any], m: Any = meta) -> None:
            message = {"jsonrpc": "2.0", "id": rid, "method": method}
            await wire.send(json.dumps({**message, "params": {**params, "_meta": m}}).encode())

        async def take() -> dict[str, Any]:
            with anyio.fail_after(20):
                message: dict[str, Any] = json.loads(await wire.receive())
                return message

        await request(1, "tools/call", {"name": "jobs__slow", "arguments": {"seconds": 60}})
        created = await take()
        assert created["result"]["resultType"] == "task"
        task_id = created["result"]["taskId"]
        bare = {**meta, "io.modelcontextprotocol/clientCapabilities": {}}
        await request(2, "subscriptions/listen", {"notifications": {"taskIds": [task_id]}}, bare)
        refused = await take()
        assert refused["id"] == 2 and refused["error"]["code"] == -32021
        await request(3, "subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
        ack = await take()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"taskIds": [task_id]}
        await request(4, "tasks/cancel", {"taskId": task_id})
        got = [await take(), await take()]
        notes = [m for m in got if m.get("method") == "notifications/tasks"]
        assert len(notes) == 1 and notes[0]["params"]["taskId"] == task_id
        assert notes[0]["params"]["status"] == "cancelled"
        assert notes[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 3
        assert [m["id"] for m in got if "id" in m] == [4]
