"""The tools and prompt the 2026-07-28 conformance scenarios call (input-required-result-*,
server-stateless's ``test_missing_capability``), written with the era-independent handler API.

``register_stateless_tools(server)`` adds them to the everything server; the names, input keys
and messages are the ones the scenarios send and check (SEP-2322, SEP-2575).
"""

from __future__ import annotations

import asyncio

from mcpbind import Context, Server
from mcpbind import types as t

__all__ = ["register_stateless_tools"]


def _form(message: str, **fields: str) -> t.ElicitRequestFormParams:
    properties: dict[str, t.PrimitiveSchemaDefinition] = {}
    for name, kind in fields.items():
        properties[name] = (
            t.BooleanSchema(type="boolean") if kind == "boolean" else t.StringSchema(type="string")
        )
    schema = t.ElicitRequestFormParamsRequestedSchema(
        type="object", properties=properties, required=list(fields)
    )
    return t.ElicitRequestFormParams(message=message, requested_schema=schema)


def _ask_model(text: str, max_tokens: int) -> t.CreateMessageRequestParams:
    message = t.SamplingMessage(role="user", content=t.TextContent(text=text))
    return t.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)


def _field(result: t.ElicitResult, name: str) -> object:
    return result.content.get(name) if isinstance(result.content, dict) else None


def _sampled_text(result: t.CreateMessageResult) -> str:
    return result.content.text if isinstance(result.content, t.TextContent) else ""


def register_stateless_tools(server: Server) -> None:
    """Register the scenarios' tools and prompt on ``server``."""

    @server.tool(description="One elicitation input request (SEP-2322)")
    async def test_input_required_result_elicitation(ctx: Context) -> t.TextContent:
        answer = await ctx.elicit(_form("What is your name?", name="string"), key="user_name")
        return t.TextContent(text=f"Hello, {_field(answer, 'name')}!")

    @server.tool(description="One sampling input request (SEP-2322)")
    async def test_input_required_result_sampling(ctx: Context) -> t.TextContent:
        result = await ctx.sample(
            _ask_model("What is the capital of France?", 100), key="capital_question"
        )
        return t.TextContent(text=_sampled_text(result))

    @server.tool(description="One roots/list input request (SEP-2322)")
    async def test_input_required_result_list_roots(ctx: Context) -> t.TextContent:
        roots = await ctx.list_roots(key="client_roots")
        return t.TextContent(text="Roots: " + ", ".join(root.uri for root in roots.roots))

    @server.tool(description="Round-trips a signed requestState (SEP-2322)")
    async def test_input_required_result_request_state(ctx: Context) -> t.TextContent:
        answer = await ctx.elicit(_form("Please confirm", ok="boolean"), key="confirm")
        # Reaching here on a retry means the requestState verified (HMAC, binding, expiry).
        return t.TextContent(text=f"state-ok (confirmed: {_field(answer, 'ok')})")

    @server.tool(description="Elicitation, sampling and roots in one round (SEP-2322)")
    async def test_input_required_result_multiple_inputs(ctx: Context) -> t.TextContent:
        name, greeting, roots = await asyncio.gather(
            ctx.elicit(_form("What is your name?", name="string"), key="user_name"),
            ctx.sample(_ask_model("Generate a greeting", 50), key="greeting"),
            ctx.list_roots(key="client_roots"),
        )
        text = f"{_sampled_text(greeting)} {_field(name, 'name')} ({len(roots.roots)} roots)"
        return t.TextContent(text=text)

    @server.tool(description="Two input rounds with evolving requestState (SEP-2322)")
    async def test_input_required_result_multi_round(ctx: Context) -> t.TextContent:
        first = await ctx.elicit(_form("Step 1: What is your name?", name="string"), key="step1")
        second = await ctx.elicit(
            _form("Step 2: What is your favorite color?", color="string"), key="step2"
        )
        return t.TextContent(text=f"{_field(first, 'name')} likes {_field(second, 'color')}")

    @server.tool(description="Rejects a tampered requestState (SEP-2322)")
    async def test_input_required_result_tampered_state(ctx: Context) -> t.TextContent:
        await ctx.elicit(_form("Please confirm", ok="boolean"), key="confirm")
        return t.TextContent(text="state-ok")

    @server.tool(description="Asks only for declared client capabilities (SEP-2322)")
    async def test_input_required_result_capabilities(ctx: Context) -> t.TextContent:
        asked = []
        if ctx.client_supports("elicitation"):
            await ctx.elicit(_form("What is your name?", name="string"), key="user_name")
            asked.append("elicitation")
        if ctx.client_supports("sampling"):
            await ctx.sample(_ask_model("Say hello", 20), key="hello")
            asked.append("sampling")
        return t.TextContent(text=f"asked: {', '.join(asked) or 'nothing'}")

    @server.tool(description="Needs sampling; undeclared, the request fails with -32021")
    async def test_missing_capability(ctx: Context) -> t.TextContent:
        result = await ctx.sample(_ask_model("Hello?", 10), key="sample")
        return t.TextContent(text=_sampled_text(result))

    @server.prompt(description="A prompt that first asks for context (SEP-2322)")
    async def test_input_required_result_prompt(ctx: Context) -> str:
        answer = await ctx.elicit(
            _form("What context should the prompt use?", context="string"), key="user_context"
        )
        return f"Use this context: {_field(answer, 'context')}"
