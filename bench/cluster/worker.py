"""One mcpbind worker of the cluster benchmark (``run.py``): the HTTP benchmark's echo server
(``def echo(text: str) -> str``, JSON responses) as a worker of a cluster sharing the Redis at
``--redis`` (``RedisCluster``: session registry advertising this worker's own URL, event store,
notification bus; what ``mcpbind serve --redis`` gives each worker), or alone in memory without
it. Served by ``bench/http/peers/_serve.py`` on ``--port`` (prints ``ready json``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http" / "peers"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rt" / "peers" / "mcpbind"))

from _serve import serve
from echo_server import build_server


def build_app(args: argparse.Namespace) -> tuple[Any, str]:
    from mcpbind.http import RedisCluster, StreamableHTTPApp

    server = build_server("def")
    # Every request comes from the balancer (one address): no per-client session cap.
    options: dict[str, Any] = {"max_sessions_per_client": None}
    if args.redis:
        advertise = f"http://127.0.0.1:{args.port}/mcp"
        options |= RedisCluster(server, args.redis, advertise).app_options()
    return StreamableHTTPApp(server, path="/mcp", json_response=True, **options), "json"


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--redis", help="the cluster's Redis URL (none: one worker, in memory)")


if __name__ == "__main__":
    serve(__doc__.splitlines()[0], build_app, _arguments)
