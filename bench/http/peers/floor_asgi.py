"""Floor ASGI app for the HTTP benchmark: the least a Python ASGI app can do per MCP request.

A bare ASGI callable (no framework, no SDK) that decodes the body with msgspec, answers
``initialize`` with an ``Mcp-Session-Id``, 202 for notifications, echoes ``tools/call`` text
as a JSON result and 200 for DELETE. Served by the same uvicorn runner as the SDK peers, it
is the ceiling of the ASGI server + event loop on this machine: no MCP server under uvicorn
can be faster.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import argparse

import msgspec
from _serve import serve

_JSON = [(b"content-type", b"application/json")]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    more = True
    while more:
        event = await receive()
        body += event.get("body", b"")
        more = event.get("more_body", False)
    status, headers, out = _answer(scope["method"], body)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": out})


def _answer(method: str, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    if method != "POST":
        return 200, _JSON, b""
    msg = msgspec.json.decode(body)
    if "id" not in msg:
        return 202, _JSON, b""
    if msg["method"] == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "floor", "version": "1.0.0"},
        }
        headers = [*_JSON, (b"mcp-session-id", secrets.token_hex(16).encode())]
        return (
            200,
            headers,
            msgspec.json.encode({"jsonrpc": "2.0", "id": msg["id"], "result": result}),
        )
    text = msg["params"]["arguments"]["text"]
    result = {"content": [{"type": "text", "text": text}]}
    return 200, _JSON, msgspec.json.encode({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def build_app(args: argparse.Namespace) -> tuple[Any, str]:
    return app, "json"


if __name__ == "__main__":
    serve(__doc__.splitlines()[0], build_app)
