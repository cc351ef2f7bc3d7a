"""Issue 31 item 4: the CLI says why a server refused a token (401/403), as the server's
``WWW-Authenticate`` challenge said it, with advice that fits the reason; against a real
mcpbind resource server (JWT verifier, a real JWKS endpoint) on 127.0.0.1."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from click.testing import CliRunner, Result
from server_support import ISSUER, Endpoint, Keys
from support.live_server import LiveServer

from mcpbind import Server
from mcpbind.auth.server import JWTVerifier, ResourceServer
from mcpbind.cli import main
from mcpbind.cli.errors import EXIT_AUTH
from mcpbind.http import StreamableHTTPApp


def _server() -> Server:
    server = Server("notes", "1.0.0")

    @server.tool(scopes=["notes:write"])
    def write(text: str) -> str:
        return text

    @server.tool()
    def read() -> str:
        return "open"

    return server


@contextmanager
def _protected(jwks: Endpoint) -> Iterator[str]:
    app = StreamableHTTPApp(_server(), path="/mcp")
    live = LiveServer(app)
    app.auth = ResourceServer(
        JWTVerifier(jwks.url, issuer=ISSUER), resource=live.url, authorization_servers=[ISSUER]
    )
    live.start()
    try:
        yield live.url
    finally:
        live.stop()


def _cli(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), prog_name="mcpbind")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def _with(token: str, url: str, *args: str) -> Result:
    return _cli(*args[:1], url, *args[1:], "--header", f"Authorization: Bearer {token}")


def test_an_expired_token_is_named_with_its_advice(jwks: Endpoint, keys: Keys) -> None:
    with _protected(jwks) as url:
        token = keys.sign(aud=url, exp=int(time.time()) - 3600, iat=int(time.time()) - 7200)
        result = _with(token, url, "ls")
    assert result.exit_code == EXIT_AUTH, result.output
    line = result.stderr.strip()
    assert "the token has expired" in line and "get a new token" in line, line
    assert token not in result.output
    assert len(line.splitlines()) == 1


def test_a_token_for_another_resource_is_named(jwks: Endpoint, keys: Keys) -> None:
    with _protected(jwks) as url:
        result = _with(keys.sign(aud="https://elsewhere.example/mcp"), url, "ls")
    assert result.exit_code == EXIT_AUTH, result.output
    line = result.stderr.strip()
    assert "is for another resource" in line and "issued for another server" in line, line


def test_missing_scopes_are_named_with_the_options_that_ask_for_them(
    jwks: Endpoint, keys: Keys
) -> None:
    with _protected(jwks) as url:
        token = keys.sign(aud=url, scope="mcp:read")
        listed = _with(token, url, "ls")
        refused = _with(token, url, "call", "write", "--args", '{"text": "hi"}')
    # A tool whose scopes the token lacks is not listed to it (hidden by default); calling it
    # by name still gets the 403 that names the scope.
    assert listed.exit_code == 0, listed.output
    assert "read()" in listed.stdout and "write(" not in listed.stdout, listed.output
    assert refused.exit_code == EXIT_AUTH, refused.output
    line = refused.stderr.strip()
    assert "insufficient scope" in line and "notes:write" in line, line
    assert "--scope notes:write" in line, line


def test_no_token_still_points_at_auth(jwks: Endpoint) -> None:
    with _protected(jwks) as url:
        result = _cli("ls", url)
    assert result.exit_code == EXIT_AUTH, result.output
    assert "run again with --auth" in result.stderr, result.stderr
