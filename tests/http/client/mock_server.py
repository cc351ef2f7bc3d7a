"""A scripted 2026-07-28 Streamable HTTP server (raw ASGI) that records what the client sent.

Kept for what a real server will not produce: a tool with an invalid ``x-mcp-header`` (the
official SDK refuses to define one), a listing whose annotation changes after a
HeaderMismatch, a result without ``resultType``, a response stream broken mid-call, a
server of 2026-07-28 only, a ``tools/list_changed`` sent right after the acknowledgment.
What a real server does (headers and ``_meta``, ``Mcp-Param-*`` mirroring, ``ttlMs``, an
input round with ``requestState``) is tested against the official Python SDK's server too
(official_2026_server.py, the ``served`` fixture).

It answers ``server/discover``, ``tools/list`` (``x-mcp-header`` tools, one invalid; a
``ttlMs``), ``resources/list`` (no ``ttlMs``), ``tools/call`` for the scripted tools below and
``subscriptions/listen`` (acknowledgment, then one ``tools/list_changed``, then open until the
client closes it; with ``x-listen-break: 1`` the connection drops right after the
acknowledgment). ``GET /admin/log`` returns every request with its headers; ``POST
/admin/clear`` empties it.

Tools: ``region`` (echoes its ``Mcp-Param-*`` headers), ``bad`` (``x-mcp-header`` on an
array: invalid), ``ask`` (one MRTR round with ``requestState``), ``flaky`` (the first call per
``key`` breaks its response stream), ``legacy`` (a result without ``resultType``), ``strict``
(requires ``Mcp-Param-Region``; its listing gains the annotation only after the first
mismatch, as if the server was updated).
"""

from __future__ import annotations

import json
import time
from typing import Any

from support.live_server import answer_lifespan

Scope = dict[str, Any]

LOG: list[dict[str, Any]] = []
FLAKY_SEEN: set[str] = set()
STATE = {"strict_annotated": False}
V = "2026-07-28"
META = {"io.modelcontextprotocol/serverInfo": {"name": "mock-2026", "version": "1.0"}}


def _tools() -> list[dict[str, Any]]:
    strict_region: dict[str, Any] = {"type": "string"}
    if STATE["strict_annotated"]:
        strict_region["x-mcp-header"] = "Region"
    obj = "object"
    return [
        {
            "name": "region",
            "inputSchema": {
                "type": obj,
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "opts": {
                        "type": obj,
                        "properties": {"level": {"type": "integer", "x-mcp-header": "Level"}},
                    },
                    "flag": {"type": "boolean", "x-mcp-header": "Flag"},
                    "query": {"type": "string"},
                },
            },
        },
        {
            "name": "bad",
            "inputSchema": {
                "type": obj,
                "properties": {"items": {"type": "array", "x-mcp-header": "Items"}},
            },
        },
        {"name": "ask", "inputSchema": {"type": obj}},
        {"name": "flaky", "inputSchema": {"type": obj}},
        {"name": "legacy", "inputSchema": {"type": obj}},
        {"name": "strict", "inputSchema": {"type": obj, "properties": {"region": strict_region}}},
    ]


def _text(text: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": text}]}


def _call(params: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]] | None:
    """(HTTP status, result or {"error": ...}); ``None``: break the stream."""
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "region":
        mirrored = {k: v for k, v in sorted(headers.items()) if k.startswith("mcp-param-")}
        return 200, _text(json.dumps(mirrored))
    if name == "ask":
        responses = params.get("inputResponses")
        if not responses:
            elicit = {
                "method": "elicitation/create",
                "params": {
                    "message": "Your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                    },
                },
            }
            return 200, {
                "resultType": "input_required",
                "inputRequests": {"who": elicit},
                "requestState": "opaque-state-1",
            }
        answer = responses.get("who", {})
        state = params.get("requestState")
        return 200, _text(f"hello {answer.get('content', {}).get('name')} ({state})")
    if name == "flaky":
        key = str(args.get("key"))
        if key not in FLAKY_SEEN:
            FLAKY_SEEN.add(key)
            return None
        return 200, _text(f"flaky {key} ok")
    if name == "legacy":
        return 200, {"content": [{"type": "text", "text": "no resultType"}]}
    if name == "strict":
        if headers.get("mcp-param-region") != args.get("region"):
            STATE["strict_annotated"] = True
            return 400, {"error": {"code": -32020, "message": "Mcp-Param-Region missing"}}
        return 200, _text("strict ok")
    return 200, {"error": {"code": -32602, "message": f"Unknown tool: {name}"}}


def _answer(method: str, params: dict[str, Any], headers: dict[str, str]) -> Any:
    if method == "server/discover":
        return 200, {
            "resultType": "complete",
            "supportedVersions": [V],
            "capabilities": {"tools": {"listChanged": True}, "resources": {}},
            "_meta": META,
        }
    if method == "tools/list":
        return 200, {
            "resultType": "complete",
            "tools": _tools(),
            "ttlMs": 60_000,
            "cacheScope": "private",
        }
    if method == "resources/list":
        return 200, {"resultType": "complete", "resources": [], "ttlMs": 0, "cacheScope": "private"}
    if method == "tools/call":
        return _call(params, headers)
    return 404, {"error": {"code": -32601, "message": f"Method not found: {method}"}}


async def _body(receive: Any) -> bytes:
    chunks = b""
    while True:
        message = await receive()
        chunks += bytes(message.get("body", b""))
        if not message.get("more_body"):
            return chunks


async def _send_json(send: Any, status: int, value: Any) -> None:
    data = json.dumps(value).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": data})


def _event(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"


async def _listen(
    send: Any, receive: Any, rid: Any, params: dict[str, Any], headers: dict[str, str]
) -> None:
    wanted = params.get("notifications") or {}
    agreed = {"toolsListChanged": True} if wanted.get("toolsListChanged") else {}
    sub = {"io.modelcontextprotocol/subscriptionId": rid}
    start = {
        "type": "http.response.start",
        "status": 200,
        "headers": [(b"content-type", b"text/event-stream")],
    }
    await send(start)
    ack = {"_meta": sub, "notifications": agreed}
    first = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": ack}
    await send({"type": "http.response.body", "body": _event(first), "more_body": True})
    if headers.get("x-listen-break") == "1":
        raise ConnectionAbortedError("listen stream broken on purpose")
    if agreed:
        changed: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        changed["params"] = {"_meta": sub}
        await send({"type": "http.response.body", "body": _event(changed), "more_body": True})
    while (await receive())["type"] != "http.disconnect":
        pass
    LOG.append({"listen_closed": rid})


async def app(scope: Scope, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await answer_lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    method, path = scope["method"], scope["path"]
    if path == "/admin/log":
        await _send_json(send, 200, LOG)
        return
    if path == "/admin/clear":
        LOG.clear()
        await _send_json(send, 200, {})
        return
    if method != "POST":
        await _send_json(send, 405, {})
        return
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    message = json.loads(await _body(receive))
    LOG.append({"headers": headers, "body": message, "t": time.monotonic()})
    rid = message.get("id")
    if rid is None:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    params = message.get("params") or {}
    if message.get("method") == "subscriptions/listen":
        await _listen(send, receive, rid, params, headers)
        return
    answered = _answer(message.get("method", ""), params, headers)
    if answered is None:  # break the stream: SSE headers, then the connection drops
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        await send({"type": "http.response.body", "body": b": working\n\n", "more_body": True})
        raise ConnectionAbortedError("stream broken on purpose")
    status, value = answered
    if "error" in value:
        await _send_json(send, status, {"jsonrpc": "2.0", "id": rid, "error": value["error"]})
    else:
        await _send_json(send, status, {"jsonrpc": "2.0", "id": rid, "result": value})
