"""The interop surface served by mcpbind over stdio, for the official SDK's client.

Run as ``python mcpbind_server.py``; ``official_server.py`` offers the same surface
built with the official MCP Python SDK. Keep the two in step.
Extra command-line arguments are ignored: the tests pass a unique tag to find the
process in ``/proc``.
"""

from __future__ import annotations

from typing import TypedDict

from mcpbind import Server, ToolExecutionError, serve_stdio


class Stats(TypedDict):
    count: int
    total: float
    mean: float


# page_size=2 splits tools/list into pages, so clients must follow nextCursor.
server = Server(
    "interop-mcpbind", version="1.0.0", instructions="Interop test server.", page_size=2
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
    raise ToolExecutionError(message)


@server.resource("mem://greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "Hello from interop!"


@server.resource_template("mem://users/{user_id}", mime_type="text/plain")
def user(user_id: str) -> str:
    """One user's profile line."""
    return f"user {user_id}"


@server.prompt()
def hello(name: str) -> str:
    """Say hello to someone."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    serve_stdio(server)
