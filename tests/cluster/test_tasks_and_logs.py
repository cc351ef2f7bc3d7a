"""Task status and log messages across workers.

2026-07-28 (extensions SEP-2663, Task Status Notifications; basic/patterns/subscriptions.mdx):
a task runs on one worker, a client listens for it (``taskIds``) on another; the status change
travels on the notification bus and the listening worker renders ``notifications/tasks`` from
the shared ``RedisTaskStore``. Handshake era (2025-11-25 basic/utilities/tasks.mdx, Task
Status Notification): the status goes to the session that created the task, whichever worker
its requests reach. Log messages (server/utilities/logging.mdx) belong to a request (2026:
request-scoped, never on a listen stream) or to a session (2025: ``logging/setLevel``): they
reach the client whichever workers its requests land on."""

from __future__ import annotations

import itertools
import uuid
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest

from mcpbind import types as t
from mcpbind.client import start_task

from .clients import Tags, tagged_client
from .processes import haproxy, workers
from .wire import VERSION, iter_events

EXTENSION = "io.modelcontextprotocol/tasks"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "cluster-test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}},
}
HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": VERSION}


def _options(redis_url: str, **more: str) -> dict[str, str]:
    return {"redis_tasks": redis_url, "prefix": uuid.uuid4().hex, **more}


def _message(rid: int, method: str, params: dict[str, Any]) -> Any:
    """A 2026-07-28 request with the tasks extension declared: its body and headers."""
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": META}}
    headers = {**HEADERS, "mcp-method": method}
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    elif "taskId" in params:
        headers["mcp-name"] = params["taskId"]
    return body, headers


def test_a_task_status_reaches_a_listener_on_another_worker(redis_url: str) -> None:
    with workers(2, options=_options(redis_url, redis_bus=redis_url)) as (w0, w1):
        runs, listens = f"http://127.0.0.1:{w0}/mcp", f"http://127.0.0.1:{w1}/mcp"
        with httpx.Client(timeout=10) as http:
            nap = {"name": "nap", "arguments": {"seconds": 1.0}}
            body, headers = _message(1, "tools/call", nap)
            created = http.post(runs, json=body, headers=headers).json()["result"]
            assert created["resultType"] == "task" and created["status"] == "working"
            task_id = created["taskId"]
            listen = {"notifications": {"taskIds": [task_id]}}
            body, headers = _message(2, "subscriptions/listen", listen)
            with http.stream("POST", listens, json=body, headers=headers) as stream:
                assert stream.status_code == 200
                notes = []
                for event in iter_events(stream):
                    if event.message is None:
                        continue
                    notes.append(event.message)
                    if event.message.get("params", {}).get("status") == "completed":
                        break
    ack, *changes = notes
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}
    assert {m["method"] for m in changes} == {"notifications/tasks"}
    assert changes[-1]["params"]["taskId"] == task_id
    assert changes[-1]["params"]["result"]["content"][0]["text"] == "napped 1s"
    assert all(m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 2 for m in changes)


def test_without_the_bus_the_other_worker_never_hears(redis_url: str) -> None:
    """The counter-test: the same listener on a worker without the bus gets its
    acknowledgment and nothing more while the task completes on the other worker."""
    with workers(2, options=_options(redis_url)) as (w0, w1):
        runs, listens = f"http://127.0.0.1:{w0}/mcp", f"http://127.0.0.1:{w1}/mcp"
        with httpx.Client(timeout=httpx.Timeout(10, read=2.0)) as http:
            nap = {"name": "nap", "arguments": {"seconds": 0.3}}
            body, headers = _message(1, "tools/call", nap)
            task_id = http.post(runs, json=body, headers=headers).json()["result"]["taskId"]
            listen = {"notifications": {"taskIds": [task_id]}}
            body, headers = _message(2, "subscriptions/listen", listen)
            notes = []
            with (
                pytest.raises(httpx.ReadTimeout),
                http.stream("POST", listens, json=body, headers=headers) as stream,
            ):
                notes.extend(e.message for e in iter_events(stream) if e.message)
            body, headers = _message(3, "tasks/get", {"taskId": task_id})
            done = http.post(runs, json=body, headers=headers).json()
    assert [m["method"] for m in notes] == ["notifications/subscriptions/acknowledged"]
    assert done["result"]["status"] == "completed", done


@pytest.mark.anyio
async def test_handshake_task_status_reaches_its_session_through_any_worker(
    redis_url: str, tmp_path: Path
) -> None:
    options = _options(redis_url, redis_sessions=redis_url, redis_events=redis_url)
    tags = Tags()
    statuses: list[str] = []
    completed = anyio.Event()

    async def note(method: str, params: Any) -> None:
        if method == "notifications/tasks/status":
            statuses.append(params["status"] if isinstance(params, dict) else params.status)
            if statuses[-1] == "completed":
                completed.set()

    with workers(2, options=options) as ports, haproxy(ports, tmp_path) as url:
        async with tagged_client(url, "2025-11-25", tags, notification=note) as client:
            with anyio.fail_after(30):
                await anyio.sleep(0.3)  # the GET stream, where the statuses come
                handle = await start_task(client, "nap", {"seconds": 0.5})
                result = await handle.result()
                await completed.wait()
    assert isinstance(result.content[0], t.TextContent)
    assert result.content[0].text == "napped 0.5s"
    assert statuses[-1] == "completed"
    assert all(a[1] != b[1] for a, b in itertools.pairwise(tags.sent)), tags.sent


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_log_messages_reach_the_client_whichever_worker_runs_the_call(
    version: str, redis_url: str, tmp_path: Path
) -> None:
    """2025: ``logging/setLevel`` reaches one worker, the call another, both served by the
    session's owner. 2026: the level travels with the call (``_meta``); its log messages come
    on that call's own stream, whichever worker it lands on."""
    options = {"redis_sessions": redis_url, "redis_events": redis_url, "redis_bus": redis_url}
    tags = Tags()
    logged: list[tuple[str, Any]] = []

    async def on_log(params: t.LoggingMessageNotificationParams) -> None:
        logged.append((params.level, params.data))

    with workers(2, options=options) as ports, haproxy(ports, tmp_path) as url:
        level = None if version == "2025-11-25" else "info"  # 2026: on every request
        async with tagged_client(url, version, tags, level, logging=on_log) as client:
            with anyio.fail_after(30):
                if level is None:
                    await anyio.sleep(0.3)  # its GET stream opens first
                    await client.request("logging/setLevel", {"level": "info"})
                answers = [await client.call("chatty") for _ in range(3)]
    assert all(isinstance(a.content[0], t.TextContent) for a in answers)
    assert [level for level, _ in logged] == ["info", "warning"] * 3
    assert logged[0][1] == "starting" and isinstance(logged[1][1], dict)
    workers_seen = [worker for _, worker in tags.sent]
    assert set(workers_seen) == {"w0", "w1"}
    assert all(a != b for a, b in itertools.pairwise(workers_seen)), tags.sent
    calls_on = {w for (_, w), rpc in zip(tags.sent, tags.rpc, strict=True) if rpc == "tools/call"}
    assert calls_on == {"w0", "w1"}, (tags.sent, tags.rpc)
    ran_on = {data["worker"] for level, data in logged if level == "warning"}  # process ids
    # 2025: every call ran on the session's owner; 2026: each where it landed
    assert len(ran_on) == (1 if version == "2025-11-25" else 2)
