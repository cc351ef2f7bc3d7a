"""``Server.wrap(..., explicit_rounds=True)``: a handler that makes its own input rounds
(basic/patterns/mrtr.mdx §InputRequiredResult, its own ``requestState``) runs in the
request's task, without the input-round machinery; its state is still sealed inside the
server's, and an ask through its context fails at once instead of waiting."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpbind import Server
from mcpbind import types as t
from mcpbind.server.app import Handler
from mcpbind.server.context import Context
from mcpbind.server.dispatch import answer

from .helpers import META, accept

pytestmark = pytest.mark.anyio

ASK = {"method": "elicitation/create", "params": {"message": "Go on?", "requestedSchema": {}}}


def _body(**params: Any) -> bytes:
    return json.dumps({**params, "_meta": META}).encode()


def _server(tasks: list[asyncio.Task[Any] | None], asks: bool = False) -> Server:
    server = Server("explicit")

    @server.tool()
    def noop(ctx: Context) -> str:  # a context parameter: it could ask (not "unasking")
        return "unreached"

    def wrapper(inner: Handler) -> Handler:
        async def handler(params: Any, ctx: Context) -> Any:
            tasks.append(asyncio.current_task())
            if asks:
                params = t.ElicitRequestFormParams(
                    message="Go on?",
                    requested_schema=t.ElicitRequestFormParamsRequestedSchema(
                        type="object", properties={}
                    ),
                )
                return await ctx.elicit(params)
            if params.request_state is t.UNSET:
                return {
                    "resultType": "input_required",
                    "inputRequests": {"go": ASK},
                    "requestState": "mine",
                }
            # The handler gets back the state it minted, never the server's.
            return t.CallToolResult(
                content=[t.TextContent(text=f"{params.request_state}: {params.input_responses}")]
            )

        return handler

    server.wrap("tools/call", wrapper, explicit_rounds=True)
    return server


async def test_own_rounds_run_in_the_request_task_and_their_state_is_sealed() -> None:
    tasks: list[asyncio.Task[Any] | None] = []
    server = _server(tasks)
    first = await answer(server, 1, "tools/call", _body(name="noop"))
    assert first is not None and first.error_code is None
    result = json.loads(first.data)["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {"go": ASK}
    sealed = result["requestState"]
    assert sealed != "mine"  # the handler's state travels inside the server's seal
    assert tasks == [asyncio.current_task()]  # no task of its own
    done = await answer(
        server,
        2,
        "tools/call",
        _body(name="noop", requestState=sealed, inputResponses={"go": accept()}),
    )
    assert done is not None and done.error_code is None
    text = json.loads(done.data)["result"]["content"][0]["text"]
    assert text.startswith("mine: ") and "'go'" in text


async def test_an_ask_through_the_context_fails_at_once() -> None:
    tasks: list[asyncio.Task[Any] | None] = []
    reply = await asyncio.wait_for(
        answer(_server(tasks, asks=True), 1, "tools/call", _body(name="noop")), 5
    )
    assert reply is not None
    error = json.loads(reply.data)
    assert "cannot ask the client for input" in json.dumps(error)


async def test_own_rounds_are_sealed_whatever_function_the_name_reaches() -> None:
    """mrtr.mdx §Server Requirements (Basic Workflow): the state the client echoes is the server's, sealed,
    also when the call names a registered tool that takes no context (the wrapped handler,
    not that function, answers)."""
    tasks: list[asyncio.Task[Any] | None] = []
    server = _server(tasks)

    @server.tool()
    def plain() -> str:  # no context parameter
        return "unreached"

    first = await answer(server, 1, "tools/call", _body(name="plain"))
    assert first is not None and first.error_code is None
    result = json.loads(first.data)["result"]
    assert result["resultType"] == "input_required"
    assert result["requestState"] != "mine"
    done = await answer(
        server,
        2,
        "tools/call",
        _body(name="plain", requestState=result["requestState"], inputResponses={"go": accept()}),
    )
    assert done is not None and done.error_code is None
    assert json.loads(done.data)["result"]["content"][0]["text"].startswith("mine: ")
