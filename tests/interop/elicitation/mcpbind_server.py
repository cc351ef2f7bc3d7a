"""An mcpbind server that answers every ``initialize`` with one version (``StatelessOptions``
restricted to it; 2025-03-26 unless given as the first argument) and asks for a name by
elicitation: run as ``python mcpbind_server.py [VERSION]``, for the official clients."""

from __future__ import annotations

import sys

import msgspec

from mcpbind import Context, Server, StatelessOptions, serve_stdio
from mcpbind import types as t

server = Server("elicitation-2025-03-26", version="1.0.0")
server.stateless = StatelessOptions(versions=(sys.argv[1] if len(sys.argv) > 1 else "2025-03-26",))


@server.tool()
async def ask_name(ctx: Context) -> str:
    """What the client declared, the negotiated version, and the user's answer."""
    supports = ctx.client_supports("elicitation")
    params = t.ElicitRequestFormParams(
        message="What is your name?",
        requested_schema=t.ElicitRequestFormParamsRequestedSchema(
            type="object", properties={"name": t.StringSchema(type="string")}, required=["name"]
        ),
    )
    result = await ctx.elicit(params)
    content = result.content if not isinstance(result.content, msgspec.UnsetType) else {}
    return f"{ctx.protocol_version} supports={supports} {result.action}:{content.get('name')}"


if __name__ == "__main__":
    serve_stdio(server)
