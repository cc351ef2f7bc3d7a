"""The gateway's overhead (issue 33 point 2): one ``tools/call echo`` through ``mcpbind host
--serve`` against the same call made to the echo server directly.

Every configuration runs the same client (mcpbind's ``Client``, in this process, pinned to
the handshake era as ``bench/rt``'s mcpbind rows, or to ``--protocol-version``) against the same echo server
(``bench/rt/peers/mcpbind/echo_server.py``, the async tool):

* ``direct/stdio``: the client spawns the echo server;
* ``gateway/stdio``: the client spawns ``mcpbind host -c CONFIG --serve``, whose one upstream
  is the echo server over stdio, and calls ``echo__echo`` (the Host's name for it);
* ``direct/http``: the echo server under ``mcpbind serve --http``;
* ``gateway/http``: ``mcpbind host -c CONFIG --serve-http 127.0.0.1:PORT`` (its upstream is
  still the echo server over stdio).

Each configuration: connect, warm up, then ``--seq`` sequential calls and ``--conc`` calls
with 32 in flight; calls/s, p50 and p99 per call (nearest rank). The configurations run
round-robin ``--repeat`` times; the table shows each one's best run, and the ratios are the
median over the rounds of gateway/direct within one round (back to back, the same load).
``added us`` is the gateway's p50 minus the direct p50 (sequential): the goal is that it is
less than the direct call's own p50.

``--callgrind`` also counts the instructions per sequential call of the gateway process, and
of the client and the echo server of a direct call (valgrind on one process at a time,
``--calls`` and six times as many calls; the difference per call, so start-up cancels out):
the gateway process against client + server is the deterministic form of the goal.

    python bench/gateway/run.py                 # make bench-gateway
    python bench/gateway/run.py --quick         # smoke-sized
    python bench/gateway/run.py --only stdio --callgrind --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from mcpbind import LATEST_HANDSHAKE, Client
from mcpbind import types as t
from mcpbind.transports import StdioClientTransport
from mcpbind.versions import STATELESS_VERSIONS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bench" / "rt"))
from harness import ModeResult, run_concurrent, run_sequential  # noqa: E402

PY = sys.executable
ECHO_SERVER = ROOT / "bench" / "rt" / "peers" / "mcpbind" / "echo_server.py"
TEXT = "hello from the mcpbind gateway benchmark"
INFLIGHT = 32
GATEWAY_TOOL = "echo__echo"
"""The Host's name for the upstream ``echo`` server's ``echo`` tool (``<server>__<tool>``)."""


def environment() -> dict[str, str]:
    """This checkout's mcpbind for every process spawned (a spawned stdio server inherits only
    a few variables)."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": path} if path else {}


def write_config(folder: Path) -> Path:
    """The gateway's configuration: one upstream, the echo server over stdio; every call
    allowed (the echo tool has no annotations, so ``auto`` would ask)."""
    server = {
        "command": PY,
        "args": [str(ECHO_SERVER)],
        "env": environment(),
        "approval": "allow",
    }
    path = folder / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"echo": server}}))
    return path


def host_command(config: Path) -> list[str]:
    return [PY, "-m", "mcpbind.cli", "host", "-c", str(config)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def listening(command: list[str], port: int) -> Iterator[None]:
    """Run an HTTP server process until it accepts connections on ``port``; stop it by PID."""
    process = subprocess.Popen(
        command,
        env={**os.environ, **environment()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                error = process.stderr.read().decode() if process.stderr else ""
                raise SystemExit(f"{' '.join(command)} exited: {error.strip()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"nothing listening on port {port}") from None
                time.sleep(0.05)
        yield
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


@dataclass(frozen=True)
class Config:
    route: str  # direct | gateway
    transport: str  # stdio | http
    version: str  # the protocol version the client pins

    @property
    def name(self) -> str:
        return f"{self.route}/{self.transport}"

    @property
    def tool(self) -> str:
        return GATEWAY_TOOL if self.route == "gateway" else "echo"


@asynccontextmanager
async def connected(config: Config, gateway_config: Path) -> AsyncIterator[Client]:
    """A client connected to the configuration's server, for the whole measurement."""
    if config.transport == "stdio":
        command = (
            [*host_command(gateway_config), "--serve"]
            if config.route == "gateway"
            else [PY, str(ECHO_SERVER)]
        )
        async with (
            StdioClientTransport.spawn(command[0], command[1:], env=environment()) as transport,
            Client(transport, protocol_version=config.version) as client,
        ):
            yield client
        return
    port = free_port()
    if config.route == "gateway":
        command = [*host_command(gateway_config), "--serve-http", f"127.0.0.1:{port}"]
    else:
        app = f"{ECHO_SERVER}:build_server"
        command = [PY, "-m", "mcpbind.cli", "serve", app, "--http", str(port)]
    with listening(command, port):
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url, protocol_version=config.version) as client:
            yield client


def echo_of(client: Client, tool: str) -> Any:
    call_tool = client.call_tool

    async def echo(text: str) -> str:
        result = await call_tool(t.CallToolRequestParams(name=tool, arguments={"text": text}))
        block = result.content[0]
        if result.is_error is True or not isinstance(block, t.TextContent):
            raise RuntimeError(f"unexpected echo result: {result!r}")
        return block.text

    return echo


async def measure(config: Config, gateway_config: Path, args: argparse.Namespace) -> dict[str, Any]:
    async with connected(config, gateway_config) as client:
        echo = echo_of(client, config.tool)
        await run_sequential(echo, args.warmup, TEXT)
        await run_concurrent(echo, args.warmup, INFLIGHT, TEXT)
        seq: ModeResult = await run_sequential(echo, args.seq, TEXT)
        conc: ModeResult = await run_concurrent(echo, args.conc, INFLIGHT, TEXT)
    return {"seq": seq, "conc": conc}


# ---- callgrind ------------------------------------------------------------------------------


async def calls_through(command: list[str], tool: str, calls: int, version: str) -> None:
    # The process ends on its own once its stdin closes, however slowly (under valgrind): a
    # SIGTERM after the default 2 s would cut its shutdown short at a point that depends on
    # the load, and the totals with it.
    spawn = StdioClientTransport.spawn
    async with (
        spawn(command[0], command[1:], env=environment(), close_timeout=600) as transport,
        Client(transport, protocol_version=version, timeout=600, probe_timeout=600) as client,
    ):
        echo = echo_of(client, tool)
        await run_sequential(echo, calls, TEXT)


def instructions(
    command: list[str], tool: str, calls: int, version: str, *, client: bool = False
) -> int:
    """Instructions per sequential call of the process ``command`` starts (under callgrind;
    its child processes run natively), from ``calls`` and ``6 * calls`` calls. ``client``:
    count this script's client instead (``--client-calls``, on the echo server direct)."""
    totals = []
    for n in (calls, 6 * calls):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "callgrind.out")
            valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
            if client:
                alone = ["--client-calls", str(n), "--protocol-version", version]
                subprocess.run(
                    [*valgrind, PY, __file__, *alone],
                    check=True,
                    capture_output=True,
                    env={**os.environ, **environment()},
                )
            else:
                anyio.run(calls_through, [*valgrind, *command], tool, n, version)
            deadline = time.monotonic() + 60
            while not os.path.exists(out) and time.monotonic() < deadline:
                time.sleep(0.1)  # written when the process has exited
            totals.append(int(Path(out).read_text().split("\nsummary:")[1].split()[0]))
    return round((totals[1] - totals[0]) / (5 * calls))


# ---- the table ------------------------------------------------------------------------------


def best(runs: list[dict[str, Any]], mode: str) -> ModeResult:
    found: ModeResult = max((run[mode] for run in runs), key=lambda r: r["calls_per_s"])
    return found


def ratio(rounds: list[dict[str, dict[str, Any]]], transport: str, mode: str, key: str) -> float:
    """Median over the rounds of gateway/direct for ``key`` (same round: same load)."""
    values = [
        r[f"gateway/{transport}"][mode][key] / r[f"direct/{transport}"][mode][key] for r in rounds
    ]
    return float(statistics.median(values))


def report(rounds: list[dict[str, dict[str, Any]]], transports: list[str]) -> list[str]:
    lines = [
        "| transport | mode | route | calls/s | p50 ms | p99 ms | x direct calls/s | "
        "x direct p50 | added us (p50) |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for transport in transports:
        for mode in ("seq", "conc"):
            direct = best([r[f"direct/{transport}"] for r in rounds], mode)
            gateway = best([r[f"gateway/{transport}"] for r in rounds], mode)
            added = (gateway["p50_ms"] - direct["p50_ms"]) * 1000
            for route, row in (("direct", direct), ("gateway", gateway)):
                extra = (
                    f"{ratio(rounds, transport, mode, 'calls_per_s'):.2f} | "
                    f"{ratio(rounds, transport, mode, 'p50_ms'):.2f} | {added:.0f}"
                    if route == "gateway"
                    else " |  | "
                )
                lines.append(
                    f"| {transport} | {mode} | {route} | {row['calls_per_s']:.0f} | "
                    f"{row['p50_ms']:.3f} | {row['p99_ms']:.3f} | {extra} |"
                )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seq", type=int, default=2000, help="sequential calls (timed)")
    parser.add_argument("--conc", type=int, default=5000, help="calls with 32 in flight")
    parser.add_argument("--warmup", type=int, default=300, help="untimed calls before each mode")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (round-robin)")
    parser.add_argument("--only", choices=("stdio", "http"), help="one transport")
    parser.add_argument("--quick", action="store_true", help="smoke-sized: 50/200 calls, 1 round")
    parser.add_argument("--callgrind", action="store_true", help="instructions per call")
    parser.add_argument("--calls", type=int, default=200, help="calls per callgrind run")
    parser.add_argument("--json", type=Path, help="write every run's numbers here")
    parser.add_argument(
        "--protocol-version",
        default=LATEST_HANDSHAKE,
        help=f"the version the client pins (default {LATEST_HANDSHAKE}; "
        f"or {', '.join(STATELESS_VERSIONS)})",
    )
    parser.add_argument("--client-calls", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client_calls is not None:  # the client alone, under callgrind (instructions())
        anyio.run(
            calls_through, [PY, str(ECHO_SERVER)], "echo", args.client_calls, args.protocol_version
        )
        return
    if args.quick:
        args.seq, args.conc, args.warmup, args.repeat, args.calls = 50, 200, 20, 1, 20
    transports = [args.only] if args.only else ["stdio", "http"]
    version = args.protocol_version
    configs = [Config(r, tr, version) for tr in transports for r in ("direct", "gateway")]
    load_before = os.getloadavg()[0]
    rounds: list[dict[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        gateway_config = write_config(Path(tmp))
        for _ in range(args.repeat):
            rounds.append({c.name: anyio.run(measure, c, gateway_config, args) for c in configs})
        counts: dict[str, int] = {}
        if args.callgrind:
            gateway = [*host_command(gateway_config), "--serve"]
            version = args.protocol_version
            counts["gateway process"] = instructions(gateway, GATEWAY_TOOL, args.calls, version)
            echo_server = [PY, str(ECHO_SERVER)]
            counts["echo server"] = instructions(echo_server, "echo", args.calls, version)
            counts["client"] = instructions(echo_server, "echo", args.calls, version, client=True)
    load_after = os.getloadavg()[0]
    print("\n".join(report(rounds, transports)))
    print(f"\n  protocol version {args.protocol_version}")
    print(
        f"  {len(rounds)} round(s); 1-min load average {load_before:.2f} before, "
        f"{load_after:.2f} after; {os.cpu_count()} CPUs"
    )
    for name, count in counts.items():
        print(f"  callgrind, instructions per sequential call: {name} {count}")
    if counts:
        direct = counts["client"] + counts["echo server"]
        share = counts["gateway process"] / direct
        print(f"  gateway process / one direct call (client + echo server): {share:.2f}")
    if args.json is not None:
        data = {
            "protocol_version": args.protocol_version,
            "rounds": rounds,
            "callgrind": counts,
            "loadavg_1min": [load_before, load_after],
        }
        args.json.write_text(json.dumps(data, indent=1))


if __name__ == "__main__":
    main()
