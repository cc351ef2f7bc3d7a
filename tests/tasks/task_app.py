"""A task server in its own process for the durability and multi-process tests:

    python tests/tasks/task_app.py sqlite:/path/tasks.db [lease]
    python tests/tasks/task_app.py redis://127.0.0.1:6379/0 [lease] [prefix]
    python tests/tasks/task_app.py stdio        # memory store, over stdin/stdout

Serves Streamable HTTP on a free 127.0.0.1 port and prints ``PORT <n>`` first
(tests/support/live_server.spawn_server). Tools: ``quick`` (answers at once, as a task),
``slow`` (runs ``seconds``), ``ask`` (asks for a name, then answers), ``delegate`` (asks the
client's LLM as a task the client runs)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # this checkout's code, whatever is installed
sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(0, str(ROOT / "runtime"))
sys.path.insert(0, str(ROOT))

from mcpbind import Context, Server, serve_stdio  # noqa: E402
from mcpbind.http import StreamableHTTPApp  # noqa: E402
from mcpbind.server.tasks import TaskContext, Tasks  # noqa: E402
from mcpbind.tasks import RedisTaskStore, SqliteTaskStore, TaskStore  # noqa: E402
from tests.support.live_server import serve_on_free_port  # noqa: E402
from tests.tasks.forms import ask_llm, ask_name, llm_text  # noqa: E402


def build(target: str, lease: float, prefix: str) -> Server:
    store: TaskStore | None = None
    if target.startswith("sqlite:"):
        store = SqliteTaskStore(target.removeprefix("sqlite:"))
    elif target.startswith("redis:"):
        store = RedisTaskStore(target, prefix=prefix)
    server = Server("task-app")
    Tasks(server, store, poll_interval_ms=50, lease=lease)

    @server.tool(task="optional")
    async def quick(word: str, task: TaskContext) -> str:
        return f"quick {word}"

    @server.tool(task="optional")
    async def slow(seconds: float, task: TaskContext) -> str:
        await task.status("sleeping")
        await asyncio.sleep(seconds)
        return f"slept {seconds:g}s"

    @server.tool(task="optional")
    async def ask(task: TaskContext) -> str:
        answer = await task.elicit(ask_name())
        return f"hello {(answer.content or {}).get('name')}"

    @server.tool()
    async def delegate(prompt: str, ctx: Context) -> str:
        return llm_text(await ctx.sample(ask_llm(prompt), task=True))

    return server


if __name__ == "__main__":
    lease = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    prefix = sys.argv[3] if len(sys.argv) > 3 else "mcpbind:tasks"
    server = build(sys.argv[1], lease, prefix)
    if sys.argv[1] == "stdio":
        serve_stdio(server)
    else:
        serve_on_free_port(StreamableHTTPApp(server, path="/mcp"))
