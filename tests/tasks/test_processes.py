"""Tasks that outlive their server process (SQLite) and tasks shared by two processes (Redis),
over Streamable HTTP on 127.0.0.1, protocol 2026-07-28 (the tasks extension, SEP-2663 §Task
Creation: durable before acknowledged; §Task Polling: the server MAY fail a task whose work
cannot go on) and 2025-11-25 (basic/utilities/tasks.mdx §TTL and Resource Management)."""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers
from mcpbind import types as t
from mcpbind.tasks import TaskHandle, start_task
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
