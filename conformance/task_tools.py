"""The task fixtures the suite's ``tasks-*`` scenarios call (the 2026-07-28 tasks extension,
SEP-2663), written with mcpbind's task handler API; they serve 2025-11-25 task-augmented calls
too. ``register_task_tools(server)`` installs task support and adds them."""

from __future__ import annotations

import asyncio

from mcpbind import Context, McpError, Server
from mcpbind import types as t
from mcpbind.server.tasks import TaskContext, Tasks

__all__ = ["register_task_tools"]


def _text(text: str, *, is_error: bool = False) -> t.CallToolResult:
    result = t.CallToolResult(content=[t.TextContent(text=text)])
    if is_error:
        result.is_error = True
    return result


def _confirm(message: str, field: str) -> t.ElicitRequestFormParams:
    schema = t.ElicitRequestFormParamsRequestedSchema(
        type="object", properties={field: t.BooleanSchema(type="boolean")}, required=[field]
    )
    return t.ElicitRequestFormParams(message=message, requested_schema=schema)


def _ask_name() -> t.ElicitRequestFormParams:
    schema = t.ElicitRequestFormParamsRequestedSchema(
        type="object", properties={"name": t.StringSchema(type="string")}, required=["name"]
    )
    return t.ElicitRequestFormParams(message="What is your name?", requested_schema=schema)


def _value(result: t.ElicitResult, *names: str) -> object:
    content = result.content if isinstance(result.content, dict) else {}
    return next((content[n] for n in names if n in content), None)


def register_task_tools(server: Server) -> Tasks:
    tasks = Tasks(server, poll_interval_ms=200)

    @server.tool(description="Greets by name (never a task)")
    def greet(name: str) -> t.TextContent:
        return t.TextContent(text=f"Hello, {name}!")

    @server.tool(task="optional", description="Sleeps `seconds`, then answers (a task)")
    async def slow_compute(task: TaskContext, seconds: float = 1, label: str = "") -> str:
        await task.status(f"computing {label}".strip())
        await asyncio.sleep(seconds)
        return f"computed {label} after {seconds:g}s".replace("  ", " ")

    @server.tool(task="required", description="Fails with a tool error after a moment (a task)")
    async def failing_job(task: TaskContext) -> str:
        await asyncio.sleep(0.5)
        raise RuntimeError("failing_job failed, as it always does")

    @server.tool(task="optional", description="Fails with a JSON-RPC error (a task)")
    async def protocol_error_job(task: TaskContext) -> str:
        await asyncio.sleep(0.2)
        raise McpError(-32603, "protocol_error_job: internal failure")

    @server.tool(task="optional", description="Asks to confirm, then deletes (a task)")
    async def confirm_delete(filename: str, task: TaskContext) -> str:
        answer = await task.elicit(_confirm(f"Delete {filename}?", "confirm"))
        if answer.action == "accept" and _value(answer, "confirm") is True:
            return f"Deleted {filename}"
        return f"Kept {filename}"

    @server.tool(task="optional", description="Asks two questions at once (a task)")
    async def multi_input(task: TaskContext) -> str:
        first, second = await asyncio.gather(
            task.elicit(_ask_name()), task.elicit(_confirm("Proceed?", "confirm"))
        )
        return f"name={_value(first, 'name')} confirm={_value(second, 'confirm')}"

    @server.tool(task="required", description="Asks for a name, then continues as a task")
    async def test_tool_with_task(ctx: Context) -> None:
        answer = await ctx.elicit(_ask_name(), key="user_name")
        name = _value(answer, "name", "user_name")

        async def work(task: TaskContext) -> str:
            await asyncio.sleep(0.1)
            return f"Hello, {name}! (finished as task {task.task_id})"

        await tasks.hand_off(ctx, work)

    return tasks
