"""A stand-alone mcpbind server process for the dual-era test: one Streamable HTTP endpoint
on 127.0.0.1 serving handshake-era and 2026-07-28 clients at once (the tools of _live.py's
test server).

    python _dual_server.py PORT
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/, for the shared server

from mcpbind.http import serve_http
from stateless.streamable_http._live import make_server

if __name__ == "__main__":
    serve_http(make_server(), "127.0.0.1", int(sys.argv[1]), "/mcp")
