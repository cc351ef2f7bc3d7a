"""The official Python SDK's (``mcp`` 2.3.0) stdio server for the size-scaling benchmark:
the same workload as ``mcpbind_server.py`` on ``MCPServer`` (``add_tool`` N times under
``tool_00000`` ..., a ``blob://data`` text resource of ``--blob-bytes`` bytes)."""

from __future__ import annotations

import argparse

from mcp.server import MCPServer


def build_server(tools: int, blob_bytes: int) -> MCPServer:
    server = MCPServer("official-scale", version="1.0.0")

    def lookup(key: str, limit: int = 10) -> str:
        """Look a key up."""
        return key[:limit]

    for i in range(tools):
        server.add_tool(lookup, name=f"tool_{i:05d}", structured_output=False)
    blob = "x" * blob_bytes

    @server.resource("blob://data", mime_type="text/plain")
    def data() -> str:
        """The blob."""
        return blob

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tools", type=int, default=10)
    parser.add_argument("--blob-bytes", type=int, default=1024)
    args = parser.parse_args()
    build_server(args.tools, args.blob_bytes).run("stdio")


if __name__ == "__main__":
    main()
