"""The official Python SDK's echo server in its documented multi-worker configuration, for the
cluster benchmark: ``streamable_http_app(stateless_http=True, json_response=True)`` (its
README: "for serverless and load-balanced environments"; docs/run/deploy.md: 2026-07-28
requests need no affinity, and on the legacy leg ``stateless_http=True`` lets any worker answer
at the cost of the server-to-client channel and resumability) served by
``uvicorn official_app:app --workers N`` (the deploy page's "four processes, one socket").
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http" / "peers"))

from official_server import build_mcpserver

app = build_mcpserver().streamable_http_app(
    json_response=True, stateless_http=True, host="127.0.0.1"
)
