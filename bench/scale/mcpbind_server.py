"""mcpbind stdio server for the size-scaling benchmark (``bench/scale.py``).

``--tools N``: N tools (``tool_00000`` ...; one plain ``def`` function registered under each
name, the decorator API's schema generation included). ``--blob-bytes B``: a resource
``blob://data`` whose text is B bytes. The stdio cap is raised above the largest message.
"""

from __future__ import annotations

import argparse

from mcpbind import Server, serve_stdio
from mcpbind.transports import DEFAULT_MAX_MESSAGE_SIZE


def build_server(tools: int, blob_bytes: int) -> Server:
    server = Server("mcpbind-scale", version="1.0.0")

    def lookup(key: str, limit: int = 10) -> str:
        """Look a key up."""
        return key[:limit]

    for i in range(tools):
        server.tool(f"tool_{i:05d}")(lookup)
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
    cap = max(DEFAULT_MAX_MESSAGE_SIZE, 2 * args.blob_bytes + 4096)
    serve_stdio(build_server(args.tools, args.blob_bytes), max_message_size=cap)


if __name__ == "__main__":
    main()
