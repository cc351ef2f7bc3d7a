"""A stdio server for the subscriptions/listen stdio test: ``python listen_stdio_app.py``.

The HTTP tests' server (streamable_http/_live.py) over stdio: ``add_tool`` changes the tool
list, ``touch`` marks a resource updated (subscriptions.mdx on stdio)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for the shared server

from mcpbind import serve_stdio
from stateless.streamable_http._live import make_server

if __name__ == "__main__":
    serve_stdio(make_server())
