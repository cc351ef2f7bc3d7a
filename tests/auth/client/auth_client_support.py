"""A small OAuth authorization server and a protected MCP endpoint on one uvicorn, for the
client tests: real HTTP on 127.0.0.1, every request recorded, each misbehaviour a knob.

Routes: ``/mcp`` (an mcpbind server behind a bearer check), the protected-resource
metadata at ``/.well-known/oauth-protected-resource/mcp``, and the authorization server
at issuer ``<base>/as``: metadata, ``/as/authorize`` (redirects at once with code, state,
iss), ``/as/token`` and ``/as/register``.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from support.live_server import LiveServer

from mcpbind import Server
from mcpbind.http import StreamableHTTPApp


def make_server() -> Server:
    server = Server("protected", "1.0.0")

    @server.tool(description="Echo the text back")
    def echo(text: str) -> str:
        return text

    return server


@dataclass
class Knobs:
    """What the authorization server does; change them before the client connects."""

    metadata: dict[str, Any] = field(default_factory=dict)  # merged over the defaults
    prm: dict[str, Any] = field(default_factory=dict)  # merged over the PRM
    iss: str | None = "correct"  # "correct", None (omit), or a literal value
    token_error: dict[str, Any] | None = None
    expires_in: int = 3600
    refresh: bool = True
    redirect_mcp_to: str | None = None  # answer POST /mcp with a 307 to this URL
    forbid: int = 0  # answer this many authorized POSTs with 403 insufficient_scope


class AuthWorld:
    """The servers, their request log and the tokens they accept."""

    def __init__(self) -> None:
        self.knobs = Knobs()
        self.log: list[tuple[str, str, dict[str, str], dict[str, str]]] = []
        self.valid: set[str] = set()
        self.refresh_tokens: set[str] = set()
        self._n = itertools.count(1)
        self._challenge: str | None = None
        mcp = StreamableHTTPApp(make_server())
        app = Starlette(
            routes=[
                Route("/.well-known/oauth-protected-resource/mcp", self.prm),
                Route("/.well-known/oauth-authorization-server/as", self.as_metadata),
                Route("/as/authorize", self.authorize),
                Route("/as/token", self.token, methods=["POST"]),
                Route("/as/register", self.register, methods=["POST"]),
                Mount("/mcp", app=self.guard(mcp)),
            ]
        )
        self.live = LiveServer(app)
        self.base = f"http://127.0.0.1:{self.live.port}"
        self.url = f"{self.base}/mcp"
        self.issuer = f"{self.base}/as"

    def paths(self) -> list[str]:
        return [path for _, path, _, _ in self.log]

    async def _record(self, request: Request) -> dict[str, str]:
        form = dict(await request.form()) if request.method == "POST" else {}
        data = {**dict(request.query_params), **{k: str(v) for k, v in form.items()}}
        self.log.append((request.method, request.url.path, dict(request.headers), data))
        return data

    def guard(self, inner: Any) -> Any:
        async def app(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await inner(scope, receive, send)
                return
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.log.append((scope["method"], "/mcp", headers, {}))
            if self.knobs.redirect_mcp_to and scope["method"] == "POST":
                response: Response = RedirectResponse(self.knobs.redirect_mcp_to, 307)
                return await response(scope, receive, send)
            token = headers.get("authorization", "").removeprefix("Bearer ")
            if token not in self.valid:
                challenge = f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
                response = JSONResponse(
                    {"error": "invalid_token"}, 401, headers={"www-authenticate": challenge}
                )
                return await response(scope, receive, send)
            if self.knobs.forbid > 0 and scope["method"] == "POST":
                self.knobs.forbid -= 1
                challenge = 'Bearer error="insufficient_scope", scope="mcp:write"'
                response = JSONResponse(
                    {"error": "insufficient_scope"}, 403, headers={"www-authenticate": challenge}
                )
                return await response(scope, receive, send)
            await inner(scope, receive, send)

        return app

    async def prm(self, request: Request) -> Response:
        await self._record(request)
        body = {"resource": self.url, "authorization_servers": [self.issuer], **self.knobs.prm}
        return JSONResponse(body)

    async def as_metadata(self, request: Request) -> Response:
        await self._record(request)
        body = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "registration_endpoint": f"{self.issuer}/register",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": True,
            **self.knobs.metadata,
        }
        return JSONResponse({k: v for k, v in body.items() if v is not None})

    async def authorize(self, request: Request) -> Response:
        query = await self._record(request)
        self._challenge = query.get("code_challenge")
        params = {"code": f"code-{next(self._n)}", "state": query.get("state", "")}
        if self.knobs.iss == "correct":
            params["iss"] = self.issuer
        elif self.knobs.iss is not None:
            params["iss"] = self.knobs.iss
        return RedirectResponse(f"{query['redirect_uri']}?{urlencode(params)}", 302)

    async def token(self, request: Request) -> Response:
        form = await self._record(request)
        if self.knobs.token_error is not None:
            return JSONResponse(self.knobs.token_error, 400)
        grant = form.get("grant_type")
        if grant == "authorization_code":
            verifier = form.get("code_verifier", "")
            digest = hashlib.sha256(verifier.encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != self._challenge:
                return JSONResponse({"error": "invalid_grant"}, 400)
        elif grant == "refresh_token":
            if form.get("refresh_token") not in self.refresh_tokens:
                return JSONResponse({"error": "invalid_grant"}, 400)
            self.refresh_tokens.discard(form["refresh_token"])  # rotation
        n = next(self._n)
        access = f"secret-access-{n}-{'x' * 20}"
        self.valid.add(access)
        body: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.knobs.expires_in,
        }
        if self.knobs.refresh:
            body["refresh_token"] = f"secret-refresh-{n}-{'y' * 20}"
            self.refresh_tokens.add(body["refresh_token"])
        return JSONResponse(body)

    async def register(self, request: Request) -> Response:
        self.log.append(("POST", "/as/register", dict(request.headers), {}))
        body = await request.json()
        return JSONResponse({"client_id": f"client-{next(self._n)}", **body}, 201)
