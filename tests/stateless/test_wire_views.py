"""``Server.wrap(..., wire_view=True)``: on 2026-07-28 the wrapped handler is given the request's
wire view (its params' fields, ``_meta`` raw, basic/index.mdx §General fields), not params
decoded a second time; a layer around it, or a wrapper outside it, still gets the params, and
a view its params type would refuse is refused as before."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from mcpbind import Server
from mcpbind import types as t
from mcpbind.protocol.wire_view import WireParams
from mcpbind.server.app import Handler
from mcpbind.server.context import Context
from mcpbind.server.dispatch import answer
from mcpbind.server.middleware import IncomingCall, Next
from mcpbind_types.unified import methods as m

from .helpers import META

pytestmark = pytest.mark.anyio


def _body(**params: Any) -> bytes:
    return json.dumps({**params, "_meta": META}).encode()


def _server(seen: list[Any], *, wire_view: bool = True) -> Server:
    server = Server("views")

    @server.tool()
    def echo(text: str) -> str:  # declares tools; the wrapped handler answers instead
        return "unreached"

    def wrapper(inner: Handler) -> Handler:
        async def handler(params: Any, ctx: Context) -> Any:
            seen.append(params)
            arguments = msgspec.json.decode(params.arguments) if params.arguments else {}
            return t.CallToolResult(content=[t.TextContent(text=f"{params.name} {arguments}")])

        return handler

    server.wrap("tools/call", wrapper, explicit_rounds=True, wire_view=wire_view)
    return server


async def _warmed(server: Server, seen: list[Any]) -> Server:
    """The server after one call: a method's first request is decoded the long way, which
    finds its wire view for the next ones."""
    await _call(server, {"text": "first"})
    seen.clear()
    return server


async def _call(server: Server, arguments: Any = None) -> Any:
    fields: dict[str, Any] = {"name": "echo"}
    if arguments is not None:
        fields["arguments"] = arguments
    # As a connection hands it over: the params as raw JSON (the view needs them so).
    reply = await answer(server, 1, "tools/call", msgspec.Raw(_body(**fields)))
    assert reply is not None
    return json.loads(reply.data)


async def test_the_handler_gets_the_wire_view_with_the_params_fields() -> None:
    seen: list[Any] = []
    response = await _call(await _warmed(_server(seen), seen), {"text": "hi"})
    assert response["result"]["content"][0]["text"] == "echo {'text': 'hi'}"
    assert response["result"]["resultType"] == "complete"
    (params,) = seen
    assert isinstance(params, WireParams) and params.real_type is t.CallToolRequestParams
    assert params.name == "echo" and params.task is msgspec.UNSET
    assert msgspec.json.decode(params.meta) == META  # raw: the context has it decoded


async def test_without_wire_view_the_handler_gets_the_params() -> None:
    seen: list[Any] = []
    await _call(await _warmed(_server(seen, wire_view=False), seen), {"text": "hi"})
    assert type(seen[0]) is t.CallToolRequestParams
    assert seen[0].meta == META


async def test_a_middleware_layer_gets_the_params_and_so_does_the_handler() -> None:
    seen: list[Any] = []
    layered: list[Any] = []
    server = await _warmed(_server(seen), seen)

    async def layer(call: IncomingCall, call_next: Next) -> Any:
        layered.append(call.params)
        return await call_next(call)

    server.add_middleware(layer)
    assert "tools/call" not in server.wire_views
    await _call(server, {"text": "hi"})
    assert type(layered[0]) is t.CallToolRequestParams
    assert seen == layered


async def test_a_wrapper_outside_the_viewing_one_gets_the_params() -> None:
    seen: list[Any] = []
    outer: list[Any] = []
    server = await _warmed(_server(seen), seen)

    def wrapper(inner: Handler) -> Handler:
        async def handler(params: Any, ctx: Context) -> Any:
            outer.append(params)
            return await inner(params, ctx)

        return handler

    server.wrap("tools/call", wrapper)
    assert "tools/call" not in server.wire_views
    await _call(server)
    assert type(outer[0]) is t.CallToolRequestParams


async def test_arguments_that_are_not_an_object_are_refused_as_before() -> None:
    """schema: ``CallToolRequestParams.arguments`` is an object; the view, which has not the
    params type's own check, is refused by it (-32602), the handler never reached."""
    seen: list[Any] = []
    viewed = await _call(await _warmed(_server(seen), seen), [1, 2])
    plain = await _call(await _warmed(_server(seen, wire_view=False), seen), [1, 2])
    assert viewed["error"]["code"] == -32602
    assert viewed["error"] == plain["error"]
    assert seen == []


def test_only_tools_call_params_have_a_check_a_view_lacks() -> None:
    """dispatch._view_fits makes tools/call's own check (``arguments`` an object) for a view;
    no other request's params type has one (``__post_init__``) that a view would skip."""
    checked = {
        info.method
        for info in m.CLIENT_TO_SERVER.values()
        if isinstance(info.params_type, type) and hasattr(info.params_type, "__post_init__")
    }
    assert checked == {"tools/call"}
