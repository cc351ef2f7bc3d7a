"""A tiny stdio MCP server for the fault-injection tests in this directory.

Environment (the tests pass it; ``StdioClientTransport.spawn`` forwards ``env``):

- ``MCPBIND_FAULTS_MAX_MESSAGE_SIZE``: the ``max_message_size`` given to
  ``StdioServerTransport`` (default: the transport's own default).
- ``MCPBIND_FAULTS_MODE``:

  - unset: an mcpbind ``Server`` with the tools ``add`` and ``sleep`` and the custom
    method ``faults/echo``;
  - ``die-on-initialize``: read one line (the client's ``initialize``) and exit with
    status 3 without answering, like a server crashing during the handshake;
  - ``rude``: no mcpbind at all; a hand-written server that answers the handshake
    correctly and then surrounds or replaces its answers with malformed output, to check
    the *client* side of "bad input never crashes a session".
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import anyio

from mcpbind import Context, Server, serve
from mcpbind.transports import DEFAULT_MAX_MESSAGE_SIZE, StdioServerTransport

server = Server("faults", version="1.0.0")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def sleep(seconds: float, ctx: Context) -> str:
    """Report progress 0 (so a client knows the call is running), sleep, then answer."""
    await ctx.report_progress(0, 1, "started")
    await anyio.sleep(seconds)
    return "slept"


@server.tool()
def block(seconds: float) -> str:
    """A ``def`` tool that ignores cancellation (stuck in a blocking call)."""
    time.sleep(seconds)
    return "unblocked"


@server.method("faults/echo")
async def echo(params: Any, ctx: Context) -> Any:
    """A custom (non-schema) method: answers its params."""
    return {"echo": params}


async def run(max_message_size: int) -> None:
    async with StdioServerTransport(max_message_size=max_message_size) as transport:
        await serve(server, transport)


# ---------------------------------------------------------------------- the rude server
RUDE_NOISE = [
    b"not json",
    b"[]",
    b'{"jsonrpc":"2.0","id":987654,"result":{}}',
    b'{"jsonrpc":"2.0","method":"notifications/nope"}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":[]}}',
    b'{"jsonrpc":"2.0","id":"srv-1","method":"nope/nope"}',
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"rude"}}',
]
"""Lines the rude server writes before every ``ping`` result."""


def _rude_answer(rid: Any, method: str, params: dict[str, Any]) -> list[bytes]:
    def result(value: object) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": rid, "result": value}).encode()

    if method == "initialize":
        info = {"name": "rude", "version": "1"}
        version = params.get("protocolVersion")
        caps = {"tools": {}}
        return [result({"protocolVersion": version, "capabilities": caps, "serverInfo": info})]
    if method == "ping":
        return [*RUDE_NOISE, result({})]
    tool = params.get("name") if method == "tools/call" else None
    if tool == "wrong-shape":
        return [result({"content": "not a list"})]
    if tool == "result-and-error":
        error = {"code": -1, "message": "x"}
        return [json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}, "error": error}).encode()]
    if tool == "huge-line":  # 64 MiB, the id first (as mcpbind and the Python SDK write it)
        return [result({"content": [{"type": "text", "text": "x" * (64 << 20)}]})]
    if tool == "huge-line-id-last":  # the id last (as the TypeScript SDK writes it)
        body = {"result": {"content": [{"type": "text", "text": "x" * (64 << 20)}]}}
        return [json.dumps({**body, "jsonrpc": "2.0", "id": rid}).encode()]
    if tool == "deep-result":
        deep = "[" * 5000 + "]" * 5000
        return [result({"content": []}).replace(b'"content"', b'"x": ' + deep.encode() + b', "c"')]
    if tool == "bad-utf8":
        text = result({"content": [{"type": "text", "text": "TEXT"}]})
        return [text.replace(b"TEXT", b"\xc3(")]
    error = {"code": -32601, "message": f"Method not found: {method}"}
    return [json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode()]


def rude() -> None:
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue  # the client's answers to our garbage
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue  # notifications and responses
        for out in _rude_answer(message["id"], message["method"], message.get("params") or {}):
            sys.stdout.buffer.write(out + b"\n")
        sys.stdout.buffer.flush()


def main() -> None:
    mode = os.environ.get("MCPBIND_FAULTS_MODE")
    if mode == "die-on-initialize":
        sys.stdin.buffer.readline()
        print("fault_server: dying during the handshake", file=sys.stderr, flush=True)
        os._exit(3)
    if mode == "rude":
        rude()
        return
    size = int(os.environ.get("MCPBIND_FAULTS_MAX_MESSAGE_SIZE", DEFAULT_MAX_MESSAGE_SIZE))
    anyio.run(run, size)


if __name__ == "__main__":
    main()
