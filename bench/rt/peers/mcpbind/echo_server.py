"""mcpbind stdio echo server for the round-trip benchmark: one tool, ``echo``.

``--tool async`` (default): ``async def echo(text: str) -> TextContent``, the tuned tool.
``--tool def``: ``def echo(text: str) -> str``, the plain function a user writes first (the
README's style; the official SDK's ``MCPServer`` peer serves the same function).
"""

from __future__ import annotations

import sys

from mcpbind import Server, serve_stdio
from mcpbind import types as t


def build_server(tool: str = "async") -> Server:
    server = Server("mcpbind-echo", version="1.0.0")
    if tool == "def":

        @server.tool()
        def echo(text: str) -> str:
            """Echo the text back."""
            return text

    else:

        @server.tool("echo")
        async def echo_async(text: str) -> t.TextContent:
            """Echo the text back."""
            return t.TextContent(text=text)

    return server


if __name__ == "__main__":
    serve_stdio(build_server("def" if sys.argv[1:] == ["--tool", "def"] else "async"))
