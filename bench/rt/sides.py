"""One side of the stdio round trip at a time, without its peer: per-call cost of mcpbind's
client or server alone, deterministic under callgrind (no second process, no pipe timing).

``run.py`` times a client and a server process together; how their work overlaps, and so
how many messages one read or write carries, moves with the machine's load, and with it the
instructions per call of each side (valgrind slows the side it runs, so its peer answers
in bigger batches). Here the peer is a canned one inside the process: a ``MessagePump``
transport that hands each message to the connection from a loop callback, as the stdio
read callback does, and answers (client side) or asks (server side) with fixed bytes, so two
runs of the same code count the same instructions, whatever else runs on the machine::

    python bench/rt/sides.py server --protocol 2026-07-28            # microseconds per call
    python bench/rt/sides.py client --mode conc --callgrind          # instructions per call
    python bench/rt/sides.py server --tool def --callgrind           # the plain def tool
    python bench/rt/sides.py server --mounted --callgrind            # through Server.mount

``--callgrind`` runs the side twice under ``valgrind --tool=callgrind`` (``--calls`` and six
times as many) and prints the instructions per call of the difference: start-up cancels out.
Sequential (``seq``): one call at a time. ``conc``: 32 in flight; the server is handed the
next request as each response is written, the client's answers arrive together once per
loop iteration. The server runs on uvloop when installed, as ``serve_stdio`` does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from mcpbind import Client, Server, types
from mcpbind.server.session import ServerSession
from mcpbind.transports import MessagePump, TransportClosed

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers" / "mcpbind"))
from echo_server import build_server

TEXT = "hello from the mcpbind round-trip benchmark"
_IDENTITY = (
    b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpbind-echo","version":"1.0.0"}}'
)
_REQUEST_META = (
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{},'
    b'"io.modelcontextprotocol/clientInfo":{"name":"mcpbind","version":"0.1.0"}}'
)
_ECHO = b'{"content":[{"type":"text","text":"%s"}]' % TEXT.encode()
#: What the echo server answers on each era (the client side's canned peer), by request id.
ANSWERS = {
    "2025-11-25": b'{"jsonrpc":"2.0","id":%s,"result":' + _ECHO + b"}}",
    "2026-07-28": b'{"jsonrpc":"2.0","id":%s,"result":'
    + _ECHO
    + b","
    + _IDENTITY
    + b',"resultType":"complete"}}',
}
_OPENING = {
    b'"initialize"': b'{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{"tools":{}},"serverInfo":{"name":"mcpbind-echo","version":"1.0.0"}}}',
    b'"server/discover"': b'{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":'
    b'["2026-07-28"],"capabilities":{"tools":{}},' + _IDENTITY + b',"resultType":"complete"}}',
}
#: What the client sends on each era (the server side's canned peer), by request id.
_CALL = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
_ARGUMENTS = b'"arguments":{"text":"' + TEXT.encode() + b'"}}}'
REQUESTS = {
    "2025-11-25": _CALL + _ARGUMENTS,
    "2026-07-28": _CALL + _REQUEST_META + b"," + _ARGUMENTS,
}
_HELLO = {
    "2025-11-25": [
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
        b'"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpbind","version":"0.1.0"}}}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    ],
    "2026-07-28": [
        b'{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{' + _REQUEST_META + b"}}"
    ],
}
#: The start of every request the client encodes (its id and method, in this order); a
#: notification has no id. One anchored match: the peer's own cost stays out of the count.
_HEAD = re.compile(rb'\{"jsonrpc":"2\.0","id":(\d+),"method":("[^"]*")')


class CannedServer(MessagePump):
    """The client's peer: answers every request with ``answer`` (``%s``: its id), handed
    over together from one loop callback per iteration."""

    def __init__(self, answer: bytes) -> None:
        self._answer = answer
        self._ready: list[bytes] = []
        self._handler: Callable[[bytes], bool] | None = None
        self._closed = asyncio.Event()

    async def send(self, message: bytes) -> None:
        found = _HEAD.match(message)
        if found is None:
            return  # a notification
        request_id, method = found.group(1, 2)
        if not self._ready:
            asyncio.get_running_loop().call_soon(self._hand_over)
        self._ready.append(_OPENING.get(method, self._answer) % request_id)

    def _hand_over(self) -> None:
        ready, self._ready = self._ready, []
        for message in ready:
            if self._handler is None or not self._handler(message):
                raise RuntimeError("the client's connection stopped taking answers")

    async def pump(self, handler: Callable[[bytes], bool]) -> None:
        self._handler = handler
        await self._closed.wait()
        raise TransportClosed("closed")

    async def receive(self) -> bytes:
        raise TransportClosed("pump only")

    async def aclose(self) -> None:
        self._closed.set()


class CannedClient(MessagePump):
    """The server's peer: the opening messages, then ``calls`` requests, ``inflight`` of them
    outstanding (the next one is handed over as a response is written)."""

    def __init__(self, version: str, calls: int, inflight: int, tool: bytes = b"echo") -> None:
        self._request = REQUESTS[version].replace(b'"name":"echo"', b'"name":"%s"' % tool)
        self._queue = list(_HELLO[version])
        self._calls, self._inflight = calls, inflight
        self._sent = self._answered = 0
        self._handler: Callable[[bytes], bool] | None = None
        self._wake = asyncio.Event()
        self.done = False

    def _ask(self, count: int) -> None:
        for _ in range(min(count, self._calls - self._sent)):
            self._sent += 1
            self._queue.append(self._request % self._sent)

    async def send(self, message: bytes) -> None:
        self._answered += 1
        if self._answered == 1:
            self._ask(self._inflight)  # the handshake's answer: the calls begin
        else:
            self._ask(1)
        self.done = self._answered > self._calls
        if len(self._queue) == 1 or self.done:
            asyncio.get_running_loop().call_soon(self._hand_over)

    def _hand_over(self) -> None:
        while self._queue and self._handler is not None:
            if not self._handler(self._queue.pop(0)):
                self._handler = None  # the connection stops the pump; it calls pump again
        self._wake.set()

    async def pump(self, handler: Callable[[bytes], bool]) -> None:
        self._handler = handler
        self._hand_over()
        while self._handler is not None and not self.done:
            self._wake.clear()
            await self._wake.wait()
        self._handler = None
        if self.done:
            raise TransportClosed("done")

    async def receive(self) -> bytes:
        raise TransportClosed("pump only")

    async def aclose(self) -> None:
        pass


async def run_client(version: str, mode: str, calls: int) -> float:
    async with Client(CannedServer(ANSWERS[version]), protocol_version=version) as client:
        if client.protocol_version != version:
            raise RuntimeError(f"asked for {version}, connected with {client.protocol_version}")
        params = {"text": TEXT}

        async def echo() -> None:
            result = await client.call_tool(
                types.CallToolRequestParams(name="echo", arguments=params)
            )
            block = result.content[0]
            if not isinstance(block, types.TextContent) or block.text != TEXT:
                raise RuntimeError(f"unexpected echo result: {result!r}")

        started = time.perf_counter()
        if mode == "seq":
            for _ in range(calls):
                await echo()
        else:
            left = calls

            async def worker() -> None:
                nonlocal left
                while left > 0:
                    left -= 1
                    await echo()

            async with anyio.create_task_group() as tg:
                for _ in range(32):
                    tg.start_soon(worker)
        return time.perf_counter() - started


async def run_server(version: str, mode: str, calls: int, tool: str, mounted: bool) -> float:
    server = build_server(tool)
    if mounted:  # the echo server mounted in one with nothing of its own: "m_echo"
        gateway = Server("mcpbind-echo-gateway", "1.0.0")
        gateway.mount(server, prefix="m")
        server = gateway
    peer = CannedClient(
        version, calls, 1 if mode == "seq" else 32, b"m_echo" if mounted else b"echo"
    )
    started = time.perf_counter()
    await ServerSession(server, peer).run()
    if not peer.done:
        raise RuntimeError("the server stopped before answering every call")
    return time.perf_counter() - started


def measure(
    side: str, version: str, mode: str, calls: int, tool: str = "async", mounted: bool = False
) -> float:
    """Seconds for ``calls`` calls of one side (after the era's opening exchange); ``tool``
    picks the server's echo tool (``async`` or ``def``, as ``echo_server.py --tool``);
    ``mounted``: the echo server is mounted in another (``Server.mount``) and called there."""
    if side == "client":
        return anyio.run(run_client, version, mode, calls)
    uvloop = {"use_uvloop": True} if _has_uvloop() else {}
    return anyio.run(run_server, version, mode, calls, tool, mounted, backend_options=uvloop)


def _has_uvloop() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def instructions_per_call(args: argparse.Namespace) -> int:
    """Callgrind of ``calls`` and of six times as many: the difference per call."""
    totals = []
    for calls in (args.calls, 6 * args.calls):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "callgrind.out")
            valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
            side = [args.side, "--protocol", args.protocol, "--mode", args.mode]
            side += ["--tool", args.tool, *(["--mounted"] if args.mounted else [])]
            subprocess.run(
                [*valgrind, sys.executable, sys.argv[0], *side, "--calls", str(calls)],
                check=True,
                capture_output=True,
            )
            totals.append(int(Path(out).read_text().split("\nsummary:")[1].split()[0]))
    return round((totals[1] - totals[0]) / (5 * args.calls))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("side", choices=("client", "server"))
    parser.add_argument("--protocol", choices=sorted(ANSWERS), default="2025-11-25")
    parser.add_argument("--mode", choices=("seq", "conc"), default="seq")
    parser.add_argument(
        "--calls", type=int, default=None, help="(default 5000; 1000 with --callgrind)"
    )
    parser.add_argument(
        "--tool",
        choices=("async", "def"),
        default="async",
        help="the server's echo tool: async def -> TextContent, or a plain def -> str",
    )
    parser.add_argument(
        "--mounted", action="store_true", help="the server's echo tool through Server.mount"
    )
    parser.add_argument("--callgrind", action="store_true", help="instructions per call")
    args = parser.parse_args()
    if args.callgrind:
        args.calls = args.calls or 1000
        value: dict[str, object] = {"instructions_per_call": instructions_per_call(args)}
    else:
        args.calls = args.calls or 5000
        seconds = measure(args.side, args.protocol, args.mode, args.calls, args.tool, args.mounted)
        value = {"us_per_call": round(seconds / args.calls * 1e6, 2)}
    tool = {"tool": args.tool, "mounted": args.mounted} if args.side == "server" else {}
    print(
        json.dumps(
            {"side": args.side, "protocol": args.protocol, "mode": args.mode, **tool, **value}
        )
    )


if __name__ == "__main__":
    main()
