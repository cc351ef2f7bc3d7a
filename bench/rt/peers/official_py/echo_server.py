"""Echo MCP server built on the official Python SDK (``mcp`` 2.x), for the round-trip bench.

One tool, ``echo``: input ``{"text": string}``, result one text content block carrying
the same text. Two flavours, chosen with ``--flavor``:

* ``lowlevel`` (default, the one ``run.py`` benchmarks): ``mcp.server.Server`` with
  ``on_list_tools`` / ``on_call_tool`` handlers. This is the faster of the two and still
  a realistic SDK server: the SDK runner still validates params, runs its default
  middleware (OpenTelemetry, a no-op without an exporter) and serializes through
  pydantic.
* ``mcpserver``: ``mcp.server.mcpserver.MCPServer`` (v1's FastMCP) with an ``@tool``
  function; adds argument-model validation and result conversion per call.

Run over stdio: ``python echo_server.py [--flavor lowlevel|mcpserver]``.
``build_server()`` is also imported by ``bench_client.py`` for the in-memory variant.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import mcp_types as types
from mcp.server import MCPServer, Server, ServerRequestContext
from mcp.server.stdio import stdio_server

ECHO_TOOL = types.Tool(
    name="echo",
    description="Return the given text unchanged.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
)


async def _list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO_TOOL])


async def _call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    if params.name != "echo":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"unknown tool {params.name!r}")],
            is_error=True,
        )
    text = (params.arguments or {}).get("text")
    if not isinstance(text, str):
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="'text' must be a string")],
            is_error=True,
        )
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def build_lowlevel() -> Server[Any]:
    return Server(
        "official-py-echo", version="1.0.0", on_list_tools=_list_tools, on_call_tool=_call_tool
    )


def build_mcpserver() -> MCPServer:
    server = MCPServer("official-py-echo", version="1.0.0")

    @server.tool(
        name="echo", description="Return the given text unchanged.", structured_output=False
    )
    def echo(text: str) -> str:
        return text

    return server


def build_server(flavor: str = "lowlevel") -> Server[Any] | MCPServer:
    if flavor == "lowlevel":
        return build_lowlevel()
    if flavor == "mcpserver":
        return build_mcpserver()
    raise ValueError(f"unknown flavor {flavor!r}")


async def serve_stdio(flavor: str) -> None:
    server = build_server(flavor)
    if isinstance(server, MCPServer):
        await server.run_stdio_async()
        return
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--flavor", choices=("lowlevel", "mcpserver"), default="lowlevel")
    args = parser.parse_args()
    anyio.run(serve_stdio, args.flavor)


if __name__ == "__main__":
    main()
