"""One worker process of the cluster tests: ``python worker.py TAG [APP-OPTIONS-JSON]``
serves ``app.build()`` (APP-OPTIONS: ``StreamableHTTPApp`` keywords, and ``redis_events``:
the URL of a Redis for a ``RedisEventStore``) over Streamable HTTP on a free 127.0.0.1 port (printed as ``PORT n``),
every response tagged ``x-test-worker: TAG``. Settings come from the environment
(``MCPBIND_STATE_KEYS``, ...), as a deployed server's would."""

from __future__ import annotations

import json
import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: make the test packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcpbind.http import StreamableHTTPApp
from tests.cluster.app import Tagged, build
from tests.support.live_server import serve_on_free_port

if __name__ == "__main__":
    options = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    if "redis_events" in options:  # a URL: the Redis event store there
        from mcpbind.http.server.redis_events import RedisEventStore

        options["event_store"] = RedisEventStore(options.pop("redis_events"))
    serve_on_free_port(Tagged(StreamableHTTPApp(build(), path="/mcp", **options), sys.argv[1]))
