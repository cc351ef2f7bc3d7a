"""Echo server on mcpbind over Streamable HTTP, for the HTTP benchmark.

An mcpbind ``Server`` with an ``echo`` tool, wrapped in ``mcpbind.http.StreamableHTTPApp`` and
served by the same uvicorn runner as the official SDK's server (``_serve.py``). ``--tool``
picks the tool a row measures: ``async`` (``async def echo(text: str) -> TextContent``, the
tuned one) or ``def`` (``def echo(text: str) -> str``, the plain function a user writes first,
as in the README). ``--json`` (default) asks for one JSON body per POST, ``--sse`` for an SSE
stream per POST (the app's default); ``--stateless`` is the sessionless 2025 mode
(``StreamableHTTPApp(sessionless=True)``). ``--http serve_http`` (see ``_serve.py``) runs the
stack ``serve_http`` picks; with ``--sse`` and ``--tool def`` that is the README's setup.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "rt" / "peers" / "mcpbind"))

from _serve import serve
from echo_server import build_server  # the round-trip benchmark's server: the same tools


def build_app(args: argparse.Namespace) -> tuple[Any, str]:
    from mcpbind.http import StreamableHTTPApp

    options: dict[str, Any] = {}
    if args.max_sessions:  # every session comes from this one loopback client: no per-client cap
        options = {"max_sessions": args.max_sessions, "max_sessions_per_client": None}
    app = StreamableHTTPApp(
        build_server(args.tool),
        path="/mcp",
        json_response=args.json,
        sessionless=args.stateless,
        **options,
    )
    return app, "json" if args.json else "sse"


def _arguments(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--json", dest="json", action="store_true", default=True)
    mode.add_argument("--sse", dest="json", action="store_false")
    parser.add_argument("--tool", choices=("async", "def"), default="async")
    parser.add_argument(
        "--stateless", action="store_true", help="StreamableHTTPApp(sessionless=True)"
    )
    parser.add_argument("--max-sessions", type=int, help="session cap (default: the app's)")


if __name__ == "__main__":
    serve(__doc__.splitlines()[0], build_app, _arguments)
