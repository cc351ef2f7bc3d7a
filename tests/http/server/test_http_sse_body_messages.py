"""How a POST's SSE stream is written: every event queued by the time the writer looks goes
out in one ASGI body message, and the last one also ends the stream, so a response made at
once (an ``async def`` tool that does not wait) costs one body message after the start, as a
JSON response does; events a tool emits while it runs still leave as they come, in order.

Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP, "Sending Messages to the Server"
(the SSE stream carries the request's messages, then its response, then closes).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpbind import Context, Server
from mcpbind.http import StreamableHTTPApp

from ._raw import asgi_messages
from ._support import LATEST, init_body, sse_events

pytestmark = pytest.mark.anyio

HEADERS = [
    ("host", "127.0.0.1:8000"),
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
]


GATE = asyncio.Event()


def _server() -> Server:
    server = Server("sse-writes-test", "1.0.0")

    @server.tool()
    async def now(text: str) -> str:
        return text

    @server.tool()
    def blocking(text: str) -> str:
        return text.upper()

    @server.tool()
    async def gated(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        await GATE.wait()
        return "opened"

    @server.tool()
    async def chatty(n: int, ctx: Context) -> str:
        for i in range(1, n + 1):
            await ctx.report_progress(i, n)
            await asyncio.sleep(0.01)
        return f"sent {n}"

    return server


async def _post(
    app: StreamableHTTPApp, message: dict[str, Any], extra: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    """One POST through the app; the ASGI messages it sent."""
    return await asgi_messages(app, "POST", HEADERS + extra, [json.dumps(message).encode()])


@pytest.fixture
async def app() -> AsyncIterator[StreamableHTTPApp]:
    served = StreamableHTTPApp(_server())
    try:
        yield served
    finally:
        await served.aclose()


async def _session(app: StreamableHTTPApp) -> list[tuple[str, str]]:
    sent = await _post(app, init_body(), [])
    session = dict(sent[0]["headers"])[b"mcp-session-id"].decode()
    extra = [("mcp-session-id", session), ("mcp-protocol-version", LATEST)]
    await _post(app, {"jsonrpc": "2.0", "method": "notifications/initialized"}, extra)
    return extra


def _call(rid: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def _events(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE response, after checking it ends exactly once."""
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    bodies = sent[1:]
    assert [m.get("more_body", False) for m in bodies] == [True] * (len(bodies) - 1) + [False]
    text = b"".join(m["body"] for m in bodies).decode()
    return [json.loads(e["data"]) for e in sse_events(iter(text.split("\n"))) if "data" in e]


async def test_a_response_made_at_once_is_one_body_message(app: StreamableHTTPApp) -> None:
    extra = await _session(app)
    await _post(app, _call(2, "now", {"text": "first"}), extra)  # the session is at rest
    sent = await _post(app, _call(3, "now", {"text": "hi"}), extra)
    assert len(sent) == 2  # the start, then the event and the end of the stream together
    (reply,) = _events(sent)
    assert reply["id"] == 3 and reply["result"]["content"][0]["text"] == "hi"


async def test_a_def_tool_answer_ends_the_stream_in_the_message_that_carries_it(
    app: StreamableHTTPApp,
) -> None:
    extra = await _session(app)
    sent = await _post(app, _call(2, "blocking", {"text": "hi"}), extra)
    assert len(sent) <= 3  # start, the opening (written while the tool runs), answer + end
    (reply,) = _events(sent)
    assert reply["result"]["content"][0]["text"] == "HI"


async def test_events_emitted_while_a_tool_runs_leave_in_order_before_its_answer(
    app: StreamableHTTPApp,
) -> None:
    extra = await _session(app)
    call = _call(2, "chatty", {"n": 3})
    call["params"]["_meta"] = {"progressToken": "p"}
    sent = await _post(app, call, extra)
    events = _events(sent)
    progress = [e["params"]["progress"] for e in events if e.get("method")]
    assert progress == [1, 2, 3]
    assert events[-1]["id"] == 2 and events[-1]["result"]["content"][0]["text"] == "sent 3"
    assert len(sent) > 2  # the progress went out while the tool ran, not with its answer


async def test_an_event_leaves_while_its_tool_still_runs(app: StreamableHTTPApp) -> None:
    """The request is answered in its POST's task, yet what the tool emits is written at
    once: the progress is on the wire while the tool still waits."""
    extra = await _session(app)
    await _post(app, _call(2, "now", {"text": "first"}), extra)  # the session is at rest
    GATE.clear()
    call = _call(3, "gated", {})
    call["params"]["_meta"] = {"progressToken": "g"}
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": json.dumps(call).encode(), "more_body": False}

    headers = [(k.encode(), v.encode()) for k, v in HEADERS + extra]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    task = asyncio.create_task(app(scope, receive, send))
    for _ in range(500):
        if any(b"notifications/progress" in m.get("body", b"") for m in sent):
            break
        await asyncio.sleep(0.01)
    assert any(b"notifications/progress" in m.get("body", b"") for m in sent), sent
    assert not task.done()  # the tool is still waiting
    GATE.set()
    await task
    events = _events(sent)
    assert events[0]["method"] == "notifications/progress"
    assert events[-1]["id"] == 3 and events[-1]["result"]["content"][0]["text"] == "opened"
