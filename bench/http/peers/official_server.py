"""Echo server on the official Python SDK (``mcp`` 2.3.0) over Streamable HTTP, for the bench.

``MCPServer`` (the SDK's FastMCP) with an ``echo`` tool, its ``streamable_http_app()`` served by
uvicorn (see ``_serve.py``), stateful (sessions on). ``--json`` passes ``json_response=True``
(one application/json body per POST); the SDK default is an SSE stream per POST (``--sse``).
``--flavor lowlevel`` serves the SDK's low-level ``Server`` instead (the faster flavour in the
round-trip benchmark). ``--stateless`` passes ``stateless_http=True`` (the SDK's sessionless
mode). The app's defaults otherwise stand (DNS-rebinding protection on for
127.0.0.1, session cap, idle timeout), as a user would get them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcp_types as types
from _serve import serve
from mcp.server import MCPServer, Server, ServerRequestContext

ECHO_TOOL = types.Tool(
    name="echo",
    description="Return the given text unchanged.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
)


def build_mcpserver() -> MCPServer:
    server = MCPServer("official-py-echo", version="1.0.0")

    @server.tool(
        name="echo", description="Return the given text unchanged.", structured_output=False
    )
    def echo(text: str) -> str:
        return text

    return server


async def _list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO_TOOL])


async def _call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    text = (params.arguments or {}).get("text")
    if params.name != "echo" or not isinstance(text, str):
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="bad echo call")], is_error=True
        )
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def build_lowlevel() -> Server[Any]:
    return Server(
        "official-py-echo", version="1.0.0", on_list_tools=_list_tools, on_call_tool=_call_tool
    )


def build_app(args: argparse.Namespace) -> tuple[Any, str]:
    server: MCPServer | Server[Any] = (
        build_mcpserver() if args.flavor == "mcpserver" else build_lowlevel()
    )
    options: dict[str, Any] = {"max_sessions": args.max_sessions} if args.max_sessions else {}
    app = server.streamable_http_app(
        json_response=args.json, stateless_http=args.stateless, host="127.0.0.1", **options
    )
    return app, "json" if args.json else "sse"


def _arguments(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--json", dest="json", action="store_true", default=True)
    mode.add_argument("--sse", dest="json", action="store_false")
    parser.add_argument("--flavor", choices=("mcpserver", "lowlevel"), default="mcpserver")
    parser.add_argument(
        "--stateless", action="store_true", help="stateless_http=True (no sessions)"
    )
    parser.add_argument("--max-sessions", type=int, help="session cap (default: the app's)")


if __name__ == "__main__":
    serve(__doc__.splitlines()[0], build_app, _arguments)
