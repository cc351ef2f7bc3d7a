"""The interop surface served by the official MCP Python SDK over stdio, for mcpbind's client.

Run as ``python official_server.py``; ``mcpbind_server.py`` offers the same surface built
with mcpbind. Keep the two in step.
Extra command-line arguments are ignored: the tests pass a unique tag to find the
process in ``/proc``.
"""

from __future__ import annotations

from typing import TypedDict

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


class Stats(TypedDict):
    count: int
    total: float
    mean: float


server = MCPServer(
    "interop-official", version="1.0.0", instructions="Interop test server.", log_level="WARNING"
)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Echo the text back, as unstructured text content only."""
    return text


@server.tool()
def stats(values: list[float]) -> Stats:
    """Count, sum and average a list of numbers (structured output)."""
    total = sum(values)
    return {"count": len(values), "total": total, "mean": total / len(values) if values else 0.0}


@server.tool()
def fail(message: str) -> str:
    """Always fails: the failure is reported as a tool error result (isError)."""
    raise ToolError(message)  # a ToolError's message reaches the client; others are masked


@server.resource("mem://greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "Hello from interop!"


@server.resource("mem://users/{user_id}", mime_type="text/plain")
def user(user_id: str) -> str:
    """One user's profile line."""
    return f"user {user_id}"


@server.prompt()
def hello(name: str) -> str:
    """Say hello to someone."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    server.run("stdio")
