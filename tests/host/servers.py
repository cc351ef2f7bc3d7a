"""Small servers for the Host tests: built in memory, or run over stdio as
``python tests/host/servers.py KIND`` (KIND: normal, legacy, modern, crashy, flood, garbage,
together, brief, jobs, waiter, environ). ``normal`` speaks both eras; ``legacy`` only the initialize handshake; ``modern`` only
2026-07-28; ``jobs`` has tools that run as tasks."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Literal

import anyio

from mcpbind import Context, Server, serve_stdio
from mcpbind import types as t
from mcpbind.server.options import StatelessOptions
from mcpbind.server.tasks import TaskContext, Tasks
from mcpbind.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS
from mcpbind_types.unified import methods as m

#: sampling.mdx's includeContext values.
IncludeContext = Literal["none", "thisServer", "allServers"]
READ_ONLY = t.ToolAnnotations(read_only_hint=True)
READ_HINT = {"readOnlyHint": True}  # READ_ONLY, as a hand-written server sends it
ADDITIVE = t.ToolAnnotations(read_only_hint=False, destructive_hint=False)
DESTRUCTIVE = t.ToolAnnotations(read_only_hint=False, destructive_hint=True)


def normal(name: str = "normal") -> Server:
    """Answers normally: echo, a read-only search, writes, roots, sampling and elicitation."""
    server = Server(name, version="1.0.0", instructions=f"Ask {name} things.")
    server.page_size = 2  # several pages: the host must follow nextCursor

    @server.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"{name}: {text}"

    @server.tool(annotations=READ_ONLY)
    def search(query: str) -> str:
        """Search this server."""
        return f"{name} results for {query}"

    @server.tool()
    def write(value: str) -> str:
        """No annotations: destructiveHint defaults to true."""
        return f"wrote {value}"

    @server.tool(annotations=ADDITIVE)
    def append(value: str) -> str:
        return f"appended {value}"

    @server.tool(annotations=DESTRUCTIVE)
    def wipe() -> str:
        return "wiped"

    @server.tool(annotations=READ_ONLY)
    async def slow() -> str:
        """Takes far longer than any test waits: the caller cancels it."""
        await anyio.sleep(60)
        return "finished"

    @server.tool(annotations=READ_ONLY)
    async def roots(ctx: Context) -> list[str]:
        """The roots this server sees."""
        result = await ctx.list_roots()
        return [root.uri for root in result.roots]

    @server.tool()
    async def sample(prompt: str, ctx: Context, context: IncludeContext | None = None) -> str:
        """Ask the host's model; report the answer or the error code the host sent."""
        params = t.CreateMessageRequestParams(
            max_tokens=16,
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text=prompt))],
        )
        if context is not None:
            params.include_context = context
        try:
            result = await ctx.sample(params)
        except Exception as exc:
            return f"error {getattr(exc, 'code', '?')}: {getattr(exc, 'message', exc)}"
        content = result.content
        text = content.text if isinstance(content, t.TextContent) else "?"
        return f"{result.model}: {text}"

    @server.tool()
    async def sample_with_tools(ctx: Context) -> str:
        params = t.CreateMessageRequestParams(
            max_tokens=16,
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text="x"))],
            tools=[t.Tool(name="calc", input_schema={"type": "object"})],
        )
        try:
            await ctx.sample(params)
        except Exception as exc:
            return f"error {getattr(exc, 'code', type(exc).__name__)}"
        return "sampled"

    @server.tool()
    async def ask(question: str, ctx: Context) -> str:
        params = t.ElicitRequestFormParams(
            message=question,
            requested_schema=t.ElicitRequestFormParamsRequestedSchema(
                type="object", properties={"answer": t.StringSchema(type="string")}
            ),
        )
        result = await ctx.elicit(params)
        content = result.content if isinstance(result.content, dict) else {}
        return f"{result.action} {json.dumps(content, sort_keys=True)}"

    @server.resource(f"mem://{name}/info", name="info")
    def info() -> str:
        return f"info of {name}"

    @server.resource_template(f"mem://{name}/items/{{id}}", name="item")
    def item(id: str) -> str:
        return f"item {id} of {name}"

    @server.prompt()
    def greet(who: str) -> str:
        """A greeting prompt."""
        return f"Hello {who} from {name}"

    return server


def legacy(name: str = "legacy") -> Server:
    """``normal``, speaking only the handshake era (initialize)."""
    server = normal(name)
    server.stateless = StatelessOptions(versions=HANDSHAKE_VERSIONS)
    return server


def modern(name: str = "modern") -> Server:
    """``normal``, speaking only 2026-07-28 (server/discover, input rounds, listen)."""
    server = normal(name)
    server.stateless = StatelessOptions(versions=STATELESS_VERSIONS)
    return server


def _unknown(rid: Any, method: str) -> bytes:
    """A legacy server's answer to a method it does not know (such as server/discover)."""
    error = {"code": -32601, "message": f"Method not found: {method}"}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode() + b"\n"


PROFILE_FIELDS: dict[str, t.PrimitiveSchemaDefinition] = {
    "name": t.StringSchema(type="string", title="Your name", min_length=2),
    "colour": t.TitledSingleSelectEnumSchema(
        type="string",
        title="Colour",
        one_of=[
            t.TitledSingleSelectEnumSchemaOneOfItem(const="r", title="Red"),
            t.TitledSingleSelectEnumSchemaOneOfItem(const="g", title="Green"),
        ],
        default="g",
    ),
    "age": t.NumberSchema(type="integer", minimum=0, maximum=150, description="in years"),
    "ratio": t.NumberSchema(type="number", default=0.5),
    "subscribe": t.BooleanSchema(type="boolean", title="Subscribe?", default=True),
    "tags": t.UntitledMultiSelectEnumSchema(
        type="array",
        items=t.UntitledMultiSelectEnumSchemaItems(type="string", enum=["a", "b", "c"]),
    ),
    "size": t.LegacyTitledEnumSchema(type="string", enum=["S", "L"], enum_names=["Small", "Large"]),
    "note": t.StringSchema(type="string"),
}
PROFILE = t.ElicitRequestFormParamsRequestedSchema(
    type="object", properties=PROFILE_FIELDS, required=["name", "age", "tags", "size"]
)


def forms() -> Server:
    """``profile`` asks for a form with every kind of field elicitation.mdx defines."""
    server = Server("forms", version="1.0.0")

    @server.tool(annotations=READ_ONLY)
    async def profile(ctx: Context) -> str:
        result = await ctx.elicit(
            t.ElicitRequestFormParams(message="Tell us about you", requested_schema=PROFILE)
        )
        content = result.content if isinstance(result.content, dict) else {}
        return f"{result.action} {json.dumps(content, sort_keys=True)}"

    @server.tool(annotations=READ_ONLY)
    async def count(ctx: Context, steps: int = 3) -> str:
        """Reports progress at each step."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}")
            await anyio.sleep(0.05)
        return f"counted {steps}"

    return server


def crashy() -> Server:
    """Answers ``echo``; ``crash`` kills the process in the middle of the call."""
    server = Server("crashy", version="1.0.0")

    @server.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        return f"crashy: {text} (pid {os.getpid()})"

    @server.tool(annotations=READ_ONLY)
    async def crash() -> str:
        await anyio.sleep(0.2)
        os._exit(3)

    return server


def flood() -> Server:
    """``flood`` sends thousands of notifications (logs and list_changed) before answering."""
    server = Server("flood", version="1.0.0")

    @server.tool(annotations=READ_ONLY)
    async def flood(count: int, ctx: Context) -> int:
        for i in range(count):
            await ctx.peer.send_notification(
                m.S2C_LOGGING_MESSAGE, t.LoggingMessageNotificationParams(level="info", data=i)
            )
            if i % 10 == 0:
                await ctx.peer.send_notification(m.S2C_TOOL_LIST_CHANGED, None)
        return count

    @server.tool(annotations=READ_ONLY)
    def ping_me() -> str:
        return "flood alive"

    return server


def _initialized(message: dict[str, Any], name: str, capabilities: dict[str, Any]) -> Any:
    """A hand-written server's ``initialize`` result: the client's version, accepted."""
    return {
        "protocolVersion": message["params"]["protocolVersion"],
        "capabilities": capabilities,
        "serverInfo": {"name": name, "version": "0"},
    }


def garbage() -> None:
    """A hand-written stdio server: valid handshake, then garbage, a huge line, and the answer."""
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "id" not in message or "method" not in message:
            continue  # responses to our garbage (parse errors), notifications
        rid, method = message["id"], message["method"]
        if method == "initialize":
            result: Any = _initialized(message, "garbage", {"tools": {}})
        elif method == "tools/list":
            tool = {
                "name": "spew",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": True},
            }
            result = {"tools": [tool]}
        elif method == "tools/call":
            out.write(b"this is not json\n\xff\xfe{{{\n")
            out.write(b'{"jsonrpc": "2.0", "id": 99999, "result": {}}\n')
            out.write(b'"' + b"x" * 200_000 + b'"\n')
            result = {"content": [{"type": "text", "text": "spewed"}]}
        elif method == "ping":
            result = {}
        else:
            out.write(_unknown(rid, method))
            out.flush()
            continue
        out.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode() + b"\n")
        out.flush()


def together() -> None:
    """A hand-written stdio server (handshake era) whose ``count`` reports steps 1 and 2, then
    writes step 3 and its result in one write: a reader gets the last progress and the result
    in the same chunk."""
    out = sys.stdout.buffer

    def line(message: dict[str, Any]) -> bytes:
        return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"

    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        if "id" not in message or "method" not in message:
            continue  # notifications
        rid, method = message["id"], message["method"]
        if method == "initialize":
            result: Any = _initialized(message, "together", {"tools": {}})
        elif method == "tools/list":
            tool = {"name": "count", "inputSchema": {"type": "object"}, "annotations": READ_HINT}
            result = {"tools": [tool]}
        elif method == "tools/call":
            token = message["params"].get("_meta", {}).get("progressToken")
            steps = [
                line({"method": "notifications/progress", "params": {"progressToken": token, **p}})
                for p in ({"progress": i, "total": 3} for i in (1, 2, 3))
                if token is not None
            ]
            content = [{"type": "text", "text": "counted 3"}]
            answer = line({"id": rid, "result": {"content": content}})
            for step in steps[:-1]:
                out.write(step)
                out.flush()
            out.write(b"".join([*steps[-1:], answer]))  # one write, one chunk
            out.flush()
            continue
        elif method == "ping":
            result = {}
        else:
            out.write(_unknown(rid, method))
            out.flush()
            continue
        out.write(line({"id": rid, "result": result}))
        out.flush()


def brief() -> None:
    """Answers initialize, then exits as soon as the client says initialized (a crash loop)."""
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if message.get("method") == "notifications/initialized":
            sys.exit(4)
        if message.get("method") not in (None, "initialize") and "id" in message:
            sys.stdout.buffer.write(_unknown(message["id"], message["method"]))
            sys.stdout.flush()
        if message.get("method") == "initialize":
            result = _initialized(message, "brief", {})
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


def jobs() -> Server:
    """Task tools (2025-11-25 tasks.mdx): ``reindex`` runs until cancelled, ``build`` reports
    its steps as status messages and ends; both require a task. ``hello`` is plain."""
    server = Server("jobs")
    Tasks(server, poll_interval_ms=50)

    @server.tool(task="required", annotations=READ_ONLY)
    async def reindex(path: str, task: TaskContext) -> str:
        """Reindex a path (until cancelled)."""
        await task.status(f"indexing {path}")
        await anyio.sleep_forever()
        return "never"

    @server.tool(task="required", annotations=READ_ONLY)
    async def build(steps: int, task: TaskContext) -> str:
        """Build in ``steps`` steps."""
        for step in range(1, steps + 1):
            await task.status(f"step {step} of {steps}")
            await anyio.sleep(0.2)
        return f"built in {steps} steps"

    @server.tool(annotations=READ_ONLY)
    def hello() -> str:
        """A plain tool (no task support)."""
        return "hello"

    return server


def waiter() -> Server:
    """For the shell's Ctrl-C: ``wait`` runs until cancelled and leaves ``MARKER.started``,
    then ``MARKER.cancelled`` once a ``notifications/cancelled`` stops it; ``change`` asks
    for approval (not read-only); ``fail`` raises, so the answer is an ``isError`` result."""
    server = Server("waiter", version="1.0.0")

    @server.tool(annotations=READ_ONLY)
    async def wait(marker: str) -> str:
        # The marker's write is inside the try: a worker thread makes the file, and a caller
        # that cancels once it sees the file can reach this handler before it resumed from
        # that write (the cancel then lands on it, not on sleep_forever).
        try:
            await anyio.Path(marker + ".started").touch()
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await anyio.Path(marker + ".cancelled").touch()
            raise
        return "never"

    @server.tool()
    def change(value: str) -> str:
        return f"changed {value}"

    @server.tool(annotations=READ_ONLY)
    def fail() -> str:
        raise RuntimeError("the tool broke")

    return server


def environ() -> Server:
    """For configuration values reaching a server: ``env`` returns one of its environment
    variables (a VS Code ``${input:…}`` answered at the terminal, say)."""
    server = Server("environ", version="1.0.0")

    @server.tool(annotations=READ_ONLY)
    def env(name: str) -> str:
        return f"{name}={os.environ.get(name, '(unset)')}"

    return server


BUILDERS = {
    "normal": normal,
    "legacy": legacy,
    "modern": modern,
    "crashy": crashy,
    "flood": flood,
    "forms": forms,
    "jobs": jobs,
    "waiter": waiter,
    "environ": environ,
}

if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "garbage":
        garbage()
    elif kind == "together":
        together()
    elif kind == "brief":
        brief()
    else:
        serve_stdio(BUILDERS[kind]())
