"""A scripted Streamable HTTP server (test-only, raw ASGI) for the client's fault paths.

Tools choose the server's behaviour: ``json`` and ``sse`` answer normally, ``hang`` never
answers, ``http500``/``http503`` answer with HTTP errors, ``drop`` cuts its SSE stream
abruptly after two events (the rest is replayed to ``GET`` + ``Last-Event-ID``),
``poll`` ends its stream gracefully after a priming event with ``retry``, ``headers``
reports the request headers it saw, ``die`` ends the server process before answering. A client sending ``x-no-get-stream: 1`` is refused
the GET stream (405); one sending ``x-get-empty: 1`` gets GET streams that end at once
with no event (the client backs off between them); one sending ``x-get-retry0: 1`` gets GET
streams of a priming event with ``retry: 0`` that end at once. ``poll0`` is ``poll`` with
``retry: 0`` whose first three resumptions bring only a priming event. ``POST /admin/expire`` forgets every session (the
next request gets 404); ``GET /admin/log`` returns what the server saw.
``/legacy-evil`` is a 2024-11-05 stream whose endpoint is on another origin; ``/legacy`` is
a minimal 2024-11-05 HTTP+SSE server (its messages are POSTed to ``/legacy-messages``).
"""

from __future__ import annotations

import itertools
import json
import os
import time
from typing import Any

import anyio
from support.live_server import answer_lifespan

Scope = dict[str, Any]

sessions: set[str] = set()
log: list[dict[str, Any]] = []
streams: dict[str, list[tuple[str, bytes]]] = {}  # stream name -> [(event id, data)]
empty_resumes: dict[str, int] = {}  # stream name -> resumptions left that bring nothing
_ids = itertools.count(1)


async def app(scope: Scope, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await answer_lifespan(receive, send)
        return
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    method, path = scope["method"], scope["path"]
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    entry: dict[str, Any] = {
        "http": method,
        "path": path,
        "headers": headers,
        "t": time.monotonic(),  # the system-wide clock: comparable with the test's
    }
    if body:
        try:
            entry["rpc"] = json.loads(body).get("method")
        except ValueError:
            entry["rpc"] = None
    if not path.startswith("/admin"):
        log.append(entry)
    if path == "/admin/log":
        await _send(send, 200, "application/json", json.dumps(log).encode())
    elif path == "/admin/expire":
        sessions.clear()
        await _send(send, 200, "text/plain", b"ok")
    elif path in ("/legacy", "/legacy-evil") and method != "GET":
        await _send(send, 405, "text/plain", b"")  # not Streamable HTTP: the client falls back
    elif path == "/legacy":
        await _legacy_stream(send)
    elif path == "/legacy-messages":
        await _legacy_message(send, scope["query_string"].decode(), json.loads(body))
    elif path == "/legacy-evil" and method != "GET":
        await _send(send, 405, "text/plain", b"")
    elif path == "/legacy-evil":
        await _start_sse(send, {})
        await _event(send, b"event: endpoint\ndata: http://evil.example.com/messages\n\n")
        await anyio.sleep_forever()
    elif method == "POST":
        await _post(send, headers, json.loads(body))
    elif method == "GET":
        await _get(send, headers)
    elif method == "DELETE":
        sessions.discard(headers.get("mcp-session-id", ""))
        await _send(send, 200, "text/plain", b"")
    else:
        await _send(send, 405, "text/plain", b"")


async def _send(
    send: Any, status: int, ctype: str, body: bytes, extra: dict[str, str] | None = None
) -> None:
    headers = [(b"content-type", ctype.encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _start_sse(send: Any, extra: dict[str, str]) -> None:
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    headers += [(k.encode(), v.encode()) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def _event(send: Any, raw: bytes) -> None:
    await send({"type": "http.response.body", "body": raw, "more_body": True})


def _result(rid: Any, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


def _text(rid: Any, text: str) -> bytes:
    return _result(rid, {"content": [{"type": "text", "text": text}]})


def _note(text: str) -> bytes:
    params = {"level": "info", "data": text}
    return json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
    ).encode()


async def _post(send: Any, headers: dict[str, str], msg: dict[str, Any]) -> None:
    if msg.get("method") == "initialize":
        new_session = f"s-{next(_ids)}"
        sessions.add(new_session)
        version = msg["params"]["protocolVersion"]
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "fault", "version": "1"},
        }
        body = _result(msg["id"], result)
        await _send(send, 200, "application/json", body, {"mcp-session-id": new_session})
        return
    session = headers.get("mcp-session-id")
    if session is None:
        await _send(send, 400, "text/plain", b"missing session")
        return
    if session not in sessions:
        await _send(send, 404, "text/plain", b"unknown session")
        return
    if "method" not in msg or "id" not in msg:
        await _send(send, 202, "text/plain", b"")
        return
    rid = msg["id"]
    if msg["method"] == "tools/list":
        tools = [{"name": n, "inputSchema": {"type": "object"}} for n in TOOLS]
        await _send(send, 200, "application/json", _result(rid, {"tools": tools}))
        return
    if msg["method"] != "tools/call":
        await _send(send, 200, "application/json", _result(rid, {}))
        return
    await TOOLS[msg["params"]["name"]](send, rid, headers)


async def _json(send: Any, rid: Any, headers: dict[str, str]) -> None:
    await _send(send, 200, "application/json", _text(rid, "json"))


async def _sse(send: Any, rid: Any, headers: dict[str, str]) -> None:
    await _start_sse(send, {})
    await _event(send, b"data: " + _note("progress-note") + b"\n\n")
    await _event(send, b"event: message\ndata: " + _text(rid, "sse") + b"\n\n")
    await send({"type": "http.response.body", "body": b""})


async def _hang(send: Any, rid: Any, headers: dict[str, str]) -> None:
    await _start_sse(send, {})
    await _event(send, b": waiting forever\n\n")
    await anyio.sleep_forever()


async def _http500(send: Any, rid: Any, headers: dict[str, str]) -> None:
    await _send(send, 500, "text/plain", b"boom")


async def _http503(send: Any, rid: Any, headers: dict[str, str]) -> None:
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "overloaded"}}
    await _send(send, 503, "application/json", json.dumps(error).encode())


async def _drop(send: Any, rid: Any, headers: dict[str, str]) -> None:
    name = f"drop{next(_ids)}"
    events = [(f"{name}-{i}", _note(f"event-{i}")) for i in (1, 2, 3)]
    events.append((f"{name}-4", _text(rid, "dropped and resumed")))
    streams[name] = events
    await _start_sse(send, {})
    for eid, data in events[:2]:
        await _event(send, b"id: " + eid.encode() + b"\nretry: 50\ndata: " + data + b"\n\n")
    raise RuntimeError("connection cut on purpose")  # uvicorn drops the connection


async def _poll(send: Any, rid: Any, headers: dict[str, str]) -> None:
    name = f"poll{next(_ids)}"
    streams[name] = [(f"{name}-1", _text(rid, "polled"))]
    await _start_sse(send, {})
    await _event(send, f"id: {name}-0\nretry: 300\ndata:\n\n".encode())
    await send({"type": "http.response.body", "body": b""})


async def _poll0(send: Any, rid: Any, headers: dict[str, str]) -> None:
    name = f"poll0{next(_ids)}"
    streams[name] = [(f"{name}-1", _text(rid, "polled"))]
    empty_resumes[name] = 3
    await _start_sse(send, {})
    await _event(send, f"id: {name}-0\nretry: 0\ndata:\n\n".encode())
    await send({"type": "http.response.body", "body": b""})


async def _die(send: Any, rid: Any, headers: dict[str, str]) -> None:
    os._exit(1)  # the process ends with the request read and no response headers sent


async def _headers(send: Any, rid: Any, headers: dict[str, str]) -> None:
    await _send(send, 200, "application/json", _text(rid, json.dumps(headers)))


TOOLS = {
    "json": _json,
    "sse": _sse,
    "hang": _hang,
    "http500": _http500,
    "http503": _http503,
    "drop": _drop,
    "poll": _poll,
    "poll0": _poll0,
    "headers": _headers,
    "die": _die,
}


async def _get(send: Any, headers: dict[str, str]) -> None:
    last = headers.get("last-event-id")
    if headers.get("x-get-retry0") == "1":
        await _start_sse(send, {})
        await _event(send, b"id: z-0\nretry: 0\ndata:\n\n")
        await send({"type": "http.response.body", "body": b""})
        return
    if last and last.startswith("g-"):  # the standalone stream, polled
        await _start_sse(send, {})
        if last == "g-1":
            await _event(send, b"id: g-2\ndata: " + _note("again from GET") + b"\n\n")
        await anyio.sleep_forever()
    if last:
        name, _, _ = last.rpartition("-")
        if empty_resumes.get(name):
            empty_resumes[name] -= 1
            await _start_sse(send, {})
            await _event(send, f"id: {last}\ndata:\n\n".encode())
            await send({"type": "http.response.body", "body": b""})
            return
        events = streams.get(name, [])
        ids = [eid for eid, _ in events]
        start = ids.index(last) + 1 if last in ids else 0  # a priming id: from the start
        await _start_sse(send, {})
        for eid, data in events[start:]:
            await _event(send, b"id: " + eid.encode() + b"\ndata: " + data + b"\n\n")
        await send({"type": "http.response.body", "body": b""})
        return
    if headers.get("x-get-empty") == "1":
        await _start_sse(send, {})
        await send({"type": "http.response.body", "body": b""})
        return
    no_get = headers.get("x-no-get-stream") == "1"
    if no_get or headers.get("mcp-session-id") not in sessions:
        await _send(send, 405, "text/plain", b"")
        return
    await _start_sse(send, {})
    await _event(send, b"id: g-1\nretry: 100\ndata: " + _note("hello from GET") + b"\n\n")
    await send({"type": "http.response.body", "body": b""})  # poll: reconnect after retry


legacy_outboxes: dict[str, Any] = {}


async def _legacy_stream(send: Any) -> None:
    """2024-11-05 §HTTP with SSE: an ``endpoint`` event, then the answers as ``message``s."""
    name = f"legacy-{next(_ids)}"
    writer, reader = anyio.create_memory_object_stream[bytes](100)
    legacy_outboxes[name] = writer
    await _start_sse(send, {})
    await _event(send, f"event: endpoint\ndata: /legacy-messages?{name}\n\n".encode())
    async with reader:
        async for data in reader:
            await _event(send, b"event: message\ndata: " + data + b"\n\n")


async def _legacy_message(send: Any, name: str, msg: dict[str, Any]) -> None:
    await _send(send, 202, "text/plain", b"")
    if "id" not in msg or "method" not in msg:
        return
    if msg["method"] == "initialize":
        result: Any = {
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fault-legacy", "version": "1"},
        }
    elif msg["method"] == "tools/list":
        result = {"tools": [{"name": "json", "inputSchema": {"type": "object"}}]}
    else:
        result = {"content": [{"type": "text", "text": "legacy"}]}
    await legacy_outboxes[name].send(_result(msg["id"], result))
