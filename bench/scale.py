"""Size-scaling benchmark (``make bench-scale``): cost against size, plotted.

Three workloads, each at growing sizes, each size in a fresh server process:

* ``tools/list``: a stdio server with 10, 100, 1,000 and 10,000 tools; the client fetches the
  whole list (every page, as a host does). mcpbind (``Client.iter_tools``) and the official
  SDK (``mcp.Client.list_tools`` with cursors, against its ``MCPServer``).
* ``resources/read``: a text resource of 1 KiB to 64 MiB over stdio (mcpbind's 16 MiB stdio
  cap raised above the message on both ends); mcpbind and the official SDK.
* Host: an mcpbind ``Host`` over 1, 10 and 50 stdio servers (10 tools each): start-up (spawn,
  handshake, every list fetched, until settled) and the catalog build (``Catalog.build`` of
  the fetched lists, in process). The official SDK has no host: mcpbind only.

Each point is the fastest of ``--repeat`` calls after one warm-up (start-up: one run); a
point that takes over ``--point-timeout`` seconds (default 300) is left out and said so.
Between consecutive sizes the script prints the growth exponent ``log(t2/t1) / log(n2/n1)``
(1 = linear; fixed costs make small sizes read below 1); ``--check`` fails when a step of
mcpbind's that ends above 1 ms grows faster than ``n^1.2``. mcpbind's client runs with its
result cache off (``Client(cache=False)``), so every list is fetched from the server. ``--plot`` writes a PNG (matplotlib, the ``bench``
extra), log-log, one panel per workload, the peers' curves beside mcpbind's.

    python bench/scale.py --plot bench/plots/scale.png    # the full run
    python bench/scale.py --quick                         # smoke size (the test suite runs this)
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
PEERS = HERE / "scale"
PY = sys.executable
SUPERLINEAR = 1.2  # a step growing faster than n^1.2 fails --check
#: The servers run the same code as this process (a worktree's, when PYTHONPATH names it).
ENV = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH",)}

TOOL_COUNTS = (10, 100, 1_000, 10_000)
BLOB_SIZES = (1 << 10, 16 << 10, 256 << 10, 4 << 20, 64 << 20)
HOST_SERVERS = (1, 10, 50)
QUICK = {"tools": (10, 100), "blob": (1 << 10, 64 << 10), "host": (1, 3)}

Series = dict[str, list[tuple[int, float]]]  # curve name -> [(size, seconds)]


def _cap(blob_bytes: int) -> int:
    return max(16 << 20, 2 * blob_bytes + 4096)


async def _best(call: Callable[[], Awaitable[Any]], repeat: int) -> float:
    await call()  # warm-up
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        await call()
        best = min(best, time.perf_counter() - start)
    return best


# ---- mcpbind ------------------------------------------------------------------------------


async def mcpbind_point(tools: int, blob: int, repeat: int) -> tuple[float, float]:
    """(seconds to list every tool, seconds to read the blob) against one server process."""
    from mcpbind import Client
    from mcpbind import types as t
    from mcpbind.transports import StdioClientTransport

    args = [str(PEERS / "mcpbind_server.py"), "--tools", str(tools), "--blob-bytes", str(blob)]
    async with (
        StdioClientTransport.spawn(PY, args, env=ENV, max_message_size=_cap(blob)) as transport,
        Client(transport, timeout=600, cache=False) as client,  # every list really fetched
    ):

        async def list_all() -> None:
            names = [tool.name async for tool in client.iter_tools()]
            assert len(names) == tools, (len(names), tools)

        async def read() -> None:
            result = await client.read_resource(t.ReadResourceRequestParams(uri="blob://data"))
            content = result.contents[0]
            assert isinstance(content, t.TextResourceContents) and len(content.text) == blob

        return await _best(list_all, repeat), await _best(read, repeat)


# ---- the official SDK ----------------------------------------------------------------------


async def official_point(tools: int, blob: int, repeat: int) -> tuple[float, float]:
    from mcp import Client, StdioServerParameters

    args = [str(PEERS / "official_server.py"), "--tools", str(tools), "--blob-bytes", str(blob)]
    async with Client(StdioServerParameters(command=PY, args=args, env=ENV or None)) as client:

        async def list_all() -> None:
            count, cursor = 0, None
            while True:
                page = await client.list_tools(cursor=cursor)
                count += len(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            assert count == tools, (count, tools)

        async def read() -> None:
            result = await client.read_resource("blob://data")
            assert len(getattr(result.contents[0], "text", "")) == blob

        return await _best(list_all, repeat), await _best(read, repeat)


# ---- the Host -------------------------------------------------------------------------------


async def host_point(servers: int, repeat: int) -> tuple[float, float]:
    """(start-up seconds, catalog-build seconds) of a Host over ``servers`` stdio servers."""
    from mcpbind import Host, ServerConfig
    from mcpbind.host.catalog import Catalog, ServerLists

    script = str(PEERS / "mcpbind_server.py")
    config = {
        f"s{i:02d}": ServerConfig(command=PY, args=[script, "--tools", "10"], env=ENV)
        for i in range(servers)
    }
    start = time.perf_counter()
    async with Host(config, startup_timeout=600) as host:
        startup = time.perf_counter() - start
        assert len(host.catalog.tools) == 10 * servers, len(host.catalog.tools)
        tools = [entry.tool for entry in host.catalog.tools.values()]
    lists = {f"s{i:02d}": ServerLists(tools=tools[i * 10 : (i + 1) * 10]) for i in range(servers)}
    best = math.inf
    for _ in range(max(repeat, 20)):
        t0 = time.perf_counter()
        catalog = Catalog.build(lists)
        best = min(best, time.perf_counter() - t0)
    assert len(catalog.tools) == 10 * servers
    return startup, best


# ---- the run ----------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Series]:
    tools_sizes = QUICK["tools"] if args.quick else TOOL_COUNTS
    blob_sizes = QUICK["blob"] if args.quick else BLOB_SIZES
    host_sizes = QUICK["host"] if args.quick else HOST_SERVERS
    official = importlib.util.find_spec("mcp") is not None and not args.no_peers
    out: dict[str, Series] = {"tools/list": {}, "resources/read": {}, "host": {}}
    peers: list[tuple[str, Callable[[int, int, int], Awaitable[tuple[float, float]]]]] = [
        ("mcpbind", mcpbind_point)
    ]
    if official:
        peers.append(("official SDK", official_point))

    def measured(point: Any, *point_args: int) -> tuple[float, float] | None:
        """The point, or ``None`` when it took over ``--point-timeout`` seconds (a peer that
        cannot do a size in reasonable time gets no point there, and the run goes on)."""

        async def guarded() -> tuple[float, float]:
            with anyio.fail_after(args.point_timeout):
                result: tuple[float, float] = await point(*point_args)
                return result

        try:
            return anyio.run(guarded)
        except TimeoutError:
            return None

    # (workload, sizes, which figure of the point, the server's (tools, blob bytes) at size n)
    workloads = (
        ("tools/list", tools_sizes, 0, lambda n: (n, 1024)),
        ("resources/read", blob_sizes, 1, lambda n: (10, n)),
    )
    for name, point in peers:
        for workload, sizes, index, server_size in workloads:
            for n in sizes:
                got = measured(point, *server_size(n), args.repeat)
                if got is None:
                    print(f"  {workload} {name} {n:,}: over {args.point_timeout:.0f} s")
                    continue
                out[workload].setdefault(name, []).append((n, got[index]))
                print(f"  {workload} {name} {n:,}: {got[index] * 1000:,.2f} ms", flush=True)
    for n in host_sizes:
        startup, build = anyio.run(host_point, n, args.repeat)
        out["host"].setdefault("mcpbind Host start-up", []).append((n, startup))
        out["host"].setdefault("mcpbind catalog build", []).append((n, build))
        print(
            f"  host {n} servers: start-up {startup * 1000:,.0f} ms, catalog build "
            f"{build * 1e6:,.0f} us",
            flush=True,
        )
    return out


def growth(points: list[tuple[int, float]]) -> list[tuple[int, int, float]]:
    """(n1, n2, exponent) for each consecutive pair of sizes."""
    return [
        (n1, n2, math.log(t2 / t1) / math.log(n2 / n1))
        for (n1, t1), (n2, t2) in itertools.pairwise(points)
        if t1 > 0 and t2 > 0
    ]


def report(data: dict[str, Series]) -> tuple[str, bool]:
    units = {"tools/list": "tools", "resources/read": "bytes", "host": "servers"}
    lines, ok = [], True
    for workload, series in data.items():
        lines.append(f"{workload} (size in {units[workload]}):")
        for name, points in series.items():
            cells = ", ".join(f"{n:,}: {s * 1000:,.2f} ms" for n, s in points)
            lines.append(f"  {name}: {cells}")
            steps = growth(points)
            text = ", ".join(f"{n1:,}->{n2:,}: n^{e:.2f}" for n1, n2, e in steps)
            flag = ""
            # Steps under a millisecond are noise, not growth.
            big = [e for _, n2, e in steps if dict(points)[n2] >= 1e-3]
            if name.startswith("mcpbind") and max(big, default=0.0) > SUPERLINEAR:
                ok, flag = False, "  SUPERLINEAR"
            lines.append(f"    growth {text}{flag}")
    return "\n".join(lines), ok


def plot(data: dict[str, Series], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    titles = {
        "tools/list": ("tools/list, every page", "tools"),
        "resources/read": ("resources/read over stdio", "resource size (bytes)"),
        "host": ("Host over N stdio servers", "servers"),
    }
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    for ax, (workload, series) in zip(axes, data.items(), strict=True):
        for name, points in series.items():
            xs, ys = [n for n, _ in points], [s * 1000 for _, s in points]
            ax.plot(xs, ys, marker="o", label=name)
        if series:
            first = next(iter(series.values()))
            n0, s0 = first[-1]
            xs = [n for n, _ in first]
            ax.plot(xs, [s0 * 1000 * n / n0 for n in xs], ls=":", color="grey", label="linear")
        title, xlabel = titles[workload]
        ax.set(title=title, xlabel=xlabel, ylabel="ms", xscale="log", yscale="log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke size")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls per point (best)")
    parser.add_argument("--no-peers", action="store_true", help="mcpbind only")
    parser.add_argument(
        "--point-timeout", type=float, default=300.0, help="seconds per point (then skipped)"
    )
    parser.add_argument("--plot", type=Path, help="write the PNG here")
    parser.add_argument("--json", type=Path, help="also write the points here")
    parser.add_argument("--check", action="store_true", help="exit 1 on a superlinear step")
    args = parser.parse_args(argv)
    data = run(args)
    text, ok = report(data)
    print(text)
    if args.plot:
        plot(data, args.plot)
        print(f"plot: {args.plot}")
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
