"""A tool call and its ``notifications/cancelled`` in one write to a stdio server, so that the
cancel lands on the handler's first await (2025-11-25 basic/utilities/cancellation.mdx
§Timing Considerations: a cancel may arrive at any point of the request's processing).

The server reads both lines in one chunk and handles them in one go: the request's handler
takes its first step (up to its first await), then the cancel interrupts it right there,
before the event loop resumes it. That is where the cancel lands when the caller cancels as
soon as it sees something the handler did just before that await (a file a worker thread
wrote, say): a test that waits for such a sign cannot rely on the cancel landing later.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from typing import Any

from mcpbind import LATEST_HANDSHAKE

from .pipes import LineReader

__all__ = ["call_cancelled_at_once"]


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def call_cancelled_at_once(
    argv: Sequence[str], tool: str, arguments: dict[str, Any], timeout: float = 30.0
) -> None:
    """Start the stdio server ``argv``, initialize it, send ``tools/call`` of ``tool`` and its
    cancellation in one write, close its input and wait for it to exit: the handler has
    ended by then (the server waits for its handlers when its input ends). Raises if the
    server does not answer the handshake or exit within ``timeout`` seconds."""
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    try:
        stdin = server.stdin.fileno()
        replies = LineReader(server.stdout.fileno(), timeout)
        hello = {
            "protocolVersion": LATEST_HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "cancel-race", "version": "0"},
        }
        os.write(stdin, _line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))
        assert b'"result"' in replies.readline()
        call = {"name": tool, "arguments": arguments}
        cancel = {"requestId": 2, "reason": "cancelled right behind its request"}
        together = (
            _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
            + _line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
            + _line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        )
        assert len(together) < 4096  # under PIPE_BUF: one atomic write, read in one chunk
        os.write(stdin, together)
        server.stdin.close()
        server.wait(timeout)
        rest = replies.rest()
        assert not any(b'"id":2' in line or b'"id": 2' in line for line in rest), rest
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        server.stdout.close()
