"""The client as a task receiver, 2025-11-25 basic/utilities/tasks.mdx (the 2026-07-28 tasks
extension drops client-side tasks): a server augments ``sampling/createMessage`` or
``elicitation/create`` with a task, the client answers ``CreateTaskResult`` at once, runs its
handler in the background and serves ``tasks/*``; the server side is ``ctx.sample(...,
task=True)`` / ``ctx.elicit(..., task=True)``. In memory, and over stdio with a server process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from mcpbind import Client, ClientHandlers, Context, McpError, Server
from mcpbind import types as t
from mcpbind.protocol import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    SessionOptions,
    custom_method,
)
from mcpbind.server.session import ServerSession
from mcpbind.transports import memory_pair
from mcpbind.transports.stdio import StdioClientTransport
from tests.tasks.forms import ask_llm, ask_name, llm_text

pytestmark = pytest.mark.anyio

HANDSHAKE = "2025-11-25"
APP = str(Path(__file__).with_name("task_app.py"))
SAMPLING_TASKS = ("tasks", "requests", "sampling", "createMessage")
ELICITATION_TASKS = ("tasks", "requests", "elicitation", "create")


def _server() -> Server:
    server = Server("asks-as-task")

    @server.tool()
    async def summarize(text: str, ctx: Context) -> str:
        return llm_text(await ctx.sample(ask_llm(text), task=True))

    @server.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit(ask_name(), task=True)
        return f"{answer.action} {(answer.content or {}).get('name')}"

    @server.tool()
    async def impatient(ctx: Context) -> str:
        return llm_text(await ctx.sample(ask_llm("slow"), task=True, timeout=0.5))

    @server.tool()
    async def send(method: str, params: dict[str, Any], ctx: Context) -> str:
        """Sends ``method`` to the client as is; its result or error code, as JSON."""
        try:
            value = await ctx.peer.send_request(custom_method(method, "server_to_client"), params)
        except McpError as exc:
            return json.dumps({"error": exc.code, "message": exc.message})
        return json.dumps({"result": value})

    @server.tool()
    async def declared(ctx: Context) -> str:
        return json.dumps([ctx.client_supports(*SAMPLING_TASKS), ctx.client_supports("tasks")])

    return server


class _Llm:
    """A sampling handler: answers ``echo: <prompt>``, or waits for ``release`` on ``slow``."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.calls = 0

    async def __call__(self, params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        self.calls += 1
        prompt = params.messages[0].content
        text = prompt.text if isinstance(prompt, t.TextContent) else ""
        if text == "slow":
            self.started.set()
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        return t.CreateMessageResult(
            content=t.TextContent(text=f"echo: {text}"), model="m", role="assistant"
        )


async def _elicit(params: Any) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={"name": "Ada"})


def _handlers(llm: _Llm, *, tasks: bool = True, elicitation: bool = True) -> ClientHandlers:
    return ClientHandlers(sampling=llm, elicitation=_elicit if elicitation else None, tasks=tasks)


async def _text(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> str:
    result = await client.call_tool(t.CallToolRequestParams(name=tool, arguments=arguments or {}))
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


async def _send(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(
        await _text(client, "send", {"method": method, "params": params})
    )
    return answer


@contextlib.asynccontextmanager
async def _lenient(server: Server, handlers: ClientHandlers) -> AsyncIterator[Client]:
    """A client whose server does not check capabilities before sending: what a client must
    do with requests it did not declare."""
    client_end, server_end = memory_pair()
    session = ServerSession(server, server_end, options=SessionOptions(enforce_capabilities=False))
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        async with Client(client_end, protocol_version=HANDSHAKE, handlers=handlers) as client:
            yield client
        tg.cancel_scope.cancel()


# ---------------------------------------------------------------------- §Client Capabilities
async def test_client_capabilities_declare_tasks_for_its_handlers_only_when_asked() -> None:
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=_handlers(_Llm())) as c:
        assert json.loads(await _text(c, "declared")) == [True, True]
        caps = c._conn().core.local_capabilities
        assert caps is not None and caps["tasks"] == {
            "list": {},
            "cancel": {},
            "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
        }
    plain = _handlers(_Llm(), tasks=False)
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=plain) as c:
        assert json.loads(await _text(c, "declared")) == [False, False]
        assert c.task_receiver is None
    only_sampling = _handlers(_Llm(), elicitation=False)
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=only_sampling) as c:
        caps = c._conn().core.local_capabilities
        assert caps is not None and caps["tasks"]["requests"] == {"sampling": {"createMessage": {}}}


async def test_no_tasks_capability_on_the_2026_era() -> None:
    """The 2026-07-28 tasks extension has no client-side tasks: nothing is declared."""
    async with Client(_server(), protocol_version="2026-07-28", handlers=_handlers(_Llm())) as c:
        assert c.task_receiver is None
        assert "tasks" not in (c._conn().core.local_capabilities or {})


# ---------------------------------------------------------------------- §Task-Augmented Sampling Request
async def test_task_augmented_sampling_runs_on_the_client_and_the_server_polls_it() -> None:
    llm = _Llm()
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=_handlers(llm)) as client:
        assert await _text(client, "summarize", {"text": "tides"}) == "echo: tides"
        assert client.task_receiver is not None
        records, _ = await client.task_receiver.manager.list("", 0, 10)
        assert [r.status for r in records] == ["completed"]
        assert llm.calls == 1


async def test_task_augmented_elicitation_runs_on_the_client() -> None:
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=_handlers(_Llm())) as client:
        assert await _text(client, "greet") == "accept Ada"


async def test_create_task_result_at_once_then_get_list_result() -> None:
    """§Creating Tasks (CreateTaskResult at once, ``ttl`` honoured), §Getting Tasks,
    §Listing Tasks, §Retrieving Task Results (blocks, then the result with related-task)."""
    llm = _Llm()
    params = {**msgspec.to_builtins(ask_llm("slow")), "task": {"ttl": 60_000}}
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=_handlers(llm)) as client:
        created = (await _send(client, "sampling/createMessage", params))["result"]["task"]
        assert created["status"] == "working" and created["ttl"] == 60_000
        task_id = created["taskId"]
        with anyio.fail_after(10):
            await llm.started.wait()
        got = (await _send(client, "tasks/get", {"taskId": task_id}))["result"]
        assert got["taskId"] == task_id and got["status"] == "working"
        listed = (await _send(client, "tasks/list", {}))["result"]["tasks"]
        assert [task["taskId"] for task in listed] == [task_id]
        async with anyio.create_task_group() as tg:
            fetched: list[dict[str, Any]] = []

            async def fetch() -> None:
                fetched.append(await _send(client, "tasks/result", {"taskId": task_id}))

            tg.start_soon(fetch)
            await anyio.sleep(0.05)
            assert fetched == []  # still blocked: the task is working
            llm.release.set()
        result = fetched[0]["result"]
        assert result["content"] == {"type": "text", "text": "echo: slow"}
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
        done = (await _send(client, "tasks/get", {"taskId": task_id}))["result"]
        assert done["status"] == "completed"


async def test_running_client_tasks_are_capped() -> None:
    """Issue 28 (sibling of F7/F8): a server could start any number of task-augmented
    sampling requests on the client (each is answered at once, so no in-flight cap held).
    Past ``max_active`` running the client answers -32600."""
    llm = _Llm()
    params = {**msgspec.to_builtins(ask_llm("slow")), "task": {}}
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=_handlers(llm)) as client:
        assert client.task_receiver is not None
        client.task_receiver.max_active = 2
        try:
            for _ in range(2):
                assert "task" in (await _send(client, "sampling/createMessage", params))["result"]
            refused = await _send(client, "sampling/createMessage", params)
            assert refused["error"] == -32600 and "Too many running tasks (2)" in refused["message"]
        finally:
            llm.release.set()


# ---------------------------------------------------------------------- §Task Cancellation
async def test_cancel_stops_the_handler_and_a_second_cancel_is_invalid_params() -> None:
    llm = _Llm()
    params = {**msgspec.to_builtins(ask_llm("slow")), "task": {}}
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=_handlers(llm)) as client:
        task_id = (await _send(client, "sampling/createMessage", params))["result"]["task"][
            "taskId"
        ]
        with anyio.fail_after(10):
            await llm.started.wait()
        cancelled = (await _send(client, "tasks/cancel", {"taskId": task_id}))["result"]
        assert cancelled["status"] == "cancelled"
        with anyio.fail_after(10):
            await llm.cancelled.wait()
        again = await _send(client, "tasks/cancel", {"taskId": task_id})
        assert again["error"] == INVALID_PARAMS and "terminal" in again["message"]


async def test_a_server_side_timeout_cancels_the_client_task() -> None:
    llm = _Llm()
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=_handlers(llm)) as client:
        with pytest.raises(McpError) as info:
            await client.call_tool(t.CallToolRequestParams(name="impatient", arguments={}))
        assert info.value.code == REQUEST_TIMEOUT and "no result in time" in info.value.message
        with anyio.fail_after(10):
            await llm.cancelled.wait()
        assert client.task_receiver is not None
        records, _ = await client.task_receiver.manager.list("", 0, 10)
        assert [r.status for r in records] == ["cancelled"]


# ---------------------------------------------------------------------- §Protocol Errors
async def test_unknown_task_and_bad_cursor_are_invalid_params() -> None:
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=_handlers(_Llm())) as client:
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            answer = await _send(client, method, {"taskId": "no-such-task"})
            assert answer["error"] == INVALID_PARAMS, method
        bad = await _send(client, "tasks/list", {"cursor": "not-a-cursor"})
        assert bad["error"] == INVALID_PARAMS


# ---------------------------------------------------------------------- §Capability Negotiation
async def test_a_server_does_not_task_augment_toward_a_client_that_did_not_declare() -> None:
    """Requestors only augment what the receiver declared: nothing is sent, the tool fails."""
    llm = _Llm()
    plain = _handlers(llm, tasks=False)
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=plain) as client:
        result = await client.call_tool(
            t.CallToolRequestParams(name="summarize", arguments={"text": "x"})
        )
        assert result.is_error is True
        assert llm.calls == 0
    no_elicitation = _handlers(_Llm(), elicitation=False)
    async with Client(_server(), protocol_version=HANDSHAKE, handlers=no_elicitation) as client:
        result = await client.call_tool(t.CallToolRequestParams(name="greet", arguments={}))
        assert result.is_error is True


async def test_an_undeclared_client_processes_the_request_normally() -> None:
    """§Task Support and Handling: a receiver that did not declare tasks for a request type
    processes it normally, ignoring ``task``; its ``tasks/*`` are -32601 (Method not found)."""
    llm = _Llm()
    async with _lenient(_server(), _handlers(llm, tasks=False)) as client:
        params = {**msgspec.to_builtins(ask_llm("hi")), "task": {"ttl": 1000}}
        answer = (await _send(client, "sampling/createMessage", params))["result"]
        assert answer["content"] == {"type": "text", "text": "echo: hi"} and "task" not in answer
        for method in ("tasks/get", "tasks/result", "tasks/cancel", "tasks/list"):
            refused = await _send(client, method, {"taskId": "x"})
            assert refused["error"] == METHOD_NOT_FOUND, method


# ---------------------------------------------------------------------- over stdio
async def test_client_side_task_with_a_server_process_over_stdio() -> None:
    llm = _Llm()
    spawn = StdioClientTransport.spawn(sys.executable, [APP, "stdio"])
    async with Client(spawn, protocol_version=HANDSHAKE, handlers=_handlers(llm)) as client:
        with anyio.fail_after(30):
            assert await _text(client, "delegate", {"prompt": "over stdio"}) == "echo: over stdio"
        assert client.task_receiver is not None
        records, _ = await client.task_receiver.manager.list("", 0, 10)
        assert [r.status for r in records] == ["completed"]
