"""The sessionless 2025 mode (``StreamableHTTPApp(sessionless=True)``) answers each POST on its
own, through the same ``answer`` as a 2026-07-28 request (issue 11): what one POST leaves
behind must not reach another, and POSTs that run at once are answered independently.

Spec: basic/transports.mdx, "Session Management" (a server MAY assign no session id: each
request is then served on its own). Driven through the app's real ASGI interface.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpbind import Context, Server
from mcpbind.http import StreamableHTTPApp

from ._raw import asgi_call

pytestmark = pytest.mark.anyio

VERSION = "2025-11-25"


def _server(gate: asyncio.Event | None = None) -> Server:
    server = Server("sessionless", version="1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool()
    def remember(text: str, ctx: Context) -> str:
        """Keep ``text`` in the session's state; return what was kept before."""
        before = ctx.session_state.get("kept", "")
        ctx.session_state["kept"] = text
        return str(before)

    @server.tool()
    async def wait_echo(text: str) -> str:
        """Echo once the gate opens."""
        if gate is not None:
            await gate.wait()
        return text

    return server


async def _post(app: StreamableHTTPApp, message: dict[str, Any]) -> dict[str, Any]:
    headers = [
        ("host", "127.0.0.1:8000"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", VERSION),
    ]
    status, got, body = await asgi_call(app, headers=headers, chunks=[json.dumps(message).encode()])
    assert status == 200 and "mcp-session-id" not in got, (status, got, body)
    reply: dict[str, Any] = json.loads(body)
    return reply


def _call(rid: int, name: str, text: str) -> dict[str, Any]:
    params = {"name": name, "arguments": {"text": text}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def _text(reply: dict[str, Any]) -> str:
    text: str = reply["result"]["content"][0]["text"]
    return text


async def test_sequential_posts_each_get_their_answer_and_leave_nothing() -> None:
    app = StreamableHTTPApp(_server(), sessionless=True, json_response=True, path="/mcp")
    try:
        for n in range(5):
            assert _text(await _post(app, _call(1, "echo", f"t{n}"))) == f"t{n}"
        assert app.sessions == {}
    finally:
        await app.aclose()


async def test_session_state_set_in_one_post_does_not_reach_the_next() -> None:
    app = StreamableHTTPApp(_server(), sessionless=True, json_response=True, path="/mcp")
    try:
        assert _text(await _post(app, _call(7, "remember", "first"))) == ""
        # The next POST, which may be another client's, starts with an empty state.
        assert _text(await _post(app, _call(8, "remember", "second"))) == ""
    finally:
        await app.aclose()


async def test_logging_set_level_is_refused_so_no_level_can_reach_the_next_post() -> None:
    app = StreamableHTTPApp(_server(), sessionless=True, json_response=True, path="/mcp")
    try:
        level = {"jsonrpc": "2.0", "id": 7, "method": "logging/setLevel"}
        reply = await _post(app, {**level, "params": {"level": "debug"}})
        assert reply["error"]["code"] == -32601  # sessionless: nothing could deliver logs
        assert _text(await _post(app, _call(8, "echo", "after"))) == "after"
    finally:
        await app.aclose()


async def test_concurrent_posts_with_the_same_id_are_answered_independently() -> None:
    gate = asyncio.Event()
    app = StreamableHTTPApp(_server(gate), sessionless=True, json_response=True, path="/mcp")
    try:
        first = asyncio.create_task(_post(app, _call(1, "wait_echo", "one")))
        second = asyncio.create_task(_post(app, _call(1, "wait_echo", "two")))
        await asyncio.sleep(0.05)
        assert not first.done() and not second.done()
        gate.set()
        assert (_text(await first), _text(await second)) == ("one", "two")
    finally:
        await app.aclose()
