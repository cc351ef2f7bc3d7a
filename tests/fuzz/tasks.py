"""Fuzz target: the task methods (``tasks/get``, ``tasks/result``, ``tasks/list``,
``tasks/cancel``, task-augmented ``tools/call``) of both eras, through the ASGI app, over the
memory and the SQLite store.

Per store, one server with two handshake-era sessions, A and B, each of which created a task
at start (and one 2026-07-28 task, S). An input (a JSON-RPC body; ``{task-a}``, ``{task-b}``,
``{task-s}`` are replaced by those task ids) is POSTed on session A and as a 2026-07-28
request. Invariants: nothing raises; no 5xx but 503; every JSON body is JSON-RPC 2.0 and a
well-formed request is answered with its id; a task is never visible from another scope: no
answer on A holds B's or S's secret, no 2026-07-28 answer holds A's or B's, and A's
``tasks/list`` never names B's or S's task.
"""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mcpbind import Server
from mcpbind.http import StreamableHTTPApp
from mcpbind.http.client._peek import peek, stateless_headers
from mcpbind.server.tasks import TaskContext, Tasks
from mcpbind.tasks import MemoryTaskStore, SqliteTaskStore, TaskStore

from . import asgi
from .checks import Finding, check_message, request_ids

__all__ = ["TasksTarget"]

HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"
_DEFAULTS = [
    ("host", "127.0.0.1:8000"),
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
]
_META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


def _server(store: TaskStore) -> tuple[Server, Tasks]:
    server = Server("fuzz-tasks", version="1.0.0")
    tasks = Tasks(server, store, poll_interval_ms=10)

    @server.tool(task="optional")
    async def vault(key: str, task: TaskContext) -> str:
        await task.status(f"opening {len(key)}")
        return f"vault:{key}"

    @server.tool(task="required")
    async def fail(task: TaskContext) -> str:
        raise ValueError("failed on purpose")

    @server.tool(task="forbidden")
    def plain(text: str) -> str:
        return text

    return server, tasks


class _Store:
    """One store's server, its sessions A and B, and the tasks created at start."""

    def __init__(self, target: TasksTarget, store: TaskStore) -> None:
        server, self.tasks = _server(store)
        self.app = StreamableHTTPApp(server, json_response=True)
        run = target.run
        self.a = run(target.open_session(self.app))
        self.b = run(target.open_session(self.app))
        self.secrets = {name: secrets.token_hex(12) for name in ("a", "b", "s")}
        self.ids = {
            "a": run(target.create(self.app, self.a, self.secrets["a"])),
            "b": run(target.create(self.app, self.b, self.secrets["b"])),
            "s": run(target.create(self.app, None, self.secrets["s"])),
        }


class TasksTarget:
    def __init__(self, run: Any) -> None:
        self.run = run
        self.dir = tempfile.mkdtemp(prefix="mcpbind-fuzz-tasks-")
        self.stores = [
            _Store(self, MemoryTaskStore()),
            _Store(self, SqliteTaskStore(Path(self.dir) / "tasks.db")),
        ]

    def close(self) -> None:
        for one in self.stores:
            self.run(one.app.aclose())
            self.run(one.tasks.aclose())  # its running tasks, then the store
        shutil.rmtree(self.dir, ignore_errors=True)

    def __call__(self, data: bytes) -> None:
        for one in self.stores:
            body = data
            for name, task_id in one.ids.items():
                body = body.replace(b"{task-%s}" % name.encode(), task_id.encode())
            self.run(self._one(one, body))

    async def _one(self, one: _Store, body: bytes) -> None:
        _, on_a = await self.post(one.app, one.a, body, "tasks session A")
        self._leak(on_a, one, ("b", "s"), "session A")
        _, stateless = await self.post(one.app, None, body, "tasks 2026-07-28")
        self._leak(stateless, one, ("a", "b"), "2026-07-28")
        listing = b'{"jsonrpc":"2.0","id":"list","method":"tasks/list","params":{}}'
        _, listed = await self.post(one.app, one.a, listing, "tasks/list on A")
        for other in ("b", "s"):
            if one.ids[other].encode() in listed:
                raise Finding(f"tasks/list on session A names task {other}: {listed[:300]!r}")

    @staticmethod
    def _leak(body: bytes, one: _Store, others: tuple[str, ...], where: str) -> None:
        for other in others:
            if one.secrets[other].encode() in body:
                raise Finding(f"{where}: task {other}'s result is visible: {body[:300]!r}")

    # -- HTTP ---------------------------------------------------------------------------------
    async def post(
        self, app: StreamableHTTPApp, session: str | None, body: bytes, where: str
    ) -> tuple[int, bytes]:
        if session is not None:
            extra = [("mcp-session-id", session), ("mcp-protocol-version", HANDSHAKE)]
        else:
            found = stateless_headers(body, peek(body).method) or {
                "mcp-protocol-version": STATELESS
            }
            extra = list(found.items())
        reply = await asgi.call(app, asgi.Request("POST", "/", b"", [*_DEFAULTS, *extra], body))
        if reply.status >= 500 and reply.status != 503:
            raise Finding(f"{where}: HTTP {reply.status}: {reply.body[:300]!r}")
        if reply.body and reply.headers.get("content-type", "").startswith("application/json"):
            check_message(reply.body, where)
            if reply.status == 200:
                _answered(body, reply.body, where)
        return reply.status, reply.body

    async def open_session(self, app: StreamableHTTPApp) -> str:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "1"},
            },
        }
        headers = list(_DEFAULTS)
        reply = await asgi.call(
            app, asgi.Request("POST", "/", b"", headers, json.dumps(init).encode())
        )
        session = reply.headers["mcp-session-id"]
        done = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        await self.post(app, session, done, "initialized")
        return session

    async def create(self, app: StreamableHTTPApp, session: str | None, key: str) -> str:
        params: dict[str, Any] = {"name": "vault", "arguments": {"key": key}, "task": {}}
        if session is None:
            params["_meta"] = _META
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        _, body = await self.post(app, session, json.dumps(call).encode(), "create")
        result = json.loads(body).get("result", {})
        task_id = (result.get("task") or result).get("taskId")
        if not isinstance(task_id, str):
            raise RuntimeError(f"task creation failed: {body!r}")
        return task_id


def _answered(request: bytes, reply: bytes, where: str) -> None:
    """Each well-formed request in ``request`` is answered, with its id, in ``reply``."""
    value = json.loads(reply)
    got = {m.get("id") for m in (value if isinstance(value, list) else [value])}
    if None in got:
        return  # an error for the whole body
    for wanted in request_ids(request):
        if wanted not in got:
            raise Finding(f"{where}: no answer to id {wanted!r}: {reply[:300]!r}")
