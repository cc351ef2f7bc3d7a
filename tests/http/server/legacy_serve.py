"""``python legacy_serve.py``: ``serve_http(..., legacy_sse=True)`` with the HTTP test server on
127.0.0.1 and a free port; prints ``PORT <n>`` first."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]  # _support.py, and tests/ for support/

from _support import make_server  # noqa: E402
from support.live_server import free_port  # noqa: E402

from mcpbind.http import serve_http  # noqa: E402


def main() -> None:
    port = free_port()
    print(f"PORT {port}", flush=True)
    serve_http(make_server(), port=port, legacy_sse=True, log_level="critical")


if __name__ == "__main__":
    main()
