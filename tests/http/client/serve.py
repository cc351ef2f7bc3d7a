"""Run one test server under uvicorn on 127.0.0.1 and a free port; print ``PORT <n>``.

``python serve.py KIND [PORT]`` where KIND is ``fault`` (fault_server.py), ``official`` (the
official SDK's Streamable HTTP app with the interop surface), ``official-json`` (its
JSON-response mode), ``official-legacy`` (its 2024-11-05 HTTP+SSE app), ``mcpbind``
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


def build(kind: str) -> Any:
    if kind == "fault":
        return importlib.import_module("fault_server").app
    if kind.startswith("official"):
        server = importlib.import_module("official_server").server

        if kind == "official-legacy":
            return server.sse_app()
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
