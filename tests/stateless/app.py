"""The servers the stateless-era tests talk to; ``python app.py CONFIG`` serves one over stdio.

CONFIG: ``dual`` (both eras, the default), ``legacy`` (handshake only) or ``modern``
(2026-07-28 only). Every config offers the same tools, so one application code serves all.
Extra arguments are ignored.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcpbind import Client, ClientHandlers, Context, Server, serve_stdio
from mcpbind import types as t
from mcpbind.server.options import CacheHint, StatelessOptions
from mcpbind.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS

CONFIGS = {
    "dual": STATELESS_VERSIONS + HANDSHAKE_VERSIONS,
    "legacy": HANDSHAKE_VERSIONS,
    "modern": STATELESS_VERSIONS,
}
SECRET = b"stateless-tests-secret-key-32byt"


def name_form(message: str, field: str = "name") -> t.ElicitRequestFormParams:
    schema = t.ElicitRequestFormParamsRequestedSchema(
        type="object", properties={field: t.StringSchema(type="string")}, required=[field]
    )
    return t.ElicitRequestFormParams(message=message, requested_schema=schema)


def question(text: str) -> t.CreateMessageRequestParams:
    message = t.SamplingMessage(role="user", content=t.TextContent(text=text))
    return t.CreateMessageRequestParams(messages=[message], max_tokens=100)


def build(config: str = "dual", **options: Any) -> Server:
    server = Server("stateless-app", version="2.0.0", instructions="Test server.", page_size=3)
    server.stateless = StatelessOptions(versions=CONFIGS[config], **{"secret": SECRET, **options})
    calls: dict[str, int] = {}

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Ask the user's name, then greet them (one elicitation)."""
        calls["greet"] = calls.get("greet", 0) + 1
        answer = await ctx.elicit(name_form("What is your name?"), key="user_name")
        content = answer.content if isinstance(answer.content, dict) else {}
        return f"Hello, {content.get('name', '?')}!"

    @server.tool()
    async def capital(ctx: Context) -> str:
        """Ask the client's model (one sampling request)."""
        result = await ctx.sample(question("What is the capital of France?"), key="capital")
        content = result.content
        return content.text if isinstance(content, t.TextContent) else "?"

    @server.tool()
    async def roots(ctx: Context) -> list[str]:
        """The client's roots (one roots/list request)."""
        return [root.uri for root in (await ctx.list_roots()).roots]

    @server.tool()
    async def everything(ctx: Context) -> str:
        """Elicitation, sampling and roots at once: one input round with three requests."""
        answer, sampled, listed = await asyncio.gather(
            ctx.elicit(name_form("What is your name?")),
            ctx.sample(question("Generate a greeting")),
            ctx.list_roots(),
        )
        name = answer.content.get("name") if isinstance(answer.content, dict) else "?"
        text = sampled.content.text if isinstance(sampled.content, t.TextContent) else "?"
        return f"{name}|{text}|{len(listed.roots)}"

    @server.tool()
    async def steps(ctx: Context) -> str:
        """Two elicitations one after the other: two input rounds."""
        first = await ctx.elicit(name_form("Step 1: your name?"), key="step1")
        second = await ctx.elicit(name_form("Step 2: your colour?", "color"), key="step2")
        one = first.content if isinstance(first.content, dict) else {}
        two = second.content if isinstance(second.content, dict) else {}
        return f"{one.get('name')} likes {two.get('color')}"

    @server.tool()
    async def insist(ctx: Context) -> str:
        """Keeps asking until the answer is 'yes' (unbounded rounds, bounded by the server)."""
        for n in range(100):
            answer = await ctx.elicit(name_form(f"Say yes ({n})", "word"), key=f"ask{n}")
            if isinstance(answer.content, dict) and answer.content.get("word") == "yes":
                return f"yes after {n + 1}"
        return "never"

    @server.tool()
    async def polite(ctx: Context) -> str:
        """Asks only for what the client declared (mrtr.mdx, capability check)."""
        if ctx.client_supports("elicitation"):
            await ctx.elicit(name_form("Your name?"), key="user_name")
        if ctx.client_supports("sampling"):
            await ctx.sample(question("Anything?"), key="sample")
        return "nothing to ask"

    @server.tool()
    async def needs_sampling(ctx: Context) -> str:
        """Always asks for sampling (the client may not have declared it)."""
        await ctx.sample(question("Hi?"), key="sample")
        return "sampled"

    @server.tool()
    async def chatty(count: int, ctx: Context) -> str:
        """Progress and log messages while it works."""
        for step in range(count):
            await ctx.report_progress(step + 1, count)
            await ctx.log("info", f"step {step + 1}")
        return "done"

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleeps (for cancellation)."""
        await asyncio.sleep(seconds)
        return "woke up"

    @server.tool()
    def call_count(tool: str) -> int:
        """How often a handler ran (MRTR re-runs handlers)."""
        return calls.get(tool, 0)

    @server.tool()
    async def other_era(era: str, ctx: Context) -> dict[str, Any]:
        """Open an in-memory client of ``era`` to this same Server while the caller's
        connection stays open: two connections, two eras, one Server object."""

        async def elicit(params: Any) -> t.ElicitResult:
            return t.ElicitResult(action="accept", content={"name": "Inner"})

        version = "2026-07-28" if era == "stateless" else "2025-11-25"
        async with Client(
            server, protocol_version=version, handlers=ClientHandlers(elicitation=elicit)
        ) as inner:
            greeted = await inner.call("greet")
            text = greeted.content[0]
            return {
                "era": inner.era,
                "greeting": text.text if isinstance(text, t.TextContent) else "",
            }

    for letter in "edcba":  # registered out of order; listed in registration order

        @server.tool(name=f"z_{letter}")
        def filler() -> str:
            """Filler for ordering and pagination."""
            return "filler"

    @server.resource("mem://greeting", mime_type="text/plain")
    def greeting() -> str:
        """A fixed greeting."""
        return "Hello from the stateless app!"

    @server.resource("mem://secret")
    async def secret(ctx: Context) -> str:
        """Reading it needs a password (MRTR on resources/read)."""
        answer = await ctx.elicit(name_form("Password?", "password"), key="password")
        content = answer.content if isinstance(answer.content, dict) else {}
        return "opened" if content.get("password") == "sesame" else "denied"

    @server.resource_template("mem://users/{user_id}", mime_type="text/plain")
    def user(user_id: str) -> str:
        """One user's line."""
        return f"user {user_id}"

    @server.prompt()
    async def interview(ctx: Context) -> str:
        """A prompt that asks for context first (MRTR on prompts/get)."""
        answer = await ctx.elicit(name_form("Context?", "context"), key="user_context")
        content = answer.content if isinstance(answer.content, dict) else {}
        return f"Interview about {content.get('context')}"

    @server.prompt()
    def hello(name: str) -> str:
        """Say hello."""
        return f"Hello, {name}!"

    return server


def ttl_options(ttl_ms: int) -> dict[str, Any]:
    """Options with every list's ``ttlMs`` set to ``ttl_ms``."""
    hint = CacheHint(ttl_ms, "public")
    methods = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
    return {
        "cache": {**dict.fromkeys(methods, hint), "resources/read": CacheHint(ttl_ms, "private")}
    }


if __name__ == "__main__":
    serve_stdio(build(sys.argv[1] if len(sys.argv) > 1 else "dual"))
