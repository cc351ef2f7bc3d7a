"""The stateless app's core surface built with the official MCP Python SDK (mcp 2.3.0), served
over stdio in both eras (its stdio server is dual-era). ``greet`` asks for the user's name:
a real elicitation on the handshake era, an explicit InputRequiredResult on 2026-07-28 (the
official SDK's MRTR style). Extra command-line arguments are ignored.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
from pydantic import BaseModel

server = MCPServer("official-app", version="3.0.0", instructions="Official app.")


class Name(BaseModel):
    name: str


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def greet(ctx: Context) -> Any:
    """Ask the user's name, then greet them."""
    if ctx.protocol_version == "2026-07-28":
        answer = (ctx.input_responses or {}).get("user_name")
        if answer is None:
            params = ElicitRequestFormParams(
                message="What is your name?",
                requested_schema={
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            )
            return InputRequiredResult(input_requests={"user_name": ElicitRequest(params=params)})
        content = getattr(answer, "content", None) or {}
        return f"Hello, {content.get('name', '?')}!"
    result = await ctx.elicit("What is your name?", Name)
    return f"Hello, {result.data.name if result.action == 'accept' and result.data else '?'}!"


@server.resource("mem://greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "Hello from the official app!"


@server.prompt()
def hello(name: str) -> str:
    """Say hello."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    server.run("stdio")
