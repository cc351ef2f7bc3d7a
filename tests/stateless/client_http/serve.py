"""Run one server for the client-side HTTP tests under uvicorn on 127.0.0.1 and a free port;
print ``PORT <n>``.

``python serve.py KIND``: ``mock`` (mock_server.py, scripted 2026-07-28), ``official`` (the
official SDK's Streamable HTTP app, which serves both eras), ``official-old`` (the same app
behind a filter that hides the 2026-07-28 routing: requests are handled as a 2025-11-25
server handles them, so ``server/discover`` without a session is refused with 400 as an
older server does) or ``mcpbind`` (mcpbind's HTTP app). Both apps serve the interop surface
of tests/interop.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "interop"))
sys.path.insert(0, str(HERE.parent.parent))

from support.live_server import serve_on_free_port  # noqa: E402

HANDSHAKE = {b"2025-11-25", b"2025-06-18", b"2025-03-26", b"2024-11-05"}


def old_era(inner: Any) -> Any:
    """An ASGI app that drops a non-handshake ``MCP-Protocol-Version`` header, so the
    official app's legacy (2025-11-25) path answers every request."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = [
                (k, v)
                for k, v in scope["headers"]
                if k.lower() != b"mcp-protocol-version" or v in HANDSHAKE
            ]
            scope = {**scope, "headers": headers}
        await inner(scope, receive, send)

    return app


def build(kind: str) -> Any:
    if kind == "mock":
        return importlib.import_module("mock_server").app
    if kind in ("official", "official-old"):
        server = importlib.import_module("official_server").server
        app = server.streamable_http_app()
        return old_era(app) if kind == "official-old" else app
    if kind == "mcpbind":
        from mcpbind.http import StreamableHTTPApp

        return StreamableHTTPApp(importlib.import_module("mcpbind_server").server)
    raise SystemExit(f"unknown server kind {kind!r}")


def main() -> None:
    serve_on_free_port(build(sys.argv[1]))


if __name__ == "__main__":
    main()
