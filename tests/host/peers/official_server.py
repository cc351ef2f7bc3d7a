"""A Host peer on the official MCP Python SDK (``mcp`` 2.x, speaks 2026-07-28), over stdio.

Tools: ``echo`` (read-only), ``write`` (no annotations: the host asks), ``sample`` (asks the
host's model through a ``Sample`` resolver: an input round on 2026-07-28) and ``grow`` (adds
a tool and publishes a tools list change to ``subscriptions/listen`` streams).
"""

from __future__ import annotations

from typing import Annotated

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer, Resolve, Sample

server = MCPServer("official-peer", version="1.0.0", log_level="WARNING")
READ_ONLY = types.ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READ_ONLY, structured_output=False)
def echo(text: str) -> str:
    """Echo the text back."""
    return f"official: {text}"


@server.tool(structured_output=False)
def write(value: str) -> str:
    """No annotations: destructiveHint defaults to true."""
    return f"wrote {value}"


def _ask_model(prompt: str) -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=prompt)
    )
    return Sample([message], max_tokens=16)


@server.tool(structured_output=False)
def sample(prompt: str, answer: Annotated[types.CreateMessageResult, Resolve(_ask_model)]) -> str:
    """Ask the host's model."""
    content = answer.content
    text = content.text if isinstance(content, types.TextContent) else "?"
    return f"{answer.model}: {text}"


def extra() -> str:
    """Added by grow."""
    return "extra"


@server.tool(structured_output=False)
async def grow(ctx: Context) -> str:
    """Add the tool ``extra`` and tell listeners the tool list changed."""
    server.add_tool(extra, name="extra", structured_output=False)
    await ctx.notify_tools_changed()
    return "grown"


if __name__ == "__main__":
    server.run("stdio")
