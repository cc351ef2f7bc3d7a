"""mcpbind stdio echo server for the round-trip benchmark: one tool, ``echo``."""

from __future__ import annotations

from mcpbind import Server, serve_stdio
from mcpbind import types as t


def build_server() -> Server:
    server = Server("mcpbind-echo", version="1.0.0")

    @server.tool()
    async def echo(text: str) -> t.TextContent:
        """Echo the text back."""
        return t.TextContent(text=text)

    return server


if __name__ == "__main__":
    serve_stdio(build_server())
