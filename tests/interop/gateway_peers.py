"""The upstream servers of the gateway interop tests, and a plain server with the same surface.

Run as ``python gateway_peers.py KIND [stdio|http]``:

* ``modern``: stdio, 2026-07-28 only (server/discover, no initialize): ``echo``, ``count``
  (progress), ``sample`` (asks the client's model), ``wait`` (runs until cancelled), ``write``
  and ``wipe`` (no read-only annotation: the Host's ``auto`` policy asks before running them).
* ``protected``: Streamable HTTP on a free port (prints ``PORT <n>``), behind OAuth
  (2025-11-25 basic/authorization.mdx): the MCP endpoint ``/mcp`` takes only
  ``Authorization: Bearer $GATEWAY_UPSTREAM_TOKEN`` (else 401 with the RFC 9728 challenge,
  §Authorization Server Location), and the same process is the authorization server
  (``/as``: RFC 8414 metadata, a token endpoint that issues that token for the
  client-credentials grant to client ``gateway`` with secret ``$GATEWAY_CLIENT_SECRET``,
  sent as HTTP Basic or in the form). ``whoami`` answers with the caller's subject.
* ``standin stdio|http``: the whole surface the downstream clients exercise, on both eras and
  on one server, with approval asked by the tools themselves (``write`` and ``wipe`` elicit a
  confirmation and refuse when it is declined): the plain mcpbind server the harnesses run
  against where no gateway is available.

``wait`` leaves ``MARKER.started`` when it starts and ``MARKER.cancelled`` when a
``notifications/cancelled`` stops it, so a test sees that a downstream cancel reached the
server that ran the tool.
"""

from __future__ import annotations

import base64
import hmac
import os
import socket
import sys
from typing import Any
from urllib.parse import unquote_plus

import anyio
import uvicorn

from mcpbind import Context, Server, ToolExecutionError, serve_stdio
from mcpbind import types as t
from mcpbind.auth.server import InvalidToken, Principal, ResourceServer
from mcpbind.http import StreamableHTTPApp
from mcpbind.server.options import StatelessOptions
from mcpbind.versions import STATELESS_VERSIONS

READ_ONLY = t.ToolAnnotations(read_only_hint=True)
TOKEN_ENV = "GATEWAY_UPSTREAM_TOKEN"
SECRET_ENV = "GATEWAY_CLIENT_SECRET"


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
        # The marker's write is inside the try: a worker thread makes the file, and a client
        # that cancels once it sees the file can reach this handler before it resumed from
        # that write (the cancel then lands on it, not on sleep_forever).
        try:
            await anyio.Path(marker + ".started").touch()
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


def serve_http(app: Any, sock: socket.socket | None = None) -> None:
    """Serve ``app`` on 127.0.0.1 (a free port, or ``sock``), printing ``PORT <n>`` first."""
    sock = sock or bound()
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="critical", lifespan="on", timeout_graceful_shutdown=1)
    uvicorn.Server(config).run(sockets=[sock])


def bound() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def with_authorization_server(mcp: StreamableHTTPApp, base: str) -> Any:
    """``mcp`` behind the bearer check, and the authorization server at ``/as`` beside it."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    issuer = f"{base}/as"
    token, secret = os.environ[TOKEN_ENV], os.environ[SECRET_ENV]
    mcp.auth = ResourceServer(
        OneToken(token), resource=f"{base}/mcp", authorization_servers=[issuer]
    )

    async def metadata(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "issuer": issuer,
                "token_endpoint": f"{issuer}/token",
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": [
                    "client_secret_basic",
                    "client_secret_post",
                ],
            }
        )

    async def issue(request: Request) -> JSONResponse:
        form = await request.form()
        client, given = form.get("client_id"), form.get("client_secret")
        basic = request.headers.get("authorization", "")
        if basic.startswith("Basic "):
            pair = base64.b64decode(basic.removeprefix("Basic ")).decode()
            client, _, given = (unquote_plus(part) for part in pair.partition(":"))
        if form.get("grant_type") != "client_credentials":
            return JSONResponse({"error": "unsupported_grant_type"}, 400)
        if client != "gateway" or not hmac.compare_digest(str(given).encode(), secret.encode()):
            return JSONResponse({"error": "invalid_client"}, 401)
        return JSONResponse({"access_token": token, "token_type": "Bearer", "expires_in": 3600})

    authorization = Starlette(
        routes=[
            Route("/.well-known/oauth-authorization-server/as", metadata),
            Route("/as/token", issue, methods=["POST"]),
        ]
    )

    async def app(scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        target = authorization if path.startswith(("/as/", "/.well-known/oauth-auth")) else mcp
        await target(scope, receive, send)

    return app


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
        sock = bound()
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        app = with_authorization_server(StreamableHTTPApp(protected(), path="/mcp"), base)
        serve_http(app, sock)
    else:
        raise SystemExit(f"unknown kind {kind!r}")


if __name__ == "__main__":
    main(*sys.argv[1:])
