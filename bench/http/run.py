"""Streamable HTTP benchmark driver (``make bench-http``): MCP ``tools/call`` over HTTP.

Starts each server on a listening socket it binds on 127.0.0.1 (passed to the server as a
file descriptor), pins the server to one CPU and the load generator to another, and runs the
same load generator (``loadgen/loadgen.mjs``: Node + undici, one keep-alive connection and
one MCP session per client) against it with 1, 10 and 50 concurrent clients. Each new server
is first primed with untimed load (``--prime``, 3 s), so no peer's first cell is measured
while it warms up (V8 compiling the TS SDK's hot paths). Each cell is a warm-up, then a fixed
timed window; ``--best-of N`` repeats every cell N times round-robin
(outside load only ever slows a run down) and keeps the fastest. Prints one table::

    server | runs on | mode | clients | req/s | p50 ms | p99 ms | srv CPU us/req | srv % | ...

then the throughput ratios mcpbind/official-py and mcpbind/ts-sdk per client count.

The ``(2026-07-28)`` rows drive the same server apps with the stateless protocol: no
initialize and no session; every ``tools/call`` carries the per-request ``_meta`` and the
``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name`` headers (``loadgen.mjs
--protocol-version 2026-07-28``). They get their own ratio tables: mcpbind's 2026 rows against
the official SDK's 2026 rows of the same run.
The ``mcpbind def`` rows serve ``def echo(text: str) -> str`` (the official SDK's MCPServer rows
serve that function too) with sessions, in the sessionless 2025 mode (``(sessionless)``: the
load generator's ``--sessionless``, initialize then POSTs without a session id; beside the
official SDK's ``stateless_http=True`` and the TS SDK's stateless server) and on 2026-07-28;
``mcpbind (README defaults)`` is the README's server (def tool, sessions, SSE, ``serve_http``'s
stack). Each has its own ratio tables (see ``COMPARISONS``).
The report ends with where each side ran: the threads of the server and of the load
generator and the CPUs they may use, read from /proc (every thread of a server, Node's V8
and libuv threads included, is held to the server's CPU).
``srv CPU us/req`` is the server process's CPU time (user+system, all threads) over the timed
window divided by the requests served: unlike req/s it barely moves with outside load.

    python bench/http/run.py                      # full run (about 10 minutes)
    python bench/http/run.py --quick              # smoke-sized run
    python bench/http/run.py --only mcpbind,official-py --best-of 5 --json out.json
    python bench/http/run.py --extras             # also the alternative configurations
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fnmatch
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
PEERS = HERE / "peers"
LOADGEN_DIR = HERE / "loadgen"
TS_DIR = PEERS / "ts"
PY = sys.executable
PATH = "/mcp"

#: What ``serve_http(server)`` runs with its defaults (httptools + uvloop when installed).
SERVE_HTTP = "serve_http defaults"

#: ASGI server variants: label -> (uvicorn --loop, uvicorn --http).
ASGI = {
    "uvicorn asyncio+h11": ("asyncio", "h11"),
    "uvicorn uvloop+httptools": ("uvloop", "httptools"),
    "uvicorn asyncio+httptools": ("asyncio", "httptools"),
    "uvicorn uvloop+h11": ("uvloop", "h11"),
    "uvicorn asyncio+h11-deadline (serve_http)": ("asyncio", "h11-deadline"),
    SERVE_HTTP: ("asyncio", "serve_http"),  # the loop is serve_http's choice too
}
MAIN_ASGI = ("uvicorn asyncio+h11", "uvicorn uvloop+httptools")

#: The rows the ratios compare (same ASGI server, JSON response mode).
MCPBIND = "mcpbind"
OFFICIAL = "official-py"
TS = "ts-sdk"

#: The protocol versions the load generator speaks: sessions (handshake era) and stateless.
HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"
MCPBIND_2026 = f"{MCPBIND} ({STATELESS})"
OFFICIAL_2026 = f"{OFFICIAL} ({STATELESS})"
TS_2026 = f"{TS} ({STATELESS})"
#: mcpbind with a plain ``def echo(text: str) -> str`` tool (what users write first; the
#: official SDK's MCPServer rows already serve exactly that tool).
MCPBIND_DEF = f"{MCPBIND} def"
MCPBIND_DEF_2026 = f"{MCPBIND_DEF} ({STATELESS})"
#: The README's server: a def tool, sessions, SSE responses, serve_http's stack.
MCPBIND_README = f"{MCPBIND} (README defaults)"
#: The sessionless 2025 mode: initialize, then each POST served without a session.
SESSIONLESS = "sessionless"
MCPBIND_SESSIONLESS = f"{MCPBIND_DEF} ({SESSIONLESS})"
OFFICIAL_SESSIONLESS = f"{OFFICIAL} ({SESSIONLESS})"
TS_SESSIONLESS = f"{TS} ({SESSIONLESS})"


@dataclass(frozen=True)
class Target:
    """One server configuration: how to start it on an inherited socket, and when it can run.

    ``command(fd, node)`` is the server command line serving on listening socket ``fd``.
    ``available()`` returns a skip reason, or ``None`` when the target can run. ``extra``
    targets run only with ``--extras``. ``runs_on`` names the ASGI server or runtime.
    ``protocol`` is the version the load generator speaks (2026-07-28: stateless requests).
    """

    name: str
    runs_on: str
    command: Callable[[int, str], list[str]]
    available: Callable[[], str | None] = field(default=lambda: None)
    extra: bool = False
    note: str = ""
    protocol: str = HANDSHAKE
    sessionless: bool = False

    @property
    def key(self) -> str:
        return f"{self.name} [{self.runs_on}]"


# ---- availability ----------------------------------------------------------------------


def _missing_module(*names: str) -> str | None:
    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return f"python module {name!r} is not installed"
    return None


def _asgi_modules(runs_on: str) -> list[str]:
    loop, http = ASGI[runs_on]
    return ["uvicorn", *(m for m in (loop, http) if m in ("uvloop", "httptools"))]


def _mcpbind_available() -> str | None:
    try:
        module = importlib.import_module("mcpbind.http")
    except ImportError as exc:
        return f"mcpbind has no HTTP server yet (mcpbind.http: {exc})"
    except Exception as exc:  # a half-written mcpbind must not break the benchmark
        return f"mcpbind.http failed to import: {exc!r}"
    if not hasattr(module, "StreamableHTTPApp"):
        return "mcpbind.http.StreamableHTTPApp is missing"
    return None


def _ts_available() -> str | None:
    if not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        return f"TS peer not installed (no node_modules): run `npm ci --prefix {_rel(TS_DIR)}`"
    return None


def _ts_2026_available() -> str | None:
    """The TS SDK row for 2026-07-28 runs only once the installed SDK lists that version."""
    missing = _ts_available()
    if missing is not None:
        return missing
    sdk = TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk"
    try:
        version = json.loads((sdk / "package.json").read_text()).get("version", "?")
        types_js = (sdk / "dist" / "esm" / "types.js").read_text()
    except (OSError, ValueError) as exc:
        return f"cannot read the TS SDK's protocol versions: {exc}"
    if f"'{STATELESS}'" not in types_js and f'"{STATELESS}"' not in types_js:
        return (
            f"@modelcontextprotocol/sdk {version} does not speak {STATELESS} (its "
            "SUPPORTED_PROTOCOL_VERSIONS stop at 2025-11-25; its transport answers 400 "
            "'Unsupported protocol version')"
        )
    return None


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _python_target(
    name: str, script: str, runs_on: str, *args: str, needs: Sequence[str] = (), **kw: Any
) -> Target:
    loop, http = ASGI[runs_on]
    modules = [*_asgi_modules(runs_on), *needs]
    extra_check: Callable[[], str | None] | None = kw.pop("check", None)

    def available() -> str | None:
        return _missing_module(*modules) or (extra_check() if extra_check else None)

    def command(fd: int, node: str) -> list[str]:
        return [PY, str(PEERS / script), "--fd", str(fd), "--loop", loop, "--http", http, *args]

    return Target(name, runs_on, command, available, **kw)


def _node_target(name: str, script: Path, *args: str, **kw: Any) -> Target:
    def command(fd: int, node: str) -> list[str]:
        return [node, str(script), "--fd", str(fd), *args]

    return Target(name, "node", command, **kw)


def targets() -> list[Target]:
    """Every configuration, in table order (floors first, then the servers compared)."""
    out = [
        _node_target(
            "floor-node",
            LOADGEN_DIR / "floor_server.mjs",
            note="node:http, no SDK: the load generator's ceiling",
        )
    ]
    for runs_on in ASGI:
        extra = runs_on not in MAIN_ASGI
        if runs_on == SERVE_HTTP:
            out.append(
                _python_target(
                    MCPBIND_README,
                    "mcpbind_server.py",
                    runs_on,
                    "--sse",
                    "--tool",
                    "def",
                    check=_mcpbind_available,
                    note="the README's server: def tool, sessions, SSE, serve_http's stack",
                )
            )
            continue
        if ASGI[runs_on][1] == "h11-deadline":  # mcpbind's own serve_http only
            out.append(
                _python_target(
                    MCPBIND,
                    "mcpbind_server.py",
                    runs_on,
                    "--json",
                    check=_mcpbind_available,
                    extra=True,
                    note="uvicorn with the h11 protocol serve_http() installs",
                )
            )
            continue
        out.append(
            _python_target(
                "floor-asgi",
                "floor_asgi.py",
                runs_on,
                needs=["msgspec"],
                extra=extra,
                note="bare ASGI callable + msgspec: the ASGI server's ceiling",
            )
        )
        out.append(
            _python_target(
                OFFICIAL,
                "official_server.py",
                runs_on,
                "--json",
                needs=["mcp"],
                extra=extra,
                note="MCPServer (FastMCP) streamable_http_app(json_response=True)",
            )
        )
        if runs_on == MAIN_ASGI[0]:
            out.append(
                _python_target(
                    f"{OFFICIAL} (sse)",
                    "official_server.py",
                    runs_on,
                    "--sse",
                    needs=["mcp"],
                    note="MCPServer streamable_http_app(): the SDK's default SSE mode",
                )
            )
            out.append(
                _python_target(
                    f"{OFFICIAL} (lowlevel)",
                    "official_server.py",
                    runs_on,
                    "--json",
                    "--flavor",
                    "lowlevel",
                    needs=["mcp"],
                    extra=True,
                    note="low-level Server.streamable_http_app(json_response=True)",
                )
            )
        out.append(
            _python_target(
                MCPBIND,
                "mcpbind_server.py",
                runs_on,
                "--json",
                check=_mcpbind_available,
                extra=extra,
                note="StreamableHTTPApp(server, json_response=True)",
            )
        )
        if not extra:
            out += _def_tool_targets(runs_on)
            out.append(
                _python_target(
                    OFFICIAL_2026,
                    "official_server.py",
                    runs_on,
                    "--json",
                    needs=["mcp"],
                    protocol=STATELESS,
                    note="the same app as official-py, driven with stateless 2026-07-28 requests",
                )
            )
            out.append(
                _python_target(
                    MCPBIND_2026,
                    "mcpbind_server.py",
                    runs_on,
                    "--json",
                    check=_mcpbind_available,
                    protocol=STATELESS,
                    note="the same app as mcpbind, driven with stateless 2026-07-28 requests",
                )
            )
        if runs_on == MAIN_ASGI[0]:
            out.append(
                _python_target(
                    f"{MCPBIND} (sse)",
                    "mcpbind_server.py",
                    runs_on,
                    "--sse",
                    check=_mcpbind_available,
                    extra=True,
                    note="StreamableHTTPApp(server): SSE mode",
                )
            )
    out.append(
        _node_target(
            TS,
            TS_DIR / "server.mjs",
            "--json",
            available=_ts_available,
            note="express + StreamableHTTPServerTransport(enableJsonResponse) per session",
        )
    )
    out.append(
        _node_target(
            f"{TS} (sse)",
            TS_DIR / "server.mjs",
            "--sse",
            available=_ts_available,
            note="the SDK's default SSE mode",
        )
    )
    out.append(
        _node_target(
            TS_SESSIONLESS,
            TS_DIR / "server.mjs",
            "--json",
            "--stateless",
            available=_ts_available,
            sessionless=True,
            note="the README's stateless server (transport per POST), sessionless 2025 requests",
        )
    )
    out.append(
        _node_target(
            TS_2026,
            TS_DIR / "server.mjs",
            "--json",
            "--stateless",
            available=_ts_2026_available,
            protocol=STATELESS,
            note="the README's stateless server (transport per POST), stateless requests",
        )
    )
    return out


def _def_tool_targets(runs_on: str) -> list[Target]:
    """The rows with a plain ``def`` tool in every mode, and the official SDK's sessionless
    mode (its sessions and 2026-07-28 rows are the MCPServer ``def`` tool already)."""
    return [
        _python_target(
            MCPBIND_DEF,
            "mcpbind_server.py",
            runs_on,
            "--json",
            "--tool",
            "def",
            check=_mcpbind_available,
            note="StreamableHTTPApp(json_response=True), def echo(text: str) -> str",
        ),
        _python_target(
            OFFICIAL_SESSIONLESS,
            "official_server.py",
            runs_on,
            "--json",
            "--stateless",
            needs=["mcp"],
            sessionless=True,
            note="MCPServer streamable_http_app(json_response=True, stateless_http=True)",
        ),
        _python_target(
            MCPBIND_SESSIONLESS,
            "mcpbind_server.py",
            runs_on,
            "--json",
            "--tool",
            "def",
            "--stateless",
            check=_mcpbind_available,
            sessionless=True,
            note="StreamableHTTPApp(sessionless=True, json_response=True), def tool",
        ),
        _python_target(
            MCPBIND_DEF_2026,
            "mcpbind_server.py",
            runs_on,
            "--json",
            "--tool",
            "def",
            check=_mcpbind_available,
            protocol=STATELESS,
            note="the def-tool app driven with stateless 2026-07-28 requests",
        ),
    ]


# ---- processes ---------------------------------------------------------------------------


def _cpus() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return list(range(os.cpu_count() or 1))


def _pinned(cmd: list[str], cpu: int | None) -> list[str]:
    if cpu is None:
        return cmd
    if shutil.which("taskset"):
        return ["taskset", "-c", str(cpu), *cmd]
    wrapper = (
        f"import os,sys; os.sched_setaffinity(0, {{{cpu}}}); os.execvp(sys.argv[1], sys.argv[1:])"
    )
    return [PY, "-c", wrapper, *cmd]


def _proc_cpu_seconds(pid: int) -> float:
    """User+system CPU time of a process (all its threads, ended ones too), to the nanosecond:
    its CPU-time clock (clock_getcpuclockid(3)). /proc's utime+stime count clock ticks (10 ms),
    more than a whole short cell uses at one client on a loaded machine, which read as 0."""
    clock = ctypes.c_int()
    if _LIBC is not None and _LIBC.clock_getcpuclockid(pid, ctypes.byref(clock)) == 0:
        return time.clock_gettime(clock.value)
    with open(f"/proc/{pid}/stat") as f:  # no such clock here: ticks
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None)
        libc.clock_getcpuclockid.argtypes = (ctypes.c_int, ctypes.POINTER(ctypes.c_int))
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


def _placement(pid: int) -> str:
    """How many threads a process has and the CPUs they may run on, from /proc (all of a
    pinned process's threads inherit its pinning: Node's V8 and libuv threads, the def-tool
    pool's threads): e.g. ``7 threads on CPU 1``."""
    allowed: dict[str, int] = {}
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        cpus = line.split(":", 1)[1].strip()
                        allowed[cpus] = allowed.get(cpus, 0) + 1
    except OSError:
        return "?"
    return ", ".join(f"{n} thread{'s' * (n > 1)} on CPU {cpus}" for cpus, n in allowed.items())


def _cpu_busy(cpu: int) -> tuple[float, float]:
    """(busy, total) jiffies of one CPU since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(f"cpu{cpu} "):
                values = [int(v) for v in line.split()[1:]]
                idle = values[3] + (values[4] if len(values) > 4 else 0)
                total = sum(values[:8])
                return (total - idle) / os.sysconf("SC_CLK_TCK"), total / os.sysconf("SC_CLK_TCK")
    return 0.0, 0.0


def _stop(proc: subprocess.Popen[Any], grace: float = 5.0) -> None:
    """Stops a process we started, by its PID: SIGTERM, then SIGKILL after ``grace`` s."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


@dataclass
class RunningServer:
    proc: subprocess.Popen[str]
    port: int
    log: IO[str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{PATH}"

    def stderr_tail(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-2000:]


class BenchError(RuntimeError):
    pass


@contextlib.contextmanager
def running(
    target: Target,
    node: str,
    cpu: int | None,
    verbose: bool,
    wrap: Sequence[str] = (),
    slow: float = 1.0,
) -> Iterator[RunningServer]:
    """Binds 127.0.0.1:0, starts the server on that socket (its command after ``wrap``, e.g.
    valgrind's, which makes it ``slow`` times slower), waits for ``ready``, stops it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    fd = sock.fileno()
    os.set_inheritable(fd, True)
    cmd = _pinned([*wrap, *target.command(fd, node)], cpu)
    if verbose:
        print("  $", " ".join(cmd), file=sys.stderr)
    log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed in the finally below
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=log, text=True, pass_fds=(fd,), cwd=HERE
    )
    sock.close()  # the server holds its own copy; a dead server must refuse, not hang
    server = RunningServer(proc, port, log)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60 * slow)
        line = proc.stdout.readline() if ready else ""
        if not line.startswith("ready"):
            raise BenchError(
                f"{target.key} did not start: {line.strip()!r}\n{server.stderr_tail()}"
            )
        yield server
    finally:
        _stop(proc, 5 * slow)
        if proc.stdout is not None:
            proc.stdout.close()
        log.close()


@dataclass
class Cell:
    """One measured run: a target at one client count."""

    target: str
    runs_on: str
    clients: int
    rps: float
    p50_ms: float
    p99_ms: float
    mode: str
    requests: int
    server_cpu_us: float  # server CPU time per request, microseconds
    server_pct: float  # server CPU over the window, % of one core
    loadgen_pct: float  # load generator CPU over the window, % of one core
    others_pct: float  # the server CPU's busy time not spent by the server, %
    server_cpu_us_min: float = 0.0  # lowest server_cpu_us over the runs (set on best cells)
    protocol: str = HANDSHAKE  # the protocol version the load generator spoke
    #: The CPUs each side's threads may run on, read at the window's end (``_placement``).
    placement: str = ""


def run_cell(
    server: RunningServer,
    target: Target,
    clients: int,
    args: argparse.Namespace,
    node: str,
    cpus: tuple[int | None, int | None],
) -> Cell:
    gen_cpu, srv_cpu = cpus
    cmd = [
        node,
        str(LOADGEN_DIR / "loadgen.mjs"),
        "--url",
        server.url,
        "--clients",
        str(clients),
        "--warmup",
        str(args.warmup),
        "--duration",
        str(args.duration),
        "--protocol-version",
        target.protocol,
        *(["--sessionless"] if target.sessionless else []),
    ]
    cmd = _pinned(cmd, gen_cpu)
    if args.verbose:
        print("  $", " ".join(cmd), file=sys.stderr)
    gen = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # A stalled server must not hang the run: stop the load generator well past its window.
    watchdog = threading.Timer(args.warmup + args.duration + 90, _stop, (gen,))
    watchdog.start()
    marks: list[tuple[float, float, float]] = []  # (wall, server cpu s, server-core busy s)
    placement = ""
    result: dict[str, Any] | None = None
    try:
        assert gen.stdout is not None
        for line in gen.stdout:
            if line.startswith("# "):
                busy = _cpu_busy(srv_cpu)[0] if srv_cpu is not None else 0.0
                marks.append((time.perf_counter(), _proc_cpu_seconds(server.proc.pid), busy))
                if line.startswith("# done"):
                    placement = (
                        f"server {_placement(server.proc.pid)}, load generator "
                        f"{_placement(gen.pid)}"
                    )
            elif line.strip():
                result = json.loads(line)
        gen.wait(timeout=30)
    finally:
        watchdog.cancel()
        _stop(gen)
    err = gen.stderr.read() if gen.stderr else ""
    if gen.stderr:
        gen.stderr.close()
    gen.stdout.close()
    if gen.returncode != 0 or result is None or len(marks) < 2:
        raise BenchError(
            f"{target.key}, {clients} clients: load generator failed "
            f"(exit {gen.returncode}): {err.strip()[-1000:]}\n{server.stderr_tail()}"
        )
    (w0, c0, b0), (w1, c1, b1) = marks[0], marks[-1]
    wall = max(w1 - w0, 1e-9)
    used = c1 - c0
    requests = int(result["requests"])
    return Cell(
        target=target.name,
        runs_on=target.runs_on,
        clients=clients,
        rps=float(result["rps"]),
        p50_ms=float(result["p50_ms"]),
        p99_ms=float(result["p99_ms"]),
        mode=str(result["mode"]),
        requests=requests,
        server_cpu_us=used / requests * 1e6 if requests else 0.0,
        server_pct=used / wall * 100,
        loadgen_pct=float(result["cpu_pct"]),
        others_pct=max(0.0, (b1 - b0) - used) / wall * 100 if srv_cpu is not None else 0.0,
        protocol=str(result.get("protocol_version") or target.protocol),
        placement=placement,
    )


# ---- the run -----------------------------------------------------------------------------


def _node_binary(explicit: str | None) -> str | None:
    if explicit:  # servers run from bench/http: make a relative path absolute
        return os.path.abspath(explicit) if os.sep in explicit else shutil.which(explicit)
    bundled = LOADGEN_DIR / "node_modules" / ".bin" / "node"
    if bundled.exists():
        return str(bundled)
    return shutil.which("node")


def _version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def _pkg(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def select_targets(args: argparse.Namespace) -> list[Target]:
    chosen = []
    patterns = [p.strip() for p in args.only.split(",")] if args.only else []
    for target in targets():
        if patterns:
            if not any(
                p in (target.name, target.key)
                or fnmatch.fnmatch(target.name, p)
                or fnmatch.fnmatch(target.key, p)
                for p in patterns
            ):
                continue
        elif target.extra and not args.extras:
            continue
        chosen.append(target)
    return chosen


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    node = _node_binary(args.node)
    if node is None:
        raise BenchError("node is not installed (need it for the load generator)")
    if not (LOADGEN_DIR / "node_modules" / "undici").is_dir():
        raise BenchError(f"load generator not installed: run `npm ci --prefix {_rel(LOADGEN_DIR)}`")
    cpus = _cpus()
    gen_cpu: int | None
    srv_cpu: int | None
    if args.no_pin or len(cpus) < 2:
        gen_cpu = srv_cpu = None
    else:
        gen_cpu, srv_cpu = cpus[0], cpus[1]
    chosen = select_targets(args)
    skipped = {t.key: reason for t in chosen if (reason := t.available()) is not None}
    runnable = [t for t in chosen if t.key not in skipped]
    env = {
        "python": platform.python_version(),
        "node": _version([node, "--version"]),
        "node_path": node,
        "platform": platform.platform(),
        "cpus": len(cpus),
        "pinning": "none"
        if gen_cpu is None
        else f"load generator CPU {gen_cpu}, server CPU {srv_cpu}",
        "packages": {
            p: _pkg(p) for p in ("uvicorn", "uvloop", "httptools", "h11", "mcp", "msgspec")
        },
        "loadavg_start": os.getloadavg(),
        "duration": args.duration,
        "warmup": args.warmup,
        "prime": args.prime,
        "best_of": args.best_of,
        "clients": args.clients,
    }
    runs: list[Cell] = []
    best: dict[tuple[str, int], Cell] = {}
    failures: dict[str, str] = {}
    for rep in range(args.best_of):
        for target in runnable:
            if target.key in failures:
                continue
            if args.verbose:
                print(f"[run {rep + 1}/{args.best_of}] {target.key}", file=sys.stderr)
            try:
                with running(target, node, srv_cpu, args.verbose) as server:
                    if args.prime > 0:  # untimed: every server meets its first cell warm
                        primer = argparse.Namespace(**{**vars(args), "warmup": 0.0})
                        primer.duration = args.prime
                        run_cell(
                            server, target, max(args.clients), primer, node, (gen_cpu, srv_cpu)
                        )
                    for clients in args.clients:
                        cell = run_cell(server, target, clients, args, node, (gen_cpu, srv_cpu))
                        runs.append(cell)
                        key = (target.key, clients)
                        if key not in best or cell.rps > best[key].rps:
                            best[key] = cell
            except BenchError as exc:
                failures[target.key] = str(exc)
                print(f"FAILED {target.key}: {exc}", file=sys.stderr)
    for (target_key, n), cell in best.items():
        same = [
            c.server_cpu_us
            for c in runs
            if (f"{c.target} [{c.runs_on}]", c.clients) == (target_key, n)
        ]
        cell.server_cpu_us_min = min(u for u in same if u > 0) if any(same) else 0.0
    env["loadavg_end"] = os.getloadavg()
    return {
        "env": env,
        "targets": [
            {"key": t.key, "name": t.name, "runs_on": t.runs_on, "note": t.note} for t in chosen
        ],
        "best": [vars(c) for c in best.values()],
        "runs": [vars(c) for c in runs],
        "skipped": skipped,
        "failed": failures,
    }


# ---- report ------------------------------------------------------------------------------


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return "\n".join([fmt(headers), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows)])


def report(data: dict[str, Any]) -> str:
    env = data["env"]
    lines = [
        "MCP tools/call over Streamable HTTP, with sessions (initialize, initialized, then "
        "echo calls; one keep-alive connection and session per client); (2026-07-28) rows: "
        "stateless requests (no initialize, no session; _meta and Mcp-* headers on each call)",
        f"python {env['python']}, node {env['node']}, {env['cpus']} CPUs, pinning: {env['pinning']}",
        "packages: " + ", ".join(f"{k} {v}" for k, v in env["packages"].items()),
        f"each server primed {env.get('prime', 0)} s untimed; warm-up {env['warmup']} s + "
        f"{env['duration']} s timed per cell, best of "
        f"{env['best_of']} (by req/s); load average {env['loadavg_start'][0]:.2f} at start, "
        f"{env['loadavg_end'][0]:.2f} at end",
        "",
    ]
    order = {t["key"]: i for i, t in enumerate(data["targets"])}
    cells = sorted(
        data["best"], key=lambda c: (order.get(f"{c['target']} [{c['runs_on']}]", 99), c["clients"])
    )
    headers = [
        "server",
        "runs on",
        "mode",
        "clients",
        "req/s",
        "p50 ms",
        "p99 ms",
        "srv CPU us/req",
        "srv %",
        "loadgen %",
        "others %",
    ]
    rows = [
        [
            c["target"],
            c["runs_on"],
            c["mode"],
            str(c["clients"]),
            f"{c['rps']:,.0f}",
            f"{c['p50_ms']:.2f}",
            f"{c['p99_ms']:.2f}",
            f"{c['server_cpu_us_min']:,.0f}",
            f"{c['server_pct']:.0f}",
            f"{c['loadgen_pct']:.0f}",
            f"{c['others_pct']:.0f}",
        ]
        for c in cells
    ]
    lines.append(_table(headers, rows, set(range(3, len(headers)))))
    clients = sorted({c["clients"] for c in data["best"]})
    for title, mine in COMPARISONS:
        for metric, what in (
            ("rps", "throughput ratios (req/s over the reference's)"),
            ("cpu", "CPU-efficiency ratios (reference's server CPU per request over ours)"),
        ):
            ratio_rows = ratios(data["best"], metric, mine)
            if not ratio_rows:
                continue
            lines += ["", f"{title} {what}:", ""]
            lines.append(
                _table(
                    [f"{mine} on", "against", *(f"{n} clients" for n in clients)],
                    [
                        [on, against, *(f"{r[n]:.2f}x" if n in r else "-" for n in clients)]
                        for on, against, r in ratio_rows
                    ],
                    set(range(2, 2 + len(clients))),
                )
            )
    placements = {f"{c['target']} [{c['runs_on']}]": c.get("placement", "") for c in data["best"]}
    if any(placements.values()):
        lines += ["", "Where each side ran (threads and the CPUs they may use, at a window's end):"]
        lines += [f"  {key}: {where}" for key, where in placements.items() if where]
    for key, reason in data["skipped"].items():
        lines.append(f"skipped {key}: {reason}")
    for key, reason in data["failed"].items():
        lines.append(f"FAILED {key}: {reason.splitlines()[0]}")
    lines += [
        "",
        "req/s, p50, p99, srv %, loadgen %, others %: from the run with the best req/s; srv CPU "
        "us/req: server CPU time (all threads) per request over the timed window, lowest run; "
        "srv %/loadgen %: CPU use of each over the window (100 = one core); others %: the "
        "server CPU's time spent on other processes (outside load).",
    ]
    return "\n".join(lines)


#: The ratio tables: (title, mcpbind's row); each row is set against :func:`_references`.
COMPARISONS = (
    ("Throughput ratios, sessions (2025-11-25), async def tool:", MCPBIND),
    ("Sessions (2025-11-25), def tool,", MCPBIND_DEF),
    ("The README's server (def tool, sessions, SSE, serve_http),", MCPBIND_README),
    ("Sessionless 2025 mode, def tool,", MCPBIND_SESSIONLESS),
    (f"{STATELESS} throughput and CPU, async def tool,", MCPBIND_2026),
    (f"{STATELESS}, def tool,", MCPBIND_DEF_2026),
)


def _references(mine: str, on: str) -> list[tuple[str, str]]:
    """(target name, runs on) of the rows ``mine`` on ``on`` is set against: the official
    SDK in the same mode (same ASGI server, and asyncio+h11), then the TypeScript SDK."""
    h11 = MAIN_ASGI[0]
    if mine in (MCPBIND_2026, MCPBIND_DEF_2026):
        return [
            (OFFICIAL_2026, on),
            (OFFICIAL_2026, h11),
            (TS_2026, "node"),
            (TS, "node"),
            (MCPBIND, on),
        ]
    if mine == MCPBIND_SESSIONLESS:
        return [(OFFICIAL_SESSIONLESS, on), (OFFICIAL_SESSIONLESS, h11), (TS_SESSIONLESS, "node")]
    if mine == MCPBIND_README:
        return [
            (f"{OFFICIAL} (sse)", h11),
            (OFFICIAL, h11),
            (f"{TS} (sse)", "node"),
            (TS, "node"),
        ]
    return [
        (OFFICIAL, on),
        (f"{OFFICIAL} (sse)", on),
        (OFFICIAL, h11),
        (TS, "node"),
        (f"{TS} (sse)", "node"),
    ]


def ratios(
    best: Sequence[dict[str, Any]], metric: str = "rps", mine: str = MCPBIND
) -> list[tuple[str, str, dict[int, float]]]:
    """mcpbind's row ``mine`` against each reference, per client count (``rps``: req/s over
    req/s; ``cpu``: the reference's server CPU per request over mcpbind's, i.e. requests per
    CPU-second), one entry per ASGI server ``mine`` ran on."""
    by = {
        (c["target"], c["runs_on"], c["clients"]): (
            c["rps"]
            if metric == "rps"
            else 1e6 / c["server_cpu_us_min"]
            if c["server_cpu_us_min"]
            else 0.0
        )
        for c in best
    }
    clients = sorted({c["clients"] for c in best})
    ons = sorted({c["runs_on"] for c in best if c["target"] == mine}, key=list(ASGI).index)
    out = []
    for on in ons:
        seen = set()
        for name, ref_on in _references(mine, on):
            label = f"{name} [{ref_on}]"
            if label in seen:
                continue
            seen.add(label)
            row = {
                n: by[(mine, on, n)] / by[(name, ref_on, n)]
                for n in clients
                if (mine, on, n) in by and by.get((name, ref_on, n))
            }
            if row:
                out.append((on, label, row))
    return out


def _clients(text: str) -> list[int]:
    values = [int(v) for v in text.split(",") if v.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("--clients takes positive integers, e.g. 1,10,50")
    return values


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Streamable HTTP benchmark: mcpbind vs the official Python SDK vs the "
        "TypeScript SDK, same load generator, tools/call req/s and p50/p99 latency.",
    )
    parser.add_argument("--duration", type=float, help="timed seconds per cell (3; quick 0.5)")
    parser.add_argument("--warmup", type=float, help="untimed seconds first (1; quick 0.2)")
    parser.add_argument(
        "--clients", type=_clients, default=[1, 10, 50], help="concurrent sessions (1,10,50)"
    )
    parser.add_argument("--best-of", type=int, help="runs per cell, best kept (3; quick 1)")
    parser.add_argument(
        "--prime",
        type=float,
        help="untimed seconds of load on each newly started server before its first cell, "
        "at the highest client count (3; quick 0.5): Node's JIT compiles the TS SDK's hot "
        "code only after thousands of calls, and a cell measured before that is not its speed",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 0.5 s cells, 0.2 s warm-up, 1 run (unless given explicitly)",
    )
    parser.add_argument(
        "--only",
        help="comma-separated names, keys ('mcpbind [uvicorn asyncio+h11]') or globs "
        "(e.g. 'mcpbind,official-py*,floor-*'); see --list",
    )
    parser.add_argument("--extras", action="store_true", help="also the extra configurations")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to CPUs")
    parser.add_argument("--node", help="node binary (default: the loadgen's Node 24, else PATH)")
    parser.add_argument("--json", type=Path, help="write every run's numbers here")
    parser.add_argument("--list", action="store_true", help="list the configurations and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every command")
    args = parser.parse_args(argv)
    quick = args.quick
    args.duration = args.duration if args.duration is not None else (0.5 if quick else 3.0)
    args.warmup = args.warmup if args.warmup is not None else (0.2 if quick else 1.0)
    args.best_of = args.best_of if args.best_of is not None else (1 if quick else 3)
    args.prime = args.prime if args.prime is not None else (0.5 if quick else 3.0)
    if args.best_of < 1 or args.duration <= 0 or args.warmup < 0 or args.prime < 0:
        parser.error("--best-of >= 1, --duration > 0, --warmup >= 0 and --prime >= 0")
    return args


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through `running`, which stops the server


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _terminated)
    if args.list:
        for target in targets():
            reason = target.available()
            flag = " (extra)" if target.extra else ""
            state = f"skip: {reason}" if reason else "ok"
            print(f"{target.key}{flag}: {target.note} [{state}]")
        return 0
    try:
        data = benchmark(args)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report(data))
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 1 if data["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
