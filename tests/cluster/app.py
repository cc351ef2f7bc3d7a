"""The server every cluster test runs on each worker, and the ASGI wrapper that tags each
response with the worker that wrote it (a test-only header, ``x-test-worker``)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from mcpbind import Context, Server
from mcpbind import types as t
from mcpbind.server.tasks import TaskContext, Tasks
from mcpbind.tasks import TaskStore

WORKER_HEADER = b"x-test-worker"


def build(name: str = "cluster-app", tasks: TaskStore | None = None) -> Server:
    """A server with a plain tool and one that asks the client a question (an input round on
    2026-07-28, an elicitation request on the handshake era). Its ``requestState`` keys come
    from ``MCPBIND_STATE_KEYS`` (the default ``StatelessOptions``). With a task ``tasks``
    store, tool ``nap`` runs as a task."""
    server = Server(name, version="1.0.0")
    if tasks is not None:
        Tasks(server, tasks, poll_interval_ms=50)

        @server.tool(task="optional")
        async def nap(seconds: float, task: TaskContext) -> str:
            """Sleep ``seconds`` (saying so in the task's status message)."""
            await task.status("napping")
            await asyncio.sleep(seconds)
            return f"napped {seconds:g}s"

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Ask the user's name, then greet them."""
        schema = t.ElicitRequestFormParamsRequestedSchema(
            type="object", properties={"name": t.StringSchema(type="string")}, required=["name"]
        )
        form = t.ElicitRequestFormParams(message="What is your name?", requested_schema=schema)
        answer = await ctx.elicit(form, key="user_name")
        content = answer.content if isinstance(answer.content, dict) else {}
        return f"Hello, {content.get('name', '?')}!"

    @server.tool()
    async def capital(ctx: Context) -> str:
        """Ask the client's model (one sampling request)."""
        message = t.SamplingMessage(role="user", content=t.TextContent(text="Capital of France?"))
        params = t.CreateMessageRequestParams(messages=[message], max_tokens=10)
        result = await ctx.sample(params, key="capital")
        return result.content.text if isinstance(result.content, t.TextContent) else "?"

    cancelled: list[int] = []

    @server.tool()
    async def count(to: int, ctx: Context) -> int:
        """Report progress 1, 2, ... ``to``, 20 ms apart."""
        try:
            for i in range(1, to + 1):
                await ctx.report_progress(i, to)
                await asyncio.sleep(0.02)
        except asyncio.CancelledError:
            cancelled.append(to)  # the client's notifications/cancelled stopped it here
            raise
        return to

    @server.tool()
    def cancellations() -> list[int]:
        """The ``to`` of each ``count`` call this worker stopped because it was cancelled."""
        return cancelled

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Log one message at each of ``info`` and ``warning`` (``notifications/message``)."""
        await ctx.info("starting")
        await ctx.warning({"worker": os.getpid()})
        return "done"

    @server.resource("mem://note")
    def note() -> str:
        """A resource clients subscribe to."""
        return "a note"

    @server.tool()
    def touch(uri: str) -> str:
        """Announce that resource ``uri`` changed (``resources/updated``)."""
        server.resource_updated(uri)
        return uri

    @server.tool()
    def flip() -> bool:
        """Add the tool ``extra``, or remove it (``tools/list_changed``); whether it is there."""
        if "extra" in server.tools:
            server.remove_tool("extra")
            return False

        def extra() -> str:
            """A tool that comes and goes."""
            return "extra"

        server.tool()(extra)
        return True

    return server


class Tagged:
    """``app`` with ``x-test-worker: TAG`` on every response it starts."""

    def __init__(self, app: Any, tag: str) -> None:
        self.app = app
        self.tag = tag.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def tagged(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], (WORKER_HEADER, self.tag)]}
            await send(message)

        await self.app(scope, receive, tagged)
