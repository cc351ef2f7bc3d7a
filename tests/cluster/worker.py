"""One worker process of the cluster tests: ``python worker.py TAG [APP-OPTIONS-JSON]``
serves ``app.build()`` (APP-OPTIONS: ``StreamableHTTPApp`` keywords, and ``redis_events``:
the URL of a Redis for a ``RedisEventStore``; ``redis_bus``: for a ``RedisNotificationBus``; ``redis_sessions``: for a
``RedisSessionRegistry`` advertising this worker's URL; ``redis_tasks`` with ``prefix``: for
a ``RedisTaskStore``, and task tool ``nap``; ``shutdown_timeout``: seconds the requests in flight
get on SIGTERM) over Streamable HTTP on a free 127.0.0.1 port
(printed as ``PORT n``), every response tagged ``x-test-worker: TAG``. Settings come from the
environment (``MCPBIND_STATE_KEYS``, ...), as a deployed server's would. uvicorn's own
``X-Forwarded-For`` handling is off: what the app does with it is under test."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import uvicorn

if __name__ == "__main__":  # run as a script: make the test packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcpbind.http import StreamableHTTPApp
from mcpbind.http.server.draining import DrainingServer
from tests.cluster.app import Tagged, build

if __name__ == "__main__":
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    options = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    if "redis_sessions" in options:  # a URL: the session registry there
        from mcpbind.http.server.redis_sessions import RedisSessionRegistry

        url = options.pop("redis_sessions")
        options["registry"] = RedisSessionRegistry(url, f"http://127.0.0.1:{port}/mcp")
    if "redis_events" in options:  # a URL: the Redis event store there
        from mcpbind.http.server.redis_events import RedisEventStore

        options["event_store"] = RedisEventStore(options.pop("redis_events"))
    tasks = None
    if "redis_tasks" in options:  # a URL: the shared task store there
        from mcpbind.tasks import RedisTaskStore

        tasks = RedisTaskStore(
            options.pop("redis_tasks"), prefix=f"cluster:{options.pop('prefix')}"
        )
    server = build(tasks=tasks)
    if "redis_bus" in options:  # a URL: the notification bus there
        from mcpbind.http.server.redis_bus import RedisNotificationBus

        options["bus"] = RedisNotificationBus(server, options.pop("redis_bus"))
    grace = options.pop("shutdown_timeout", 1)
    mcp = StreamableHTTPApp(server, path="/mcp", **options)
    print(f"PORT {port}", flush=True)
    config = uvicorn.Config(
        Tagged(mcp, sys.argv[1]),
        log_level="critical",
        proxy_headers=False,
        timeout_graceful_shutdown=grace,
    )
    DrainingServer(config, mcp).run(sockets=[sock])  # stops as serve_http's workers do
