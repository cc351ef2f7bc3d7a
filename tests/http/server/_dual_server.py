"""A stand-alone mcpbind server process for the dual-era test: one Streamable HTTP endpoint
on 127.0.0.1 serving handshake-era and 2026-07-28 clients at once (the tools of _era_2026.py's
test server).

    python _dual_server.py PORT
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # tests/, for the shared server
sys.path.insert(0, str(HERE))

from _era_2026 import make_server  # noqa: E402

from mcpbind.http import serve_http  # noqa: E402

if __name__ == "__main__":
    serve_http(make_server(), "127.0.0.1", int(sys.argv[1]), "/mcp")
