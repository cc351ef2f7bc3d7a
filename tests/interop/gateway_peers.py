"""The upstream servers of the gateway interop tests, and a plain server with the same surface.

Run as ``python gateway_peers.py KIND [stdio|http]``:

* ``modern``: stdio, 2026-07-28 only (server/discover, no initialize): ``echo``, ``count``
  (progress), ``sample`` (asks the client's model), ``wait`` (runs until cancelled), ``write``
  and ``wipe`` (no read-only annotation: the Host's ``auto`` policy asks before running them).
* ``protected``: Streamable HTTP on a free port (prints ``PORT <n>``), behind the OAuth
  resource-server check (2025-11-25 basic/authorization.mdx §Access Token Usage): a request
  without ``Authorization: Bearer $GATEWAY_UPSTREAM_TOKEN`` gets 401 with the RFC 9728
  challenge. ``whoami`` answers with the caller's subject, never the token.
* ``standin stdio|http``: the whole surface the downstream clients exercise, on both eras and
  on one server, with approval asked by the tools themselves (``write`` and ``wipe`` elicit a
  confirmation and refuse when it is declined): the plain mcpbind server the harnesses run
  against where no gateway is available.

``wait`` leaves ``MARKER.started`` when it starts and ``MARKER.cancelled`` when a
``notifications/cancelled`` stops it, so a test sees that a downstream cancel reached the
server that ran the tool.
"""

from __future__ import annotations

import hmac
import os
import sys
from pathlib import Path

import anyio

from mcpbind import Context, Server, ToolExecutionError, serve_stdio
from mcpbind import types as t
from mcpbind.auth.server import InvalidToken, Principal, ResourceServer
from mcpbind.http import StreamableHTTPApp
from mcpbind.server.options import StatelessOptions
from mcpbind.versions import STATELESS_VERSIONS

READ_ONLY = t.ToolAnnotations(read_only_hint=True)
TOKEN_ENV = "GATEWAY_UPSTREAM_TOKEN"


def surface(name: str, *, self_approval: bool) -> Server:
    """The tools every downstream client exercises."""
    server = Server(name, version="1.0.0")

    async def confirm(ctx: Context, what: str) -> None:
        """Ask the client as the gateway does: a form with one boolean, accepted and true."""
        if not self_approval:
            return
        schema = t.ElicitRequestFormParamsRequestedSchema(
            type="object",
            properties={"approve": t.BooleanSchema(type="boolean", title="Approve")},
            required=["approve"],
        )
        answer = await ctx.elicit(
            t.ElicitRequestFormParams(message=f"Allow {what}?", requested_schema=schema)
        )
        content = answer.content if isinstance(answer.content, dict) else {}
        if answer.action != "accept" or content.get("approve") is not True:
            raise ToolExecutionError(f"{what} was not approved ({answer.action})")

    @server.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"{name}: {text}"

    @server.tool(annotations=READ_ONLY)
    async def count(ctx: Context, steps: int = 3) -> str:
        """Reports progress at each step."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}")
            await anyio.sleep(0.02)
        return f"counted {steps}"

    @server.tool(annotations=READ_ONLY)
    async def sample(prompt: str, ctx: Context) -> str:
        """Ask the client's model."""
        params = t.CreateMessageRequestParams(
            max_tokens=16,
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text=prompt))],
        )
        result = await ctx.sample(params)
        text = result.content.text if isinstance(result.content, t.TextContent) else "?"
        return f"{result.model}: {text}"

    @server.tool(annotations=READ_ONLY)
    async def wait(marker: str) -> str:
        """Runs until cancelled."""
        await anyio.Path(marker + ".started").touch()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await anyio.Path(marker + ".cancelled").touch()
            raise
        return "never"

    @server.tool()
    async def write(value: str, ctx: Context) -> str:
        """Not read-only: needs approval."""
        await confirm(ctx, "write")
        return f"wrote {value}"

    @server.tool(annotations=t.ToolAnnotations(read_only_hint=False, destructive_hint=True))
    async def wipe(ctx: Context) -> str:
        """Destructive: needs approval."""
        await confirm(ctx, "wipe")
        return "wiped"

    return server


class OneToken:
    """Accepts the one token of ``$GATEWAY_UPSTREAM_TOKEN`` (compared in constant time)."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def verify(self, token: str, resource: str) -> Principal:
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            raise InvalidToken("unknown token")
        return Principal(subject="gateway", client_id="mcpbind-host", scopes=frozenset())


def protected() -> Server:
    server = Server("protected", version="1.0.0")

    @server.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"protected: {text}"

    @server.tool(annotations=READ_ONLY)
    def whoami(ctx: Context) -> str:
        """The authenticated caller's subject."""
        principal = ctx.principal
        return f"subject {principal.subject if principal else '(none)'}"

    return server


def serve_http(app: StreamableHTTPApp) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from support.live_server import serve_on_free_port

    serve_on_free_port(app)


def main(kind: str, transport: str = "stdio") -> None:
    if kind == "modern":
        server = surface("modern", self_approval=False)
        server.stateless = StatelessOptions(versions=STATELESS_VERSIONS)
        serve_stdio(server)
    elif kind == "standin" and transport == "stdio":
        serve_stdio(surface("standin", self_approval=True))
    elif kind == "standin":
        serve_http(StreamableHTTPApp(surface("standin", self_approval=True), path="/mcp"))
    elif kind == "protected":
        app = StreamableHTTPApp(protected(), path="/mcp")
        # The resource URL is not known before the port is: tokens are not audience-bound
        # here (OneToken ignores ``resource``), so any http URL names this server.
        app.auth = ResourceServer(
            OneToken(os.environ[TOKEN_ENV]),
            resource="http://127.0.0.1/mcp",
            authorization_servers=["http://127.0.0.1/as"],
        )
        serve_http(app)
    else:
        raise SystemExit(f"unknown kind {kind!r}")


if __name__ == "__main__":
    main(*sys.argv[1:])
