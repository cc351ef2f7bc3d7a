"""Run one test server under uvicorn on 127.0.0.1 and a free port; print ``PORT <n>``.

``python serve.py KIND [PORT]`` where KIND is ``fault`` (fault_server.py), ``mock``
(mock_server.py, a scripted 2026-07-28 server), ``official-2026`` (official_2026_server.py,
the same client-test surface on the official SDK, recorded), ``official`` (the official SDK's Streamable
HTTP app with the interop surface; it serves both eras), ``official-json`` (its JSON-response
mode), ``official-old`` (the same app behind a filter that hides the 2026-07-28 routing:
requests are handled as a 2025-11-25 server handles them, so ``server/discover`` without a
session is refused with 400 as an older server does), ``official-legacy`` (its 2024-11-05
HTTP+SSE app), ``mcpbind``
(mcpbind's own HTTP server with the interop surface), ``mcpbind-everything``
(conformance/everything_server.py, with an event store and a 100 ms ``retry``) or
``mcpbind-everything-default`` (the same with the default 1 s ``retry``).
The socket is bound here and handed to uvicorn, so the port cannot be taken in between.
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
    if kind == "fault":
        return importlib.import_module("fault_server").app
    if kind == "mock":
        return importlib.import_module("mock_server").app
    if kind == "official-2026":  # the 2026-07-28 client tests' surface, recorded
        return importlib.import_module("official_2026_server").app
    if kind.startswith("official"):
        server = importlib.import_module("official_server").server

        if kind == "official-legacy":
            return server.sse_app()
        if kind == "official-old":
            return old_era(server.streamable_http_app())
        return server.streamable_http_app(json_response=kind == "official-json")
    if kind.startswith("mcpbind-everything"):  # the conformance server: event store, polling
        sys.path.insert(0, str(HERE.parent.parent.parent / "conformance"))
        everything = importlib.import_module("everything_server")
        if kind == "mcpbind-everything-default":  # the default retry (1 s)
            return everything.build_app()
        return everything.build_app(retry_ms=100)
    if kind == "mcpbind":
        from mcpbind.http import StreamableHTTPApp

        return StreamableHTTPApp(importlib.import_module("mcpbind_server").server)
    raise SystemExit(f"unknown server kind {kind!r}")


def main() -> None:
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0  # a port: restart where it was
    serve_on_free_port(build(sys.argv[1]), log_level="warning", port=port)


if __name__ == "__main__":
    main()
