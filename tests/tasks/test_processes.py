"""Tasks that outlive their server process (SQLite) and tasks shared by two processes (Redis),
over Streamable HTTP on 127.0.0.1, protocol 2026-07-28 (the tasks extension, SEP-2663 §Task
Creation: durable before acknowledged; §Task Polling: the server MAY fail a task whose work
cannot go on) and 2025-11-25 (basic/utilities/tasks.mdx §TTL and Resource Management)."""

from __future__ import annotations

import json
import os
import signal
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers
from mcpbind import types as t
from mcpbind.client import TaskHandle, start_task
from mcpbind.transports import StdioClientTransport
from tests.support.live_server import spawn_server

pytestmark = pytest.mark.anyio

APP = str(Path(__file__).with_name("task_app.py"))
STATELESS = "2026-07-28"


def _client(url: str, handlers: ClientHandlers | None = None) -> Client:
    return Client(f"{url}/mcp", protocol_version=STATELESS, handlers=handlers)


async def _until(handle: TaskHandle, status: str, seconds: float = 20) -> Any:
    with anyio.fail_after(seconds):
        while True:
            state = await handle.status()
            if state.status == status:
                return state
            await anyio.sleep(0.05)


async def test_sqlite_tasks_survive_sigkill_and_restart(tmp_path: Path) -> None:
    """A finished task's result and an interrupted task's fate are both there after a SIGKILL:
    the finished one answers its result, the interrupted one is reported ``failed`` (its work
    died with the process), neither is lost."""
    db = f"sqlite:{tmp_path / 'tasks.db'}"
    with spawn_server(APP, db, "0.5") as (process, url):
        async with _client(url) as client:
            done = await start_task(client, "quick", {"word": "kept"})
            assert (await done.result()).content == [t.TextContent(text="quick kept")]
            running = await start_task(client, "slow", {"seconds": 120})
            assert (await running.status()).status == "working"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    with spawn_server(APP, db, "0.5") as (_, url):
        async with _client(url) as client:
            again = TaskHandle(client, done.task_id)
            assert (await again.result()).content == [t.TextContent(text="quick kept")]
            lost = TaskHandle(client, running.task_id)
            state = await _until(lost, "failed")
            assert "stopped" in (state.status_message or "")
            assert state.raw["error"]["code"] == -32603


@pytest.fixture
def redis_prefix() -> str:
    return f"test:{uuid.uuid4().hex}"


async def test_redis_two_processes_cross(redis_url: str, redis_prefix: str) -> None:
    """Created through one worker, polled, answered, cancelled and read through the other."""

    async def elicit(params: Any) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"name": "Grace"})

    handlers = ClientHandlers(elicitation=elicit)
    with (
        spawn_server(APP, redis_url, "0.6", redis_prefix) as (_, url_a),
        spawn_server(APP, redis_url, "0.6", redis_prefix) as (_, url_b),
    ):
        async with _client(url_a, handlers) as a, _client(url_b, handlers) as b:
            # completed on A, result read on B
            quick = await start_task(a, "quick", {"word": "shared"})
            await _until(TaskHandle(b, quick.task_id), "completed")
            assert (await TaskHandle(b, quick.task_id).result()).content == [
                t.TextContent(text="quick shared")
            ]
            # input asked on A, answered through B (tasks/update), finished on A
            asked = await start_task(a, "ask", {})
            on_b = TaskHandle(b, asked.task_id)
            await _until(TaskHandle(a, asked.task_id), "input_required")
            assert (await on_b.result()).content == [t.TextContent(text="hello Grace")]
            # running on A, cancelled through B: A's work stops, both see cancelled
            slow = await start_task(a, "slow", {"seconds": 120})
            await _until(slow, "working")
            await TaskHandle(b, slow.task_id).cancel()
            assert (await _until(slow, "cancelled")).status == "cancelled"
            assert (await TaskHandle(b, slow.task_id).status()).status == "cancelled"


async def test_handshake_era_over_http_input_travels_on_tasks_result() -> None:
    """2025-11-25 over Streamable HTTP: the elicitation of an input_required task reaches the
    client tied to its task (§Input Required Status): on the stream of a waiting
    ``tasks/result`` if there is one, else on the session's GET stream, as here."""
    asked: list[Any] = []

    async def elicit(params: Any) -> t.ElicitResult:
        asked.append(params)
        return t.ElicitResult(action="accept", content={"name": "Barbara"})

    with spawn_server(APP, "memory") as (_, url):
        handlers = ClientHandlers(elicitation=elicit)
        async with Client(f"{url}/mcp", protocol_version="2025-11-25", handlers=handlers) as client:
            handle = await start_task(client, "ask", {})
            states = [s.status async for s in handle.updates()]
            result = await handle.result()
    assert states[-1] == "completed"
    assert result.content == [t.TextContent(text="hello Barbara")]
    assert asked and asked[0].meta["io.modelcontextprotocol/related-task"] == {
        "taskId": handle.task_id
    }


async def test_task_status_notifications_on_a_listen_stream_over_stdio() -> None:
    """SEP-2663 §Task Status Notifications: ``taskIds`` on ``subscriptions/listen``, agreed in
    the acknowledgment; each change arrives as ``notifications/tasks`` with the full
    DetailedTask, tagged with the subscription id; a client without the extension gets -32021."""
    caps: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    meta = {
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    }
    async with StdioClientTransport.spawn(sys.executable, [APP, "stdio"]) as wire:

        async def request(rid: int, method: str, params: dict[str, Any], m: Any = meta) -> None:
            message = {
                "jsonrpc": "2.0",
                "id": rid,
                "method": method,
                "params": {**params, "_meta": m},
            }
            await wire.send(json.dumps(message).encode())

        async def take() -> dict[str, Any]:
            with anyio.fail_after(10):
                message: dict[str, Any] = json.loads(await wire.receive())
                return message

        await request(1, "tools/call", {"name": "slow", "arguments": {"seconds": 60}})
        created = await take()
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
