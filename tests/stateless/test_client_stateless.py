"""The client on 2026-07-28: results without or with unknown resultType (basic/index.mdx
§ResultType), request-scoped notifications (basic/patterns/progress.mdx,
server/utilities/logging.mdx), and the low-level request path."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers, McpError, RequestOptions
from mcpbind import types as t
from mcpbind.transports import Transport, TransportClosed, memory_pair

from .app import build
from .helpers import client

pytestmark = pytest.mark.anyio


async def test_progress_and_logs_reach_the_application(transport: str) -> None:
    """progress.mdx and logging.mdx (2026-07-28): progress for the request's token; log
    messages because the client set a per-request log level; both on the request's channel."""
    logs: list[Any] = []
    progress: list[tuple[float, float | None]] = []

    async def on_log(params: t.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total))

    handlers = ClientHandlers(logging=on_log)
    async with client(transport, protocol_version="auto", handlers=handlers, log_level="info") as c:
        result = await c.call_tool(
            t.CallToolRequestParams(name="chatty", arguments={"count": 3}),
            options=RequestOptions(on_progress=on_progress),
        )
        assert c.era == "stateless"
        await anyio.sleep(0.05)  # notifications precede the response; give the callbacks a turn
    assert not result.is_error
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert logs == ["step 1", "step 2", "step 3"]


@pytest.mark.memory_only
async def test_no_logs_without_a_level() -> None:
    """logging.mdx (2026-07-28): servers MUST NOT emit notifications/message for a request
    without io.modelcontextprotocol/logLevel."""
    logs: list[Any] = []

    async def on_log(params: t.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with Client(
        build(), protocol_version="2026-07-28", handlers=ClientHandlers(logging=on_log)
    ) as c:
        await c.call("chatty", {"count": 2})
    assert logs == []


@pytest.mark.memory_only
async def test_low_level_request_carries_meta() -> None:
    """basic/index.mdx §_meta: ``client.request`` (plain JSON) also sends the protocol fields."""
    server = build()

    @server.method("x/meta")
    async def echo_meta(params: Any, ctx: Any) -> dict[str, Any]:
        return {"version": params["_meta"]["io.modelcontextprotocol/protocolVersion"]}

    async with Client(server, protocol_version="2026-07-28") as c:
        result = await c.request("tools/list", {})
        custom = await c.request("x/meta", {"_meta": {"mine": 1}})
    assert result.result_type == "complete"
    assert result.tools[0].name == "add"
    assert custom["version"] == "2026-07-28" and custom["resultType"] == "complete"


async def _fake_server(transport: Transport, tools_result: dict[str, Any]) -> None:
    """Answers server/discover, then every tools/list with ``tools_result`` verbatim."""
    try:
        await _answer_all(transport, tools_result)
    except TransportClosed:
        pass
    finally:
        await transport.aclose()


async def _answer_all(transport: Transport, tools_result: dict[str, Any]) -> None:
    while True:
        message = json.loads(await transport.receive())
        if "id" not in message:
            continue
        if message["method"] == "server/discover":
            result: dict[str, Any] = {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
            }
        else:
            result = tools_result
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        await transport.send(json.dumps(reply).encode())


@pytest.mark.memory_only
@pytest.mark.parametrize(
    ("result", "ok"),
    [
        ({"tools": []}, True),
        ({"tools": [], "resultType": "complete"}, True),
        ({"tools": [], "resultType": "task"}, False),
    ],
    ids=["absent", "complete", "unknown"],
)
async def test_result_type(result: dict[str, Any], ok: bool) -> None:
    """basic/index.mdx §ResultType: absent means complete; an unrecognized value is invalid."""
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_fake_server, server_end, result)
        async with Client(client_end, protocol_version="2026-07-28", cache=False) as c:
            if ok:
                assert (await c.list_tools()).tools == []
            else:
                with pytest.raises(McpError, match="resultType"):
                    await c.list_tools()


async def _serve(
    transport: Transport, reply_to: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    """A scripted peer: each request (notifications are skipped) answered with the JSON-RPC
    reply ``reply_to`` makes of it, until the client closes."""
    try:
        while True:
            message = json.loads(await transport.receive())
            if "id" in message:
                await transport.send(json.dumps(reply_to(message)).encode())
    except TransportClosed:
        pass
    finally:
        await transport.aclose()


async def _scripted_server(transport: Transport, answers: list[dict[str, Any]]) -> None:
    """Answers server/discover, then each other request with the next of ``answers``."""
    pending = iter(answers)

    def reply_to(message: dict[str, Any]) -> dict[str, Any]:
        if message["method"] == "server/discover":
            result = {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
            }
        else:
            result = next(pending)
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    await _serve(transport, reply_to)


@pytest.mark.memory_only
async def test_result_type_on_later_calls_of_a_method() -> None:
    """§ResultType holds on every call of a method, also once its calls take the short way
    (after its first): absent means complete, an unrecognized value is invalid, and a
    failed call leaves the next one as it was."""
    text = [{"type": "text", "text": "hi"}]
    answers: list[dict[str, Any]] = [
        {"content": text, "resultType": "complete"},
        {"content": text},
        {"content": text, "isError": True, "resultType": "complete"},
        {"content": text, "resultType": "task"},
        {"content": text, "resultType": "complete"},
    ]
    client_end, server_end = memory_pair()
    params = t.CallToolRequestParams(name="echo")
    async with anyio.create_task_group() as tg:
        tg.start_soon(_scripted_server, server_end, answers)
        async with Client(client_end, protocol_version="2026-07-28") as c:
            first = await c.call_tool(params)
            absent = await c.call_tool(params)
            failed = await c.call_tool(params)
            with pytest.raises(McpError, match="Unrecognized resultType 'task' for tools/call"):
                await c.call_tool(params)
            last = await c.call_tool(params)
    assert (first.result_type, first.content) == ("complete", [t.TextContent(text="hi")])
    assert absent.result_type is t.UNSET and absent.content == [t.TextContent(text="hi")]
    assert failed.is_error is True
    assert last.result_type == "complete"
    assert params.meta is t.UNSET  # the caller's params never carry the sent _meta


@pytest.mark.memory_only
async def test_handshake_only_methods_fail_clearly() -> None:
    """changelog.mdx (Major change 4): resources/subscribe is gone in 2026-07-28; the client
    says so instead of sending it."""
    async with Client(build(), protocol_version="2026-07-28") as c:
        with pytest.raises(McpError, match="not part of protocol 2026-07-28"):
            await c.subscribe(t.SubscribeRequestParams(uri="mem://greeting"))
        # A method is checked once per connection only once it passed: a refused one is
        # refused again, and a method that passed goes on being sent.
        await c.list_tools()
        with pytest.raises(McpError, match="not part of protocol 2026-07-28"):
            await c.subscribe(t.SubscribeRequestParams(uri="mem://greeting"))
        assert (await c.list_tools()).tools
        assert c._pipeline is not None
        assert "resources/subscribe" not in c._pipeline.sendable
        assert "tools/list" in c._pipeline.sendable


async def _version_picky_server(transport: Transport) -> None:
    """Refuses 2026-07-28 with -32022 (listing only 2025-11-25), then serves initialize."""

    def reply_to(message: dict[str, Any]) -> dict[str, Any]:
        if message["method"] == "server/discover":
            error = {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"},
            }
            return {"jsonrpc": "2.0", "id": message["id"], "error": error}
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "picky", "version": "1"},
        }
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    await _serve(transport, reply_to)


@pytest.mark.memory_only
@pytest.mark.parametrize("version", ["auto", "2026-07-28"])
async def test_unsupported_version_from_discover(version: str) -> None:
    """transports/stdio.mdx §Backward Compatibility and versioning.mdx §Protocol Version
    Negotiation: -32022 listing no modern version we speak: ``auto`` uses the handshake
    version it lists; a forced 2026-07-28 fails with the server's list."""
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_version_picky_server, server_end)
        if version == "auto":
            async with Client(client_end, protocol_version=version) as c:
                assert (c.era, c.protocol_version) == ("handshake", "2025-11-25")
        else:
            with pytest.raises(McpError) as caught:
                async with Client(client_end, protocol_version=version):
                    pass
            assert caught.value.code == -32022
            assert caught.value.data["supported"] == ["2025-11-25"]


def _refusing_server(refuse: set[str], seen: list[tuple[str, str]]) -> Callable[..., Any]:
    """Refuses the first request of each method in ``refuse`` with -32022 listing 2026-07-28
    (the version just sent: the conformance suite's request-metadata scenario does this),
    refuses every one with ``always`` in ``refuse``, and answers the rest; ``seen`` records
    (method, _meta protocolVersion) of each request."""
    refused: set[str] = set()

    def reply_to(message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        meta = (message.get("params") or {}).get("_meta") or {}
        seen.append((method, meta.get("io.modelcontextprotocol/protocolVersion")))
        if method in refuse and (method not in refused or "always" in refuse):
            refused.add(method)
            error = {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"},
            }
            return {"jsonrpc": "2.0", "id": message["id"], "error": error}
        if method == "server/discover":
            result: dict[str, Any] = {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
            }
        else:
            result = {"resultType": "complete", "tools": []}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    return reply_to


@pytest.mark.memory_only
@pytest.mark.parametrize("version", ["auto", "2026-07-28"])
@pytest.mark.parametrize("refused", ["server/discover", "tools/list"])
async def test_unsupported_version_is_retried_with_a_listed_version(
    version: str, refused: str
) -> None:
    """versioning.mdx §Protocol Version Negotiation: on -32022 the client SHOULD select a
    mutually supported version from ``supported`` and retry the request; on the first request
    (the discover probe) and on a later one, even when the list names the version just sent
    (the conformance suite's request-metadata, check sep-2575-client-retry-supported-version).
    """
    seen: list[tuple[str, str]] = []
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_serve, server_end, _refusing_server({refused}, seen))
        async with Client(client_end, protocol_version=version) as c:
            assert (c.era, c.protocol_version) == ("stateless", "2026-07-28")
            assert (await c.list_tools()).tools == []
    assert seen.count((refused, "2026-07-28")) == 2  # refused once, then retried
    assert [m for m, _ in seen] == (
        ["server/discover", "server/discover", "tools/list"]
        if refused == "server/discover"
        else ["server/discover", "tools/list", "tools/list"]
    )


@pytest.mark.memory_only
async def test_unsupported_version_is_retried_once_only() -> None:
    """A server refusing every try with -32022 gets one retry: the error then reaches the
    caller (with the server's list), never a retry loop."""
    seen: list[tuple[str, str]] = []
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_serve, server_end, _refusing_server({"tools/list", "always"}, seen))
        async with Client(client_end, protocol_version="2026-07-28") as c:
            with pytest.raises(McpError) as caught:
                await c.list_tools()
    assert caught.value.code == -32022
    assert caught.value.data["supported"] == ["2026-07-28"]
    assert [m for m, _ in seen] == ["server/discover", "tools/list", "tools/list"]


@pytest.mark.memory_only
async def test_unsupported_version_is_retried_on_every_request_path() -> None:
    """The same retry on the other request paths of the era: ``Client.request`` (plain
    JSON) and the ``subscriptions/listen`` request (re-sent with the listed version, then
    acknowledged)."""
    seen: list[tuple[str, str]] = []
    reply_to = _refusing_server({"x/custom", "subscriptions/listen"}, seen)
    client_end, server_end = memory_pair()

    async def server() -> None:
        try:
            while True:
                message = json.loads(await client_end_peer.receive())
                if "id" not in message:
                    continue
                reply = reply_to(message)
                if message["method"] == "subscriptions/listen" and "error" not in reply:
                    ack = {
                        "jsonrpc": "2.0",
                        "method": "notifications/subscriptions/acknowledged",
                        "params": {
                            "_meta": {"io.modelcontextprotocol/subscriptionId": message["id"]},
                            "notifications": {"toolsListChanged": True},
                        },
                    }
                    await client_end_peer.send(json.dumps(ack).encode())
                    continue  # the listen request stays open
                await client_end_peer.send(json.dumps(reply).encode())
        except TransportClosed:
            pass
        finally:
            await client_end_peer.aclose()

    client_end_peer = server_end
    async with anyio.create_task_group() as tg:
        tg.start_soon(server)
        async with Client(client_end, protocol_version="2026-07-28") as c:
            result = await c.request("x/custom", {})
            assert result == {"resultType": "complete", "tools": []}
            sub = await c.listen(tools_list_changed=True)
            assert sub.acknowledged is not None and sub.acknowledged.tools_list_changed
            await sub.close()
    methods = [m for m, _ in seen]
    assert methods.count("x/custom") == 2
    assert methods.count("subscriptions/listen") == 2
    assert all(v == "2026-07-28" for _, v in seen)
