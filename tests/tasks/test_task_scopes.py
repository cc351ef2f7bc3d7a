"""Who owns a task (issue 28): the scope a principal, a session or an anonymous caller gets,
and the caps that must hold whatever the scope (tasks.mdx §Task Isolation and Access Control,
§Resource Management; SEP-2663 §Security Implications)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Iterator
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest

from mcpbind import Client, McpError, Server
from mcpbind import types as t
from mcpbind.client import start_task
from mcpbind.http import StreamableHTTPApp
from mcpbind.server import Principal
from mcpbind.server.principal import principal_key
from mcpbind.server.request_state import binding_for
from mcpbind.server.tasks import TaskContext, Tasks, default_scope
from tests.http.server._support import LiveServer, headers, init_body, messages, sse_events

HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"

# Two different callers whose issuer, subject and client run together into the same text
# when joined with spaces (the attack of issue 28 F16).
ALICE = Principal(subject="x y", issuer="alice")
MALLORY = Principal(subject="y", issuer="alice x")
CLIENT_SPLIT = (Principal(subject="a", client_id="b c"), Principal(subject="a b", client_id="c"))


def _ctx(principal: object, version: str = "2026-07-28") -> SimpleNamespace:
    return SimpleNamespace(principal=principal, protocol_version=version, peer=object())


def test_principals_whose_text_runs_together_get_different_task_scopes() -> None:
    for a, b in ((ALICE, MALLORY), CLIENT_SPLIT):
        assert a != b
        assert default_scope(_ctx(a)) != default_scope(_ctx(b))  # type: ignore[arg-type]
        assert default_scope(_ctx(a, "2025-11-25")) != default_scope(_ctx(b, "2025-11-25"))  # type: ignore[arg-type]


def test_principal_key_is_unambiguous_and_stable_across_refreshes() -> None:
    assert ALICE.key != MALLORY.key and str(ALICE) != str(MALLORY)
    refreshed = Principal(subject="x y", issuer="alice", scopes=frozenset({"more"}), expires_at=9)
    assert refreshed.key == ALICE.key
    # A Starlette-style identity string never meets a Principal's key.
    assert principal_key(ALICE.key) != principal_key(ALICE)


def test_request_state_binding_tells_the_two_principals_apart() -> None:
    params = {"name": "t", "arguments": {}}
    a = binding_for("tools/call", params, principal_key(ALICE))
    b = binding_for("tools/call", params, principal_key(MALLORY))
    assert a.principal != b.principal


# ---------------------------------------------------------------------- anonymous callers
def _tasks_server(**options: Any) -> tuple[Server, Tasks, threading.Event]:
    """A server whose ``build`` task runs until ``gate`` is set (from any thread: the HTTP
    tests serve from uvicorn's)."""
    server = Server("scopes-test")
    tasks = Tasks(server, poll_interval_ms=20, **options)
    gate = threading.Event()

    @server.tool(task="required")
    async def build(task: TaskContext) -> str:
        await asyncio.to_thread(gate.wait)
        return "built"

    return server, tasks, gate


async def _refused(call: Awaitable[Any]) -> McpError:
    with pytest.raises(McpError) as caught:
        await call
    return caught.value


@pytest.mark.anyio
async def test_one_anonymous_caller_cannot_use_up_the_per_caller_cap_of_all() -> None:
    """Issue 28 F7: every anonymous 2026-07-28 request shared one scope, so one caller's
    ``max_active`` long tasks refused everyone else's. Anonymous callers now share no
    per-caller cap, only ``max_active_anonymous`` (all of them together) and
    ``max_active_total``; each task is reached by its id alone."""
    server, tasks, gate = _tasks_server(max_active=2, max_active_anonymous=4, max_active_total=5)
    try:
        async with (
            Client(server, protocol_version=STATELESS, name="mallory") as mallory,
            Client(server, protocol_version=STATELESS, name="alice") as alice,
            Client(server, protocol_version=HANDSHAKE) as bob,  # a session: a scope of its own
        ):
            theirs = [await start_task(mallory, "build", {}) for _ in range(2)]
            mine = [await start_task(alice, "build", {}) for _ in range(2)]  # before: -32600
            err = await _refused(start_task(alice, "build", {}))
            assert err.code == -32600 and "unauthenticated callers (4)" in err.message
            # A caller the server can identify is not refused by the anonymous pool ...
            bobs = [await start_task(bob, "build", {})]
            # ... but by the cap on all running tasks.
            err = await _refused(start_task(bob, "build", {}))
            assert err.code == -32600 and "on this server (5)" in err.message
            assert (await mine[0].status()).status == "working"
            gate.set()
            for handle in (*theirs, *mine, *bobs):
                result = await handle.result()
                assert isinstance(result.content[0], t.TextContent)
                assert result.content[0].text == "built"
    finally:
        gate.set()  # a failed assertion must not leave the tasks waiting
        await tasks.aclose()


# ---------------------------------------------------------------------- sessionless HTTP
@pytest.fixture
def sessionless_tasks() -> Iterator[tuple[LiveServer, threading.Event]]:
    server, _, gate = _tasks_server(max_active=2, max_active_anonymous=3)
    live = LiveServer(StreamableHTTPApp(server, sessionless=True)).start()
    try:
        yield live, gate
    finally:
        gate.set()
        live.stop()


def _post(live: LiveServer, rid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    with httpx2.Client(timeout=10) as client:
        r = client.post(live.url, json=body, headers=headers(version=HANDSHAKE))
    assert r.status_code == 200 and "mcp-session-id" not in r.headers
    (reply,) = messages(list(sse_events(iter(r.text.splitlines()))))
    return reply


def test_sessionless_tasks_are_capped_across_posts_and_reached_by_id(
    sessionless_tasks: tuple[LiveServer, threading.Event],
) -> None:
    """Issue 28 F8: each sessionless POST got a fresh scope (``request:<random>``), so the
    per-caller cap never held (2,000 running tasks past ``max_active`` 100) and the creator
    could neither get nor list its tasks from its next POST. Now the caller is anonymous:
    the cap holds across POSTs, ``tasks/get`` works by id from any POST, and ``tasks/list``
    is not offered (tasks.mdx §Task Isolation: a receiver that cannot identify requestors
    does not declare ``tasks.list``)."""
    live, gate = sessionless_tasks
    caps = _post(live, 1, "initialize", init_body(HANDSHAKE)["params"])["result"]["capabilities"]
    assert "list" not in caps["tasks"] and "cancel" in caps["tasks"]
    call = {"name": "build", "arguments": {}, "task": {"ttl": 60_000}}
    ids = [_post(live, 10 + n, "tools/call", call)["result"]["task"]["taskId"] for n in range(3)]
    refused = _post(live, 20, "tools/call", call)["error"]
    assert refused["code"] == -32600 and "(3)" in refused["message"]  # before: accepted
    got = _post(live, 21, "tasks/get", {"taskId": ids[0]})
    assert got["result"]["taskId"] == ids[0] and got["result"]["status"] == "working"
    listed = _post(live, 22, "tasks/list", {})["error"]
    assert listed["code"] == -32601
    assert _post(live, 23, "tasks/cancel", {"taskId": ids[1]})["result"]["status"] == "cancelled"
    gate.set()
    for n, task_id in enumerate((ids[0], ids[2])):
        result = _post(live, 30 + n, "tasks/result", {"taskId": task_id})["result"]
        assert result["content"][0]["text"] == "built"


# ---------------------------------------------------------------------- status notifications
@pytest.mark.anyio
async def test_task_notifications_go_only_to_a_listener_that_may_read_the_task() -> None:
    """Sibling of F16: ``subscriptions/listen`` agreed to any task id, so a listener that
    knew another principal's task id received its DetailedTask (result included). A
    notification now goes only to a listener ``tasks/get`` would answer."""
    _, tasks, _ = _tasks_server()
    alices = await tasks.manager.create(
        f"principal:{principal_key(ALICE)}", "tools/call", STATELESS
    )
    anonymous = await tasks.manager.create("", "tools/call", STATELESS)
    try:
        for record, allowed, refused in (
            (alices, ALICE, (MALLORY, None)),
            (anonymous, None, (ALICE,)),
        ):
            agreed = {"taskIds": [record.task_id]}
            note = await tasks.notification("task", record.task_id, agreed, allowed)
            assert note is not None and note[1]["taskId"] == record.task_id
            for other in refused:
                assert await tasks.notification("task", record.task_id, agreed, other) is None
    finally:
        await tasks.aclose()
