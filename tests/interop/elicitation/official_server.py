"""The official Python SDK's server asking for a name by elicitation: run as
``python official_server.py``, for mcpbind's client (which offers 2025-03-26)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer("elicitation-official", version="1.0.0", log_level="WARNING")


class Name(BaseModel):
    name: str


@server.tool()
async def ask_name(ctx: Context) -> str:
    result = await ctx.elicit("What is your name?", Name)
    data = result.data.name if result.action == "accept" else None
    return f"{result.action}:{data}"


if __name__ == "__main__":
    server.run("stdio")
