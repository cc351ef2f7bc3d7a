"""Not spec behaviour (issue 31 item 2, the client-side sibling): a client handler's uncaught
exception (sampling, here) answers the server -32603 "Internal error" and is logged with its
traceback under ``mcpbind.client``, as a server handler's is under ``mcpbind.server``."""

from __future__ import annotations

import logging

import pytest

from mcpbind import Client, ClientHandlers, Context, McpError, Server
from mcpbind import types as t

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_failing_sampling_handler_is_logged_on_the_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("asks")
    told: list[McpError] = []

    @server.tool()
    async def ask(ctx: Context) -> str:
        params = t.CreateMessageRequestParams(
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text="hi"))],
            max_tokens=5,
        )
        try:
            await ctx.sample(params)
        except McpError as exc:
            told.append(exc)
        return "asked"

    async def sampling(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        raise KeyError("model")

    caplog.set_level(logging.ERROR, logger="mcpbind")
    async with Client(
        server, protocol_version="2025-11-25", handlers=ClientHandlers(sampling=sampling)
    ) as client:
        await client.call("ask")
    assert [(e.code, e.message) for e in told] == [(-32603, "Internal error")]
    records = [r for r in caplog.records if r.name == "mcpbind.client"]
    assert [r.getMessage() for r in records] == ["handler for sampling/createMessage failed"]
    assert records[0].exc_info is not None and records[0].exc_info[0] is KeyError
