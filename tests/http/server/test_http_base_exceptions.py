"""Issue 28 F18 over Streamable HTTP: a handler raising a ``BaseException`` that is not a
cancellation (``GeneratorExit``, ``StopIteration``, ``KeyboardInterrupt``, ``SystemExit``, a
self-raised ``CancelledError``, ...) is answered with an error, not a 500, and its id is
free again at once: sessions at rest and busy, sessionless, and 2026-07-28."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Client
from mcpbind.http import StreamableHTTPApp
from tests.faults.raising_server import KINDS, make_server

from ._support import LiveServer, headers, messages, sse_events
from .conftest import open_session

TOOLS = [f"raise_{kind}{suffix}" for kind in KINDS for suffix in ("", "_def")]


@pytest.fixture(scope="module")
def sessions() -> Iterator[LiveServer]:
    server = LiveServer(StreamableHTTPApp(make_server(), path="/mcp")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def sessionless() -> Iterator[LiveServer]:
    server = LiveServer(StreamableHTTPApp(make_server(), path="/mcp", sessionless=True)).start()
    try:
        yield server
    finally:
        server.stop()


def _answer(response: httpx2.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("application/json"):
        answer: dict[str, Any] = response.json()
        return answer
    return messages(list(sse_events(iter(response.text.splitlines()))))[-1]


def test_session_answers_and_frees_the_id(sessions: LiveServer) -> None:
    with httpx2.Client(timeout=10) as http:
        sid = open_session(http, sessions.url)
        for tool in TOOLS:
            for _ in range(2):  # the same id again: the first answer freed it
                call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool}}
                answer = _answer(http.post(sessions.url, json=call, headers=headers(sid)))
                assert answer["id"] == 7 and answer["result"]["isError"] is True, (tool, answer)


pytestmark = pytest.mark.anyio


async def _calls_fail(client: Client) -> None:
    for tool in TOOLS:
        with anyio.fail_after(10):
            result = await client.call(tool)
        assert result.is_error is True, tool
    assert (await client.call("add", {"a": 1, "b": 2})).is_error is not True


async def test_busy_session_answers(sessions: LiveServer) -> None:
    """A session with another request in flight (``slow``) answers the raising calls too."""
    client = Client(sessions.url, protocol_version=LATEST_HANDSHAKE)
    async with client, anyio.create_task_group() as tg:
        tg.start_soon(client.call, "slow", {"seconds": 1.0})
        await _calls_fail(client)


async def test_sessionless_answers(sessionless: LiveServer) -> None:
    async with Client(sessionless.url, protocol_version=LATEST_HANDSHAKE) as client:
        await _calls_fail(client)


async def test_2026_answers(sessions: LiveServer) -> None:
    async with Client(sessions.url, protocol_version=LATEST_STATELESS) as client:
        await _calls_fail(client)


def test_2026_raw_answers_are_200_with_the_same_id(sessions: LiveServer) -> None:
    with httpx2.Client(timeout=10) as http:
        for tool in TOOLS:
            for _ in range(2):
                call = {
                    "jsonrpc": "2.0",
                    "id": 7,
                    "method": "tools/call",
                    "params": {"name": tool, "_meta": _META},
                }
                extra = {"mcp-method": "tools/call", "mcp-name": tool}
                response = http.post(
                    sessions.url,
                    content=json.dumps(call),
                    headers=headers(None, LATEST_STATELESS, **extra),
                )
                answer = _answer(response)
                assert answer["id"] == 7 and answer["result"]["isError"] is True, (tool, answer)


_META = {
    "io.modelcontextprotocol/protocolVersion": LATEST_STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
