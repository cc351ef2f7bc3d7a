"""Raw 2026-07-28 requests over HTTP for the cluster tests: each answer with the worker that
wrote it (``x-test-worker``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

import httpx2 as httpx

from mcpbind.http.server.events import parse_event_id

VERSION = "2026-07-28"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "cluster-test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a response, JSON or SSE."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        found = []
        for event in response.text.split("\n\n"):
            data = "\n".join(
                line[5:].lstrip(" ") for line in event.split("\n") if line.startswith("data:")
            )
            if data.strip():
                found.append(json.loads(data))
        return found
    return [response.json()]


def call(
    http: httpx.Client, url: str, rid: int, name: str, params: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """``tools/call`` of tool ``name`` on the 2026-07-28 wire: (worker tag, its response)."""
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call"}
    body["params"] = {"name": name, **params, "_meta": META}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    response = http.post(url, json=body, headers=headers)
    assert response.status_code == 200, response.text
    (answer,) = [m for m in messages(response) if m.get("id") == rid]
    return response.headers.get("x-test-worker", ""), answer


HANDSHAKE = "2025-11-25"
SSE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
ADD = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
}
"""A handshake-era ``tools/call`` of the test worker's ``add`` tool."""


class Event(NamedTuple):
    id: str | None
    message: dict[str, Any] | None  # None: an event without data (the priming event)


def iter_events(response: httpx.Response) -> Iterator[Event]:
    """The SSE events of a streamed response as they arrive."""
    event_id: str | None = None
    data: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if event_id is not None or data:
                text = "\n".join(data)
                yield Event(event_id, json.loads(text) if text.strip() else None)
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))


def numbered(
    response: httpx.Response, limit: int | None = None
) -> tuple[str, list[tuple[int, dict[str, Any]]]]:
    """A streamed SSE response's messages with their event numbers, and its stream id (from
    the event ids, ``<stream>.<n>``); stops after ``limit`` messages, the connection left to
    drop there."""
    stream = ""
    got: list[tuple[int, dict[str, Any]]] = []
    for event in iter_events(response):
        if event.message is None:
            continue  # the priming event
        assert event.id is not None
        stream, n = parse_event_id(event.id) or ("", -1)
        got.append((n, event.message))
        if len(got) == limit:
            break
    return stream, got


def open_session(http: httpx.Client, url: str) -> str:
    """``initialize`` and ``notifications/initialized`` at 2025-11-25: the session id."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE,
            "capabilities": {"elicitation": {}, "sampling": {}},
            "clientInfo": {"name": "cluster-test", "version": "0"},
        },
    }
    response = http.post(url, json=init, headers=SSE)
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    headers = {**SSE, "mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert http.post(url, json=note, headers=headers).status_code == 202
    return session
