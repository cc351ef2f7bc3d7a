"""Idle-session memory benchmark (``make bench-mem``): what an idle Streamable HTTP session
costs a server process.

For each server (mcpbind's ``StreamableHTTPApp``, the official SDK's ``MCPServer``
``streamable_http_app``, the TypeScript SDK's README server; each with a plain ``def``/echo
tool, JSON responses, the session cap raised above the count), the script starts the server
on 127.0.0.1 (the HTTP benchmark's runner, ``bench/http/run.py``), opens warm-up sessions,
reads the server's resident set size (``VmRSS`` in ``/proc``), opens ``--sessions`` more
sessions (``initialize`` then ``notifications/initialized``, over a few keep-alive
connections; nothing else, so each stays idle), checks that the first of them still answers,
reads RSS again and prints before, after, and the difference per session.

Target (issue 15): at most 16 KiB per idle session for mcpbind.

    python bench/memory_sessions.py                     # 10,000 sessions per server
    python bench/memory_sessions.py --sessions 2000 --only mcpbind
    python bench/memory_sessions.py --quick             # smoke size (the test suite runs this)
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("bench_http_run", HERE / "http" / "run.py")
assert _spec is not None and _spec.loader is not None
http_run: Any = importlib.util.module_from_spec(_spec)
sys.modules["bench_http_run"] = http_run
_spec.loader.exec_module(http_run)

TARGET_BYTES = 16 * 1024  # mcpbind, per idle session
CONNECTIONS = 8
WARMUP_SESSIONS = 50
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "mcpbind-bench-mem", "version": "1.0.0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def targets(max_sessions: int) -> list[Any]:
    cap = ("--max-sessions", str(max_sessions))
    asgi = http_run.MAIN_ASGI[0]
    return [
        http_run._python_target(
            "mcpbind",
            "mcpbind_server.py",
            asgi,
            "--json",
            "--tool",
            "def",
            *cap,
            check=http_run._mcpbind_available,
        ),
        http_run._python_target(
            "official-py", "official_server.py", asgi, "--json", *cap, needs=["mcp"]
        ),
        http_run._node_target(
            "ts-sdk", http_run.TS_DIR / "server.mjs", "--json", available=http_run._ts_available
        ),
    ]


class HttpConnection:
    """One keep-alive HTTP/1.1 connection: POST a JSON body, read the whole response."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> HttpConnection:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def post(
        self, port: int, message: dict[str, Any], session: str | None
    ) -> tuple[int, dict[str, str], bytes]:
        body = json.dumps(message).encode()
        head = [
            "POST /mcp HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"Content-Length: {len(body)}",
        ]
        if session is not None:
            head += [f"Mcp-Session-Id: {session}", "MCP-Protocol-Version: 2025-11-25"]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            data = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding") == "chunked":
            chunks = []
            while (size := int((await self.reader.readline()).strip(), 16)) > 0:
                chunks.append(await self.reader.readexactly(size))
                await self.reader.readline()
            await self.reader.readline()
            data = b"".join(chunks)
        else:
            data = b""
        return status, headers, data

    def close(self) -> None:
        self.writer.close()


async def open_sessions(port: int, count: int) -> list[str]:
    """``count`` initialized sessions, opened over a few connections; their ids."""
    ids: list[str] = []
    remaining = count

    async def worker() -> None:
        nonlocal remaining
        conn = await HttpConnection.open(port)
        try:
            while remaining > 0:
                remaining -= 1
                status, headers, body = await conn.post(port, INIT, None)
                sid = headers.get("mcp-session-id")
                if status != 200 or not sid:
                    raise RuntimeError(f"initialize: HTTP {status}: {body[:200]!r}")
                status, _, body = await conn.post(port, INITIALIZED, sid)
                if status != 202:
                    raise RuntimeError(f"notifications/initialized: HTTP {status}: {body[:200]!r}")
                ids.append(sid)
        finally:
            conn.close()

    await asyncio.gather(*(worker() for _ in range(min(CONNECTIONS, count))))
    return ids


async def still_alive(port: int, session: str) -> None:
    conn = await HttpConnection.open(port)
    try:
        status, _, body = await conn.post(port, LIST, session)
    finally:
        conn.close()
    if status != 200 or b"echo" not in body:
        raise RuntimeError(f"the first session no longer answers: HTTP {status}: {body[:200]!r}")


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def measure(target: Any, sessions: int, node: str) -> dict[str, Any]:
    with http_run.running(target, node, None, False) as server:
        asyncio.run(open_sessions(server.port, WARMUP_SESSIONS))
        time.sleep(0.5)
        before = rss_bytes(server.proc.pid)
        start = time.perf_counter()
        ids = asyncio.run(open_sessions(server.port, sessions))
        seconds = time.perf_counter() - start
        time.sleep(0.5)
        asyncio.run(still_alive(server.port, ids[0]))
        after = rss_bytes(server.proc.pid)
    return {
        "server": target.name,
        "sessions": len(ids),
        "rss_before": before,
        "rss_after": after,
        "per_session": (after - before) / len(ids),
        "open_seconds": seconds,
    }


def report(rows: list[dict[str, Any]]) -> tuple[str, bool]:
    lines = [
        f"{'server':<12} {'sessions':>9} {'RSS before':>11} {'RSS after':>11} "
        f"{'per session':>12} {'target':>9}",
    ]
    ok = True
    for r in rows:
        target = ""
        if r["server"] == "mcpbind":
            held = r["per_session"] <= TARGET_BYTES
            ok = ok and held
            target = "holds" if held else "MISSED"
        lines.append(
            f"{r['server']:<12} {r['sessions']:>9,} {r['rss_before'] / 2**20:>8.1f} MiB "
            f"{r['rss_after'] / 2**20:>8.1f} MiB {r['per_session'] / 1024:>8.1f} KiB {target:>9}"
        )
    by = {r["server"]: r["per_session"] for r in rows}
    for other in ("official-py", "ts-sdk"):
        if "mcpbind" in by and other in by and by["mcpbind"] > 0:
            lines.append(f"mcpbind uses {by[other] / by['mcpbind']:.1f}x less than {other}")
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, help="idle sessions per server (10000; quick 200)")
    parser.add_argument("--quick", action="store_true", help="smoke size")
    parser.add_argument("--only", help="comma-separated servers: mcpbind,official-py,ts-sdk")
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    sessions = args.sessions or (200 if args.quick else 10_000)
    node = http_run._node_binary(None) or "node"
    wanted = set(args.only.split(",")) if args.only else None
    rows = []
    for target in targets(sessions + WARMUP_SESSIONS + 100):
        if wanted is not None and target.name not in wanted:
            continue
        reason = target.available()
        if reason is not None:
            print(f"skipped {target.name}: {reason}")
            continue
        rows.append(measure(target, sessions, node))
    table, ok = report(rows)
    print(f"idle Streamable HTTP sessions: {sessions:,} per server, one process each")
    print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
