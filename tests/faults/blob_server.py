"""A stdio server with one tool, ``blob(n, pad)``: answers ``n`` bytes of text (``pad`` is
ignored; it makes the request long), for the backpressure test (issue 28 F21)."""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # this checkout's code, whatever is installed
    ROOT = Path(__file__).resolve().parents[2]
    sys.path[:0] = [str(ROOT / "runtime"), str(ROOT / "generated")]

from mcpbind import Server, serve_stdio

server = Server("blob", version="1.0.0")


@server.tool()
async def blob(n: int, pad: str = "") -> str:
    return "x" * n


if __name__ == "__main__":
    serve_stdio(server)
