"""A hand-written stdio "server" that answers ``initialize``, then sends ``PINGS`` pings
and never reads stdin again (issue 28 F21, the client side); it reports on stderr each
thousand pings written (``sent N``), then ``done``."""

from __future__ import annotations

import json
import sys

PINGS = 60_000

line = sys.stdin.buffer.readline()
init = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "serverInfo": {"name": "p", "version": "1"},
}
out = sys.stdout.buffer
out.write(
    json.dumps({"jsonrpc": "2.0", "id": json.loads(line)["id"], "result": init}).encode() + b"\n"
)
out.flush()
sys.stdin.buffer.readline()  # notifications/initialized; nothing is read after it
for n in range(1, PINGS + 1):
    out.write(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % n)
    if n % 1000 == 0:
        out.flush()
        print(f"sent {n}", file=sys.stderr, flush=True)
print("done", file=sys.stderr, flush=True)
sys.stdin.buffer.read()  # until the client closes
