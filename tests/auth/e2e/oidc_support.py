"""oidc-provider (tests/auth/oidc, pinned) as a real authorization server for the end-to-end
tests, and what the tests need around it: tokens by client credentials, a headless run of
the authorization-code flow (PKCE, dynamic registration, the automatic login of ``alice``),
and a protected mcpbind server on uvicorn.

Pre-registered clients of provider.mjs: ``mcp-service`` (JWT access tokens), ``mcp-short``
(JWT access tokens valid 2 s; so are those of registered clients named
``short-lived``), ``mcp-opaque`` (opaque tokens), ``mcp-rs`` (the resource
server, for introspection). Scopes: ``mcp:read mcp:write mcp:admin``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

import httpx2
from support.live_server import LiveServer, stop_process

from mcpbind import Context, Server
from mcpbind.auth.server import JWTVerifier, ResourceServer, TokenVerifier
from mcpbind.http import StreamableHTTPApp

ROOT = Path(__file__).resolve().parents[3]
OIDC_DIR = ROOT / "tests" / "auth" / "oidc"
INSTALLED = OIDC_DIR / "node_modules" / "oidc-provider"
SECRETS = {
    "mcp-service": "service-secret",
    "mcp-short": "short-secret",
    "mcp-opaque": "opaque-secret",
    "mcp-rs": "rs-secret",
}


def node_binary() -> str:
    """The conformance suite's pinned Node 24 (conformance/node) when there, else ``node``."""
    pinned = ROOT / "conformance" / "node" / "node_modules" / ".bin" / "node"
    return str(pinned) if pinned.exists() else (shutil.which("node") or "node")


@dataclass
class Provider:
    issuer: str
    process: subprocess.Popen[bytes]

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/jwks"

    @property
    def introspection_url(self) -> str:
        return f"{self.issuer}/token/introspection"

    def client_credentials(self, client: str, resource: str, scope: str) -> str:
        """An access token for ``resource`` with ``scope``, by the client-credentials grant."""
        reply = httpx2.post(
            f"{self.issuer}/token",
            data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
            auth=(client, SECRETS[client]),
            timeout=30,
        )
        assert reply.status_code == 200, reply.text
        token: str = reply.json()["access_token"]
        return token

    def register(self, redirect_uri: str) -> str:
        """Dynamic client registration (RFC 7591) of a public client; its ``client_id``."""
        reply = httpx2.post(
            f"{self.issuer}/reg",
            json={
                "redirect_uris": [redirect_uri],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "client_name": "mcpbind e2e",
            },
            timeout=30,
        )
        assert reply.status_code == 201, reply.text
        client_id: str = reply.json()["client_id"]
        return client_id

    def authorization_code(
        self, client_id: str, redirect_uri: str, resource: str, scope: str
    ) -> dict[str, Any]:
        """The authorization-code flow with PKCE S256, driven headless: the token response."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": challenge.rstrip(b"=").decode(),
            "code_challenge_method": "S256",
            "state": secrets.token_urlsafe(16),
            "scope": scope,
            "resource": resource,
        }
        landed = follow_authorization(f"{self.issuer}/auth?{urlencode(query)}", redirect_uri)
        params = dict(parse_qsl(urlsplit(landed).query))
        assert params.get("state") == query["state"] and params.get("iss") == self.issuer
        return self._token(
            grant_type="authorization_code",
            code=params["code"],
            redirect_uri=redirect_uri,
            code_verifier=verifier,
            client_id=client_id,
            resource=resource,
        )

    def refresh(self, client_id: str, refresh_token: str, resource: str) -> dict[str, Any]:
        return self._token(
            grant_type="refresh_token",
            refresh_token=refresh_token,
            client_id=client_id,
            resource=resource,
        )

    def _token(self, **form: str) -> dict[str, Any]:
        reply = httpx2.post(f"{self.issuer}/token", data=form, timeout=30)
        assert reply.status_code == 200, reply.text
        tokens: dict[str, Any] = reply.json()
        return tokens


def follow_authorization(url: str, redirect_uri: str, max_hops: int = 12) -> str:
    """What a browser does with an authorization URL at this provider: follow its redirects
    (keeping its cookies) through the automatic login and consent until one goes to
    ``redirect_uri``; that URL (``code``, ``state``, ``iss``) is returned."""
    with httpx2.Client(timeout=30) as browser:
        for _ in range(max_hops):
            reply = browser.get(url)
            assert reply.status_code in (302, 303), f"{reply.status_code}: {reply.text[:300]}"
            url = urljoin(url, reply.headers["location"])
            if url.startswith(redirect_uri):
                return url
    raise AssertionError(f"no redirect to {redirect_uri} after {max_hops} hops")


@contextmanager
def run_provider() -> Iterator[Provider]:
    """Start provider.mjs on 127.0.0.1 (a free port); stop it by its PID on exit."""
    process = subprocess.Popen(
        [node_binary(), str(OIDC_DIR / "provider.mjs")],
        cwd=OIDC_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        assert line.startswith("{"), f"oidc-provider did not start: {line!r}"
        yield Provider(json.loads(line)["issuer"], process)
    finally:
        stop_process(process)


def protected_server() -> Server:
    """The MCP server behind the bearer check: tools with and without declared scopes, and
    one that shows the principal it sees."""
    server = Server("protected", "1.0.0")

    @server.tool(description="Who is calling, as the handler context says")
    def whoami(ctx: Context) -> dict[str, Any]:
        p = ctx.principal
        assert p is not None
        return {"subject": p.subject, "client": p.client_id, "scopes": sorted(p.scopes)}

    @server.tool(description="Needs mcp:write", scopes=["mcp:write"])
    def write_note(text: str) -> str:
        return f"wrote {text}"

    @server.resource("notes://secret", scopes=["mcp:admin"])
    def secret() -> str:
        return "the secret note"

    return server


@contextmanager
def serve_protected(
    issuer: str, verifier: TokenVerifier | None = None, **auth: Any
) -> Iterator[LiveServer]:
    """uvicorn on 127.0.0.1 serving :func:`protected_server` at ``/mcp`` behind a
    ``ResourceServer`` that trusts ``issuer`` (a JWT verifier over its JWKS, no clock
    leeway, unless ``verifier`` is given)."""
    app = StreamableHTTPApp(protected_server(), path="/mcp")
    live = LiveServer(app)
    app.auth = ResourceServer(
        verifier or JWTVerifier(f"{issuer}/jwks", issuer=issuer, leeway=0),
        resource=live.url,
        authorization_servers=[issuer],
        scopes_supported=["mcp:read"],
        **auth,
    )
    live.start()
    try:
        yield live
    finally:
        live.stop()
