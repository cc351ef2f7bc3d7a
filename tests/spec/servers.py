"""The servers the spec tests talk to, built the same way in memory and over stdio.

Tests import :data:`BUILDERS`; the stdio variants spawn ``python servers.py NAME`` (this file
as a script), which builds ``BUILDERS[NAME]()`` and runs it with ``serve_stdio``. The
``raw-version VERSION`` mode is not an mcpbind ``Server``: it is a hand-written stdio peer
that answers ``initialize`` with ``VERSION`` whatever the client offered, and writes every
method it receives to stderr.

Handlers that tests need to observe server-side (cancellation, progress, ...) write to a
per-server journal that the ``journal`` tool returns, so the observation works the same in
memory and in a subprocess. Only absolute imports: this file also runs as a script.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Annotated, Any, TypedDict

import anyio
import msgspec

from mcpbind import Context, McpError, Server, ToolExecutionError, serve_stdio
from mcpbind import types as t
from mcpbind.server import ServerSession
from mcpbind_types.unified import methods as m

__all__ = ["BOGUS_VERSION", "BUILDERS", "LOGO", "build", "raw_replies"]

BOGUS_VERSION = "1999-01-01"
LOGO = b"\x89PNG\r\n\x1a\n\x00\x01\xfe\xff"
"""The bytes of the blob resource ``file:///logo.png`` (not valid UTF-8 on purpose)."""


class Weather(TypedDict):
    city: str
    temperature: float
    conditions: str


class Item(msgspec.Struct):
    name: str
    count: int


def _session(ctx: Context) -> ServerSession:
    peer = ctx.peer
    assert isinstance(peer, ServerSession)
    return peer


def build_full() -> Server:
    """Every feature: tools, resources, templates, prompts, completion, logging, and tools that
    use the context to talk back to the client."""
    server = Server(
        "spec-full", version="1.2.3", title="Spec test server", instructions="Use the tools."
    )
    journal: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ plain tools
    @server.tool()
    def journal_entries() -> list[dict[str, Any]]:
        """What handlers recorded so far (cancellations, progress tokens, ...)."""
        return journal

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(annotations=t.ToolAnnotations(read_only_hint=True), title="Adder")
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def weather(city: str) -> Weather:
        """Current weather (structured output)."""
        return Weather(city=city, temperature=21.5, conditions="sunny")

    @server.tool(name="bad_weather")
    def bad_weather(city: str) -> Weather:
        """Declares the Weather output schema but returns structured content violating it."""
        bad = {"city": city, "temperature": "hot", "conditions": "sunny"}
        return t.CallToolResult(
            content=[t.TextContent(text=json.dumps(bad))], structured_content=bad
        )  # type: ignore[return-value]

    @server.tool(name="unstructured_weather")
    def unstructured_weather(city: str) -> Weather:
        """Declares an output schema but returns no structured content at all."""
        return t.CallToolResult(content=[t.TextContent(text=city)])  # type: ignore[return-value]

    @server.tool()
    def store(item: Item, tags: list[str] | None = None) -> str:
        """Nested arguments, for error paths."""
        return f"{item.name}x{item.count}"

    @server.tool()
    def fail(message: str) -> str:
        """A tool whose execution fails."""
        raise ToolExecutionError(message)

    @server.tool()
    def refuse() -> str:
        """A tool that raises a protocol error on purpose."""
        raise McpError(-32050, "refused on purpose", {"why": "test"})

    @server.tool()
    def picture() -> t.ImageContent:
        return t.ImageContent(data="aGVsbG8=", mime_type="image/png")

    # ------------------------------------------------------------------ long-running tools
    @server.tool()
    async def sleep(seconds: float, label: str, ctx: Context) -> str:
        """Sleep; the journal records start, interruption (with ``ctx.cancelled``) and end."""
        journal.append({"event": "started", "label": label})
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            journal.append({"event": "cancelled", "label": label, "flag": ctx.cancelled})
            raise
        journal.append({"event": "finished", "label": label})
        return label

    @server.tool()
    async def steps(n: int, interval: float, ctx: Context, label: str = "") -> str:
        """Report progress ``i + 0.5`` of ``n`` (floats) every ``interval`` seconds."""
        journal.append({"event": "started", "label": label, "token": ctx.progress_token})
        try:
            for i in range(n):
                await anyio.sleep(interval)
                await ctx.report_progress(i + 0.5, float(n), f"{label} step {i}")
        except anyio.get_cancelled_exc_class():
            journal.append({"event": "cancelled", "label": label})
            raise
        journal.append({"event": "finished", "label": label})
        return label

    @server.tool()
    async def progress_token(ctx: Context) -> str | int | None:
        """The progress token the client attached to this call, if any."""
        await ctx.report_progress(1.0)  # a no-op without a token
        return ctx.progress_token

    # ------------------------------------------------------------------ context: back to client
    @server.tool()
    def whoami(ctx: Context) -> dict[str, Any]:
        """What the server learnt about the client during initialization."""
        session = _session(ctx)
        info = session.client_info
        return {
            "client": None if info is None else msgspec.to_builtins(info),
            "capabilities": session.core.peer_capabilities,
            "version": session.core.version,
        }

    @server.tool()
    async def ping_client(ctx: Context) -> str:
        result = await ctx.peer.send_request(m.S2C_PING, None)
        return json.dumps(msgspec.to_builtins(result))

    @server.tool()
    async def log(levels: list[str], ctx: Context) -> int:
        """Log one message per level (logger ``spec``), then return how many were attempted."""
        for level in levels:
            await ctx.log(level, {"level": level, "detail": [1, 2]}, logger="spec")
        return len(levels)

    @server.tool()
    async def sample(prompt: str, ctx: Context, timeout: float | None = None) -> str:
        params = t.CreateMessageRequestParams(
            max_tokens=32,
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text=prompt))],
            system_prompt="be brief",
        )
        result = await ctx.sample(params, timeout=timeout)
        content = result.content
        text = content.text if isinstance(content, t.TextContent) else repr(content)
        return f"{result.model}: {text}"

    @server.tool()
    async def elicit_name(ctx: Context) -> dict[str, Any]:
        params = t.ElicitRequestFormParams(
            message="What is your name?",
            requested_schema=t.ElicitRequestFormParamsRequestedSchema(
                type="object",
                properties={"name": t.StringSchema(type="string", min_length=1)},
                required=["name"],
            ),
        )
        result = await ctx.elicit(params)
        content = None if isinstance(result.content, msgspec.UnsetType) else result.content
        return {"action": result.action, "content": content}

    @server.tool()
    async def elicit_url(ctx: Context) -> str:
        params = t.ElicitRequestURLParams(
            mode="url",
            message="Sign in",
            url="https://example.com/login",
            elicitation_id="e-1",
        )
        result = await ctx.elicit(params)
        return result.action

    @server.tool()
    def supports(path: list[str], ctx: Context) -> bool:
        """``ctx.client_supports(*path)``, as the tools above see it."""
        return ctx.client_supports(*path)

    @server.tool()
    async def sample_with_tools(ctx: Context) -> str:
        """sampling.mdx §Tools in Sampling: a request offering the model a tool."""
        params = t.CreateMessageRequestParams(
            max_tokens=32,
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text="weather?"))],
            tools=[t.Tool(name="get_weather", input_schema={"type": "object"})],
            tool_choice=t.ToolChoice(mode="auto"),
        )
        result = await ctx.sample(params)
        return result.model

    completions: dict[str, Callable[[], Any]] = {}

    @server.tool()
    async def elicit_url_later(elicitation_id: str, ctx: Context) -> str:
        """URL mode: ask, keep the completion notifier for :func:`finish_elicitation`."""
        completions[elicitation_id] = ctx.elicitation_completion(elicitation_id)
        params = t.ElicitRequestURLParams(
            mode="url",
            message="Connect",
            url="https://example.com/c",
            elicitation_id=elicitation_id,
        )
        return (await ctx.elicit(params)).action

    @server.tool()
    def needs_authorization(elicitation_id: str, ctx: Context) -> str:
        """elicitation.mdx §URL Elicitation Required Error: -32042 listing one URL elicitation."""
        from mcpbind.protocol import UrlElicitationRequired  # not at import: see BUILDERS

        completions[elicitation_id] = ctx.elicitation_completion(elicitation_id)
        raise UrlElicitationRequired(
            [
                t.ElicitRequestURLParams(
                    mode="url",
                    message="Authorize Example Co",
                    url=f"https://example.com/connect?elicitationId={elicitation_id}",
                    elicitation_id=elicitation_id,
                )
            ]
        )

    @server.tool()
    async def finish_elicitation(elicitation_id: str, ctx: Context) -> None:
        """The out-of-band interaction ended: notify through the notifier kept by another
        request (or, for an id never asked, one made now)."""
        notify = completions.pop(elicitation_id, None) or ctx.elicitation_completion(elicitation_id)
        await notify()

    @server.tool()
    async def list_roots(ctx: Context) -> list[str]:
        result = await ctx.list_roots()
        return [root.uri for root in result.roots]

    @server.tool()
    async def touch(uri: str, ctx: Context) -> bool:
        """Announce that ``uri`` changed (``ServerSession.notify_resource_updated``)."""
        session = _session(ctx)
        await session.notify_resource_updated(uri)
        return uri in session.subscriptions

    # ------------------------------------------------------------------ registering later
    @server.tool()
    def add_tools(n: int, prefix: str) -> int:
        """Register ``n`` tools after the session started (list_changed is debounced)."""
        for i in range(n):
            server.tool(name=f"{prefix}{i}")(echo)
        return len(server.tools)

    @server.tool()
    def remove_tools(prefix: str) -> int:
        for name in [n for n in server.tools if n.startswith(prefix)]:
            server.remove_tool(name)
        return len(server.tools)

    @server.tool()
    def add_resource(uri: str) -> None:
        server.resource(uri, name=uri, mime_type="text/plain")(lambda: uri)

    @server.tool()
    def add_prompt(name: str) -> None:
        server.prompt(name=name, description="added later")(lambda: "later")

    # ------------------------------------------------------------------ resources
    @server.resource("file:///readme.txt", mime_type="text/plain", title="Read me")
    def readme() -> str:
        """The project readme."""
        return "hello, world"

    @server.resource("file:///logo.png", mime_type="image/png")
    def logo() -> bytes:
        return LOGO

    @server.resource_template("users://{user_id}/profile", mime_type="application/json")
    def profile(user_id: str) -> str:
        """A user's profile."""
        return json.dumps({"id": user_id, "name": f"user {user_id}"})

    @server.resource_template("file:///docs/{+path}", mime_type="text/plain")
    def doc(path: str) -> str:
        return f"doc at {path}"

    # ------------------------------------------------------------------ prompts
    @server.prompt(title="Greeting", description="Greet someone.")
    def greet(name: str, style: str = "plain") -> str:
        return f"Hello {name} ({style})"

    @server.prompt()
    def review(
        code: Annotated[str, "the code to review"], language: Annotated[str, "its language"]
    ) -> list[t.PromptMessage]:
        """Review some code."""
        return [
            t.PromptMessage(role="user", content=t.TextContent(text=f"Review this {language}:")),
            t.PromptMessage(role="assistant", content=t.TextContent(text=code)),
        ]

    # ------------------------------------------------------------------ completion
    @server.completion()
    async def complete(
        ref: Any, argument: t.CompleteRequestParamsArgument, context: dict[str, str] | None
    ) -> Any:
        if argument.name == "many":
            return [f"v{i:03d}" for i in range(150)]
        if argument.name == "lazy":
            return (f"v{i:03d}" for i in range(150))
        if isinstance(ref, t.PromptReference) and ref.name == "greet" and argument.name == "style":
            options = ["plain", "formal", "friendly", "pirate"]
        elif isinstance(ref, t.PromptReference) and argument.name == "code":
            language = (context or {}).get("language", "any")
            options = [f"{language}:hello", f"{language}:world"]
        elif isinstance(ref, t.ResourceTemplateReference) and argument.name == "user_id":
            options = ["alice", "albert", "bob"]
        else:
            raise McpError(-32602, f"no completions for {argument.name}")
        return [o for o in options if o.startswith(argument.value)]

    return server


def build_tools_only() -> Server:
    """Just tools: no prompts, resources or completions are declared."""
    server = Server("spec-tools-only")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def add_prompt(name: str) -> None:
        """Register a prompt although the session started without the prompts capability."""
        server.prompt(name=name)(lambda: "hi")

    return server


def build_paged() -> Server:
    """Five of everything and a page size of two."""
    server = Server("spec-paged", page_size=2)
    for i in range(5):
        server.tool(name=f"tool{i}")(lambda: None)
        server.resource(f"memo://item/{i}", name=f"item{i}")(lambda: "x")
        server.resource_template(f"memo://tpl{i}/{{x}}", name=f"tpl{i}")(lambda x: x)
        server.prompt(name=f"prompt{i}")(lambda: "p")
    return server


BUILDERS: dict[str, Callable[[], Server]] = {
    "full": build_full,
    "tools-only": build_tools_only,
    "paged": build_paged,
}


def build(name: str) -> Server:
    return BUILDERS[name]()


# ---------------------------------------------------------------------- the raw stdio peer
def raw_replies(message: dict[str, Any], version: str) -> Iterator[dict[str, Any]]:
    """A minimal server: ``initialize`` answered with ``version``, ``ping``, -32601 otherwise."""
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        return
    if method == "initialize":
        result = {
            "protocolVersion": version,
            "capabilities": {},
            "serverInfo": {"name": "raw", "version": "0"},
        }
        yield {"jsonrpc": "2.0", "id": rid, "result": result}
    elif method == "ping":
        yield {"jsonrpc": "2.0", "id": rid, "result": {}}
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        yield {"jsonrpc": "2.0", "id": rid, "error": error}


async def _raw_server(version: str) -> None:
    from mcpbind.transports import StdioServerTransport, TransportClosed

    transport = StdioServerTransport()
    try:
        while True:
            message = json.loads(await transport.receive())
            print(f"received {message.get('method')}", file=sys.stderr, flush=True)
            for reply in raw_replies(message, version):
                await transport.send(json.dumps(reply).encode())
    except TransportClosed:
        print("received EOF", file=sys.stderr, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "raw-version":
        anyio.run(_raw_server, sys.argv[2])
    else:
        serve_stdio(build(sys.argv[1]))
