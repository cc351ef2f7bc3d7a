"""basic/index.mdx §_meta (per-request protocol fields), basic/versioning.mdx: a client sends
the same ``_meta`` on request after request, and the server reads the usual request through
a wire view of its params with that ``_meta`` checked once (``mcpbind.protocol.wire_view``).
Every later request is answered, refused and handed to handlers exactly as the first one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import types as t
from mcpbind.server import Context, Server, ServerSession
from mcpbind.transports import memory_pair

from .helpers import META, SERVER_INFO, Wire

pytestmark = pytest.mark.anyio

PROTOCOL = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


def _server() -> Server:
    server = Server("usual")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def meta_keys(ctx: Context) -> str:
        seen = ",".join(sorted(ctx.meta))
        ctx.meta.clear()  # the handler's own dict: the next request's is whole again
        ctx.meta["mine"] = True
        return f"{seen}|{ctx.progress_token}"

    return server


@asynccontextmanager
async def _wire(server: Server) -> AsyncIterator[Wire]:
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(ServerSession(server, server_end).run)
        try:
            yield Wire(client_end)
        finally:
            await client_end.aclose()
            tg.cancel_scope.cancel()


async def _call(wire: Wire, name: str, arguments: Any, meta: Any = META) -> dict[str, Any]:
    return await wire.request("tools/call", {"name": name, "arguments": arguments}, meta=meta)


async def test_later_calls_are_answered_as_the_first() -> None:
    async with _wire(_server()) as wire:
        replies = [await _call(wire, "add", {"a": 2, "b": i}) for i in range(4)]
    for i, reply in enumerate(replies):
        result = reply["result"]
        assert result["content"] == [{"type": "text", "text": str(2 + i)}]
        assert result["resultType"] == "complete"
        assert result["_meta"][SERVER_INFO] == {"name": "usual", "version": "0.1.0"}


async def test_each_handler_gets_its_own_meta() -> None:
    """The context's ``_meta`` is the request's whole object, a copy per request: what one
    handler does to it is not seen by the next request that sent the same bytes."""
    expected = ",".join(sorted(META))
    async with _wire(_server()) as wire:
        texts = [
            (await _call(wire, "meta_keys", {}))["result"]["content"][0]["text"] for _ in "abc"
        ]
    assert texts == [f"{expected}|None"] * 3


async def test_progress_tokens_stay_per_request() -> None:
    """A ``_meta`` with a progress token is one request's own: each call reads its own token."""
    async with _wire(_server()) as wire:
        texts = []
        for token in ("first", "second", None):
            meta = META if token is None else {**META, "progressToken": token}
            reply = await _call(wire, "meta_keys", {}, meta=meta)
            texts.append(reply["result"]["content"][0]["text"].split("|")[1])
    assert texts == ["first", "second", "None"]


@pytest.mark.parametrize(
    ("meta", "code"),
    [
        ({**META, CAPABILITIES: []}, -32602),
        ({**META, PROTOCOL: 20260728}, -32602),
        ({**META, PROTOCOL: "v999"}, -32022),
        ({**META, "io.modelcontextprotocol/logLevel": "loud"}, -32602),
    ],
    ids=["caps-not-object", "version-not-string", "unsupported-version", "unknown-level"],
)
async def test_a_bad_meta_after_good_ones_is_refused_as_on_first_use(
    meta: dict[str, Any], code: int
) -> None:
    async with _wire(_server()) as fresh:
        first = await _call(fresh, "add", {"a": 1, "b": 1}, meta=meta)
    async with _wire(_server()) as warmed:
        for _ in range(2):
            assert "result" in await _call(warmed, "add", {"a": 1, "b": 1})
        later = await _call(warmed, "add", {"a": 1, "b": 1}, meta=meta)
        after = await _call(warmed, "add", {"a": 1, "b": 2})
    assert first["error"]["code"] == later["error"]["code"] == code
    assert first["error"]["message"] == later["error"]["message"]
    assert after["result"]["content"][0]["text"] == "3"


@pytest.mark.parametrize("arguments", [[1, 2], "a", 3, None])
async def test_arguments_that_are_no_object_are_refused_as_on_first_use(arguments: Any) -> None:
    """server/tools.mdx: ``arguments`` is an object; the real params type refuses the others
    with the same -32602 whether or not the server has seen the method before."""
    async with _wire(_server()) as fresh:
        first = await _call(fresh, "add", arguments)
    async with _wire(_server()) as warmed:
        assert "result" in await _call(warmed, "add", {"a": 1, "b": 1})
        assert "result" in await _call(warmed, "add", {"a": 1, "b": 1})
        later = await _call(warmed, "add", arguments)
    assert first["error"]["code"] == later["error"]["code"] == -32602
    assert first["error"]["message"] == later["error"]["message"]


async def test_wrapped_and_custom_handlers_get_the_real_params() -> None:
    """Only the server's own ``tools/call`` reads the wire view; a wrapper (an extension's
    hook) gets ``CallToolRequestParams`` with its ``_meta`` decoded, a custom handler the
    params object, on every call as on the first."""
    seen: list[Any] = []
    wrapped = _server()

    def spy(inner: Any) -> Any:
        async def handler(params: Any, ctx: Context) -> Any:
            seen.append(params)
            return await inner(params, ctx)

        return handler

    wrapped.wrap("tools/call", spy)
    custom = Server("custom")

    @custom.method("tools/call")
    async def call(params: Any, ctx: Context) -> t.CallToolResult:
        seen.append(params)
        return t.CallToolResult(content=[t.TextContent(text="custom")])

    for server in (wrapped, custom):
        async with _wire(server) as wire:
            for _ in range(3):
                assert "result" in await _call(wire, "add", {"a": 1, "b": 1})
    assert len(seen) == 6
    for params in seen[:3]:
        assert type(params) is t.CallToolRequestParams
        assert params.name == "add"
        assert params.meta == META
    for params in seen[3:]:  # a custom method's params are the JSON object itself
        assert params == {"name": "add", "arguments": {"a": 1, "b": 1}, "_meta": META}
