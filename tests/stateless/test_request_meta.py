"""basic/index.mdx §_meta (per-request protocol fields), basic/versioning.mdx (version errors),
basic/index.mdx §ResultType: what every 2026-07-28 request must carry and every result gets."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from mcpbind import Client, ClientHandlers, RequestOptions
from mcpbind import types as t
from mcpbind.server import ServerSession
from mcpbind.transports import memory_pair

from .app import build
from .helpers import META, SERVER_INFO, VERSION, Recorder, check_schema, raw

pytestmark = pytest.mark.anyio

PROTOCOL = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"


@pytest.mark.parametrize(
    "meta",
    [
        None,
        {CAPABILITIES: {}},
        {PROTOCOL: VERSION},
        {PROTOCOL: 20260728, CAPABILITIES: {}},
        {PROTOCOL: VERSION, CAPABILITIES: []},
    ],
    ids=["no-meta", "no-version", "no-capabilities", "version-not-string", "caps-not-object"],
)
@pytest.mark.memory_only
async def test_missing_required_fields(transport: str, meta: dict[str, Any] | None) -> None:
    """basic/index.mdx §_meta: a request missing a required field is malformed: -32602."""
    async with raw(transport) as wire:
        params = {} if meta is None else {"_meta": meta}
        reply = await wire.request("server/discover", params, meta=None, request_id=101)
    assert reply["id"] == 101
    assert reply["error"]["code"] == -32602


async def test_client_info_is_optional(transport: str) -> None:
    """basic/index.mdx §_meta: clientInfo is a SHOULD; servers serve requests without it."""
    async with raw(transport) as wire:
        result = await wire.result(
            "tools/call",
            {"name": "add", "arguments": {"a": 2, "b": 3}},
            meta={PROTOCOL: VERSION, CAPABILITIES: {}},
        )
    assert result["content"][0]["text"] == "5"


async def test_unsupported_version(transport: str) -> None:
    """basic/versioning.mdx §Protocol Version Negotiation: -32022 with the supported versions
    (the same list server/discover gives) and the requested one echoed."""
    async with raw(transport) as wire:
        discovered = await wire.result("server/discover")
        reply = await wire.request(
            "tools/list", {}, meta={**META, PROTOCOL: "v999.0.0"}, request_id=301
        )
    assert reply["id"] == 301
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"] == {
        "supported": discovered["supportedVersions"],
        "requested": "v999.0.0",
    }


async def test_handshake_version_in_meta_is_unsupported(transport: str) -> None:
    """basic/versioning.mdx §Terminology: per-request _meta is the modern era only; a legacy
    version there is not served statelessly (-32022) and the client can pick from the list."""
    async with raw(transport) as wire:
        reply = await wire.request("tools/list", {}, meta={**META, PROTOCOL: "2025-11-25"})
    assert reply["error"]["code"] == -32022
    assert VERSION in reply["error"]["data"]["supported"]


async def test_missing_client_capability(transport: str) -> None:
    """basic/index.mdx §_meta: a request needing an undeclared capability gets -32021 with
    data.requiredCapabilities as a ClientCapabilities object."""
    async with raw(transport) as wire:
        reply = await wire.request(
            "tools/call", {"name": "needs_sampling"}, meta={**META, CAPABILITIES: {}}
        )
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/subscribe", "nope/nothing"]
)
@pytest.mark.memory_only
async def test_removed_methods(transport: str, method: str) -> None:
    """changelog.mdx (Major changes 2 and 5): no initialize, ping or logging/setLevel in
    2026-07-28; a modern request for them (or any unknown method) is -32601."""
    async with raw(transport) as wire:
        reply = await wire.request(method, {"level": "info", "uri": "mem://greeting"})
    assert reply["error"]["code"] == -32601


async def test_result_type_and_server_info_on_every_result(transport: str) -> None:
    """basic/index.mdx §ResultType and per-response fields: resultType "complete" and
    _meta serverInfo on every result; every result valid against the official schema."""
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("tools/list", {}, "ListToolsResult"),
        ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}, "CallToolResult"),
        ("prompts/list", {}, "ListPromptsResult"),
        ("prompts/get", {"name": "hello", "arguments": {"name": "Ann"}}, "GetPromptResult"),
        ("resources/list", {}, "ListResourcesResult"),
        ("resources/templates/list", {}, "ListResourceTemplatesResult"),
        ("resources/read", {"uri": "mem://users/7"}, "ReadResourceResult"),
        ("server/discover", {}, "DiscoverResult"),
        ("tools/call", {"name": "greet"}, "InputRequiredResult"),
    ]
    async with raw(transport) as wire:
        for method, params, definition in calls:
            result = await wire.result(method, params)
            check_schema(definition, result)  # the official schema, required fields and all
            if definition == "InputRequiredResult":
                continue
            assert result["resultType"] == "complete", method
            assert result["_meta"][SERVER_INFO]["name"] == "stateless-app", method


async def test_resource_not_found_is_invalid_params(transport: str) -> None:
    """server/resources.mdx §Error Handling (2026-07-28): -32602 with the uri in data (the
    handshake era keeps -32002)."""
    async with raw(transport) as wire:
        reply = await wire.request("resources/read", {"uri": "test://nonexistent"})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"] == {"uri": "test://nonexistent"}


async def test_logs_only_when_the_request_asks(transport: str) -> None:
    """server/utilities/logging.mdx (2026-07-28): notifications/message only for a request that
    set io.modelcontextprotocol/logLevel; progress flows for the request's progressToken."""
    async with raw(transport) as wire:
        quiet = await wire.result(
            "tools/call",
            {"name": "chatty", "arguments": {"count": 2}, "_meta": {"progressToken": "p1"}},
        )
        assert quiet["content"][0]["text"] == "done"
        assert [n["method"] for n in wire.notifications] == ["notifications/progress"] * 2
        assert wire.notifications[1]["params"]["progressToken"] == "p1"
        wire.notifications.clear()
        await wire.result(
            "tools/call",
            {
                "name": "chatty",
                "arguments": {"count": 2},
                "_meta": {"io.modelcontextprotocol/logLevel": "info"},
            },
        )
    messages = [n for n in wire.notifications if n["method"] == "notifications/message"]
    assert [m["params"]["data"] for m in messages] == ["step 1", "step 2"]


@pytest.mark.memory_only
async def test_client_sends_meta_on_every_request() -> None:
    """basic/index.mdx §_meta: the client puts version, capabilities and clientInfo on every
    request, the log level when set, and nothing era-specific changes in the calls."""

    async def elicit(params: Any) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"name": "Meta"})

    client_end, server_end = memory_pair()
    wire = Recorder(server_end)
    session = ServerSession(build(), wire)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        async with Client(
            client_end,
            protocol_version="auto",
            name="meta-client",
            version="9",
            handlers=ClientHandlers(elicitation=elicit, roots=[]),
        ) as c:
            await c.call("greet")
            await c.set_level(t.SetLevelRequestParams(level="debug"))
            await c.call_tool(t.CallToolRequestParams(name="add", arguments={"a": 1, "b": 2}))
        tg.cancel_scope.cancel()
    requests = wire.requests()
    methods = [m["method"] for m in requests]
    # discover, the call and its MRTR retry, the output-schema pages (page_size 3), the call
    assert methods[:3] == ["server/discover", "tools/call", "tools/call"]
    assert set(methods[3:-1]) == {"tools/list"} and methods[-1] == "tools/call"
    for message in requests:
        meta = message["params"]["_meta"]
        assert meta[PROTOCOL] == VERSION
        assert meta[CAPABILITIES] == {
            "elicitation": {"form": {}, "url": {}},
            "roots": {"listChanged": True},
        }
        assert meta["io.modelcontextprotocol/clientInfo"] == {"name": "meta-client", "version": "9"}
    assert "io.modelcontextprotocol/logLevel" not in requests[1]["params"]["_meta"]
    assert requests[-1]["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "debug"
    ids = [m["id"] for m in requests]
    assert len(set(ids)) == len(ids)  # mrtr.mdx: the retry is a new request with a new id


@pytest.mark.memory_only
async def test_client_meta_follows_level_and_own_keys() -> None:
    """basic/index.mdx §_meta: the per-request fields a client encodes once are sent again
    with the log level it has now (set, changed, cleared), and beside the caller's own
    ``_meta`` keys (the caller's win), with a progress token when one is asked for."""
    client_end, server_end = memory_pair()
    wire = Recorder(server_end)
    session = ServerSession(build(), wire)
    add = t.CallToolRequestParams(name="add", arguments={"a": 1, "b": 2})

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        async with Client(client_end, protocol_version="2026-07-28", cache=False) as c:
            await c.call_tool(add)
            c.log_level = "info"
            await c.call_tool(add)
            c.log_level = "error"
            await c.call_tool(add)
            c.log_level = None
            await c.call_tool(add)
            own = {"com.example/trace": "t1", INFO: {"name": "mine", "version": "1"}}
            await c.call_tool(
                t.CallToolRequestParams(name="add", arguments={"a": 1, "b": 2}, meta=own)
            )
            await c.call_tool(add, options=RequestOptions(on_progress=on_progress))
            await c.list_tools(t.PaginatedRequestParams(meta={"com.example/x": 1}))
        tg.cancel_scope.cancel()
    metas = [m["params"]["_meta"] for m in wire.requests()[1:]]
    level = "io.modelcontextprotocol/logLevel"
    assert [m.get(level) for m in metas[:4]] == [None, "info", "error", None]
    assert all(m[CAPABILITIES] == {} and m[PROTOCOL] == VERSION for m in metas[:4])
    assert metas[4]["com.example/trace"] == "t1" and metas[4][INFO]["name"] == "mine"
    assert metas[4][CAPABILITIES] == {} and metas[4][PROTOCOL] == VERSION
    assert metas[0][INFO] == {"name": "mcpbind", "version": "0.1.0"}
    assert metas[5][PROTOCOL] == VERSION and isinstance(metas[5]["progressToken"], int)
    assert metas[6]["com.example/x"] == 1 and metas[6][PROTOCOL] == VERSION
    assert add.meta is msgspec.UNSET  # the caller's params are left as they were


@pytest.mark.memory_only
async def test_bad_envelope_never_crashes() -> None:
    """basic/index.mdx §Requests: malformed stateless traffic gets an error, the connection
    stays usable."""
    async with raw("memory") as wire:
        await wire.transport.send(
            b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"cursor":7}}'
        )
        reply = await wire.response(5)
        assert reply["error"]["code"] == -32602
        await wire.transport.send(
            b'{"jsonrpc":"2.0","id":6,"method":"server/discover","params":[1]}'
        )
        reply = await wire.response(6)
        assert reply["error"]["code"] == -32602
        assert (await wire.result("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}))[
            "content"
        ][0]["text"] == "3"


async def test_cancellation_stops_a_stateless_request(transport: str) -> None:
    """transports/stdio.mdx §Cancellation and basic/patterns/cancellation.mdx: after
    notifications/cancelled the server sends nothing more for that request."""
    async with raw(transport) as wire:
        params = {"name": "slow", "arguments": {"seconds": 30}, "_meta": META}
        await wire.send(
            {"jsonrpc": "2.0", "id": "slow-1", "method": "tools/call", "params": params}
        )
        # Requests are taken in order: once this one is answered, slow-1 is running.
        before = await wire.result("tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}})
        assert before["content"][0]["text"] == "4"
        cancel = {"requestId": "slow-1", "reason": "user gave up"}
        await wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        after = await wire.result("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        assert after["content"][0]["text"] == "3"
        with anyio.move_on_after(0.3):
            extra = await wire.transport.receive()
            raise AssertionError(f"sent after cancellation: {extra!r}")
