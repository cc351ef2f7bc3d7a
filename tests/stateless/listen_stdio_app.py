"""A stdio server for the subscriptions/listen stdio test: ``python listen_stdio_app.py``.

The HTTP tests' server (http/server/_era_2026.py) over stdio: ``add_tool`` changes the tool
list, ``touch`` marks a resource updated (subscriptions.mdx on stdio)."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))  # for the shared server
sys.path.insert(0, str(TESTS / "http" / "server"))

from _era_2026 import make_server  # noqa: E402

from mcpbind import serve_stdio  # noqa: E402

if __name__ == "__main__":
    serve_stdio(make_server())
