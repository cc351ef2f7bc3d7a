"""A server for the CLI's user-facing behaviour: a ``str`` tool, log messages at two levels,
and a tool that reports what the client declared (elicitation, roots) and asks a question.
Run as a file (``mcpbind ls tests/cli/ux_server.py``) or served (``mcpbind serve``)."""

from __future__ import annotations

from mcpbind import Context, Server, serve_stdio
from mcpbind import types as t

server = Server("ux", version="1.0.0")


@server.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


@server.tool()
async def noisy(ctx: Context) -> str:
    """Log one info and one warning message."""
    await ctx.info("details for -v")
    await ctx.log("warning", "disk almost full", logger="store")
    return "logged"


@server.tool()
async def declared(ctx: Context) -> str:
    """What the client declared, and its roots."""
    parts = [f"elicitation={ctx.client_supports('elicitation')}"]
    parts.append(f"roots={ctx.client_supports('roots')}")
    if ctx.client_supports("roots"):
        roots = await ctx.list_roots()
        parts.append("root=" + ",".join(root.uri for root in roots.roots))
    return " ".join(parts)


@server.tool()
async def ask(ctx: Context) -> str:
    """Ask the user for a name and a count; say what came back."""
    schema = t.ElicitRequestFormParamsRequestedSchema(
        type="object",
        properties={
            "name": t.StringSchema(type="string", title="Your name"),
            "count": t.NumberSchema(type="integer", default=2),
        },
        required=["name"],
    )
    answer = await ctx.elicit(t.ElicitRequestFormParams(message="Who?", requested_schema=schema))
    return f"{answer.action} {answer.content if answer.content else ''}".strip()


if __name__ == "__main__":
    serve_stdio(server)
