"""basic/patterns/subscriptions.mdx over Streamable HTTP (2026-07-28) and over the in-memory
connection: ``subscriptions/listen`` opens one long-lived POST response stream, acknowledged
first, every notification tagged with the subscription id, only the opted-in kinds; closing
the stream ends the subscription; the server ends it gracefully with the listen result."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Iterator, MutableMapping
from typing import Any

import anyio
import httpx2
import pytest

from mcpbind.http import StreamableHTTPApp
from mcpbind.server import ServerSession
from mcpbind.transports import memory_pair

from ._era_2026 import SUB_ID, LiveServer, body, live, make_server, std_headers, stream_messages

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live(sse_keepalive=0.2) as s:
        yield s


async def call(client: httpx2.AsyncClient, url: str, tool: str, **arguments: Any) -> None:
    message = body("tools/call", {"name": tool, "arguments": arguments}, rid=900)
    response = await client.post(url, json=message, headers=std_headers(message))
    assert response.status_code == 200, response.text


async def until(predicate: Any, timeout: float = 5.0) -> None:
    """Poll ``predicate`` (server-side state changed by another task) until it holds."""
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached in time")


async def listen(
    client: httpx2.AsyncClient, url: str, rid: int | str, notifications: dict[str, Any]
) -> AsyncGenerator[dict[str, Any]]:
    message = body("subscriptions/listen", {"notifications": notifications}, rid)
    async with client.stream("POST", url, json=message, headers=std_headers(message)) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        async for item in stream_messages(response):
            yield item


async def test_ack_then_tagged_list_changed(server: LiveServer) -> None:
    """§Acknowledgment: the first message is notifications/subscriptions/acknowledged with the
    agreed filter; §Receiving Notifications: list_changed arrives tagged with the listen
    request's id; §Cancellation: closing the stream ends the subscription on the server."""
    hub = server.app.per_request.hub
    async with httpx2.AsyncClient(timeout=10) as client:
        stream = listen(client, server.url, "sub-1", {"toolsListChanged": True, "bogus": True})
        ack = await anext(stream)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"][SUB_ID] == "sub-1"
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        await call(client, server.url, "add_tool", name="fresh_tool_1")
        changed = await anext(stream)
        assert changed == {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {SUB_ID: "sub-1"}},
        }
        await stream.aclose()
    await until(lambda: not hub.subscriptions)


async def test_filter_is_honoured(server: LiveServer) -> None:
    """§Opening a Stream: the server MUST NOT send notification types the client has not
    requested (prompts only: no tools list_changed), resources/updated only for the listed
    URIs; two concurrent subscriptions each get their own tag (§Multiple Concurrent)."""
    async with httpx2.AsyncClient(timeout=10) as client:
        prompts = listen(client, server.url, 7, {"promptsListChanged": True})
        resources = listen(client, server.url, 8, {"resourceSubscriptions": ["test://a"]})
        assert (await anext(prompts))["params"]["_meta"][SUB_ID] == 7
        ack = await anext(resources)
        assert ack["params"]["notifications"] == {"resourceSubscriptions": ["test://a"]}
        await call(client, server.url, "add_tool", name="fresh_tool_2")
        await call(client, server.url, "touch", uri="test://b")
        await call(client, server.url, "add_prompt", name="fresh_prompt")
        await call(client, server.url, "touch", uri="test://a")
        assert (await anext(prompts))["method"] == "notifications/prompts/list_changed"
        updated = await anext(resources)
        assert updated["method"] == "notifications/resources/updated"
        assert updated["params"] == {"_meta": {SUB_ID: 8}, "uri": "test://a"}
        await prompts.aclose()
        await resources.aclose()


async def test_listen_errors_are_plain_replies(server: LiveServer) -> None:
    """subscriptions.mdx with basic/index.mdx: a listen request without the required _meta is
    malformed (400, -32602) and opens nothing."""
    message = {"jsonrpc": "2.0", "id": 4, "method": "subscriptions/listen", "params": {}}
    hub = server.app.per_request.hub
    # An earlier test's stream on this shared server may still be closing: compare with the
    # subscriptions there were before this request, not with none.
    before = set(hub.subscriptions)
    async with httpx2.AsyncClient(timeout=10) as client:
        response = await client.post(server.url, json=message, headers=std_headers(message))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602
    assert set(hub.subscriptions) <= before  # this request opened nothing


async def test_keepalive_comments_on_idle_stream(server: LiveServer) -> None:
    """streamable-http.mdx §Receiving Messages (Note): an idle listen stream carries SSE
    comment lines as keep-alives."""
    message = body("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, 11)
    async with (
        httpx2.AsyncClient(timeout=10) as client,
        client.stream("POST", server.url, json=message, headers=std_headers(message)) as response,
    ):
        lines = response.aiter_lines()
        seen: list[str] = []
        with anyio.fail_after(5):
            async for line in lines:
                seen.append(line)
                if line.startswith(":"):
                    break
    assert any(line.startswith("data:") for line in seen)  # the acknowledgement came first


async def test_graceful_closure_over_http() -> None:
    """§Graceful Closure: on shutdown the server answers the listen request with a complete
    result tagged with the subscription id, then ends the stream."""
    app = StreamableHTTPApp(make_server(), path="/mcp")
    message = body("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, 5)
    raw = json.dumps(message).encode()
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in std_headers(message).items()]
        + [(b"host", b"127.0.0.1:8000"), (b"content-length", str(len(raw)).encode())],
        "server": ("127.0.0.1", 8000),
    }
    sent: list[MutableMapping[str, Any]] = []
    gone = asyncio.Event()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(event: MutableMapping[str, Any]) -> None:
        sent.append(event)

    task = asyncio.create_task(app(scope, receive, send))
    await until(lambda: len(sent) >= 2)
    await app.aclose()
    await asyncio.wait_for(task, 5)
    gone.set()
    chunks = b"".join(e.get("body", b"") for e in sent if e["type"] == "http.response.body")
    messages = [json.loads(x[5:]) for x in chunks.decode().splitlines() if x.startswith("data:")]
    assert messages[0]["method"] == "notifications/subscriptions/acknowledged"
    assert messages[-1] == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"resultType": "complete", "_meta": {SUB_ID: 5}},
    }
    assert sent[-1]["more_body"] is False
    assert not app.per_request.hub.subscriptions


async def test_listen_in_memory_and_cancel() -> None:
    """subscriptions.mdx on a single channel (stdio-like, in memory): acknowledgement and
    tagged notifications on the shared connection; notifications/cancelled naming the listen
    request ends it (§Cancellation); the server's graceful end sends the listen result."""
    server = make_server()
    client_end, server_end = memory_pair()
    session = ServerSession(server, server_end)

    async def request(rid: int, method: str, params: dict[str, Any]) -> None:
        await client_end.send(json.dumps(body(method, params, rid)).encode())

    async def next_message() -> dict[str, Any]:
        with anyio.fail_after(5):
            message: dict[str, Any] = json.loads(await client_end.receive())
            return message

    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        await request(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        ack = await next_message()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"][SUB_ID] == 1
        await request(2, "tools/call", {"name": "add_tool", "arguments": {"name": "mem_tool"}})
        seen = [await next_message(), await next_message()]
        changed = next(m for m in seen if m.get("method"))
        assert changed["params"]["_meta"][SUB_ID] == 1
        assert any(m.get("id") == 2 for m in seen)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        await client_end.send(json.dumps(cancel).encode())
        await until(lambda: session.hub is not None and not session.hub.subscriptions)
        # A second subscription ends gracefully when the server closes it.
        await request(3, "subscriptions/listen", {"notifications": {"promptsListChanged": True}})
        assert (await next_message())["params"]["_meta"][SUB_ID] == 3
        session.close_listeners()
        final = await next_message()
        assert final == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"resultType": "complete", "_meta": {SUB_ID: 3}},
        }
        await client_end.aclose()
        tg.cancel_scope.cancel()
