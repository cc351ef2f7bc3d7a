"""Echo server on mcpbind over Streamable HTTP, for the HTTP benchmark.

An mcpbind ``Server`` with an ``echo`` tool (the same one as the round-trip benchmark's
peer), wrapped in ``mcpbind.http.StreamableHTTPApp`` with its defaults (sessions on) and
served by the same uvicorn runner as the official SDK's server (``_serve.py``). ``--json``
(default) asks for JSON responses when the app offers the choice; ``--sse`` for SSE streams.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _serve import serve

from mcpbind import Server
from mcpbind import types as t


def build_server() -> Server:
    server = Server("mcpbind-echo", version="1.0.0")

    @server.tool()
    async def echo(text: str) -> t.TextContent:
        """Echo the text back."""
        return t.TextContent(text=text)

    return server


def build_app(args: argparse.Namespace) -> tuple[Any, str]:
    from mcpbind.http import StreamableHTTPApp

    options: dict[str, Any] = {"path": "/mcp"}
    accepted = inspect.signature(StreamableHTTPApp).parameters
    if "json_response" in accepted:
        options["json_response"] = args.json
    mode = ("json" if args.json else "sse") if "json_response" in options else "default"
    return StreamableHTTPApp(build_server(), **options), mode


def _arguments(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--json", dest="json", action="store_true", default=True)
    mode.add_argument("--sse", dest="json", action="store_false")


if __name__ == "__main__":
    serve(__doc__.splitlines()[0], build_app, _arguments)
