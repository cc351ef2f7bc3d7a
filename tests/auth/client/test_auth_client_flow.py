"""authorization.mdx §Authorization Flow Steps, §Token Handling, §Refresh: the mcpbind
Client against a real (small) authorization server and a protected MCP endpoint."""

from __future__ import annotations

import os
import stat
import sys
import textwrap

import anyio
import pytest
from auth_client_support import AuthWorld

from mcpbind import Client
from mcpbind.auth.client import FileTokenStore, HeadlessRedirect, OAuth

pytestmark = pytest.mark.anyio


def oauth(**options: object) -> OAuth:
    return OAuth(redirect_handler=HeadlessRedirect(), client_name="tests", **options)  # type: ignore[arg-type]


async def test_authorization_code_flow_reaches_the_protected_server(world: AuthWorld) -> None:
    async with Client(world.url, auth=oauth()) as client:
        result = await client.call("echo", {"text": "hi"})
    assert "hi" in str(result.content)
    paths = world.paths()
    assert paths[:2] == ["/mcp", "/.well-known/oauth-protected-resource/mcp"]
    for step in ("/as/register", "/as/authorize", "/as/token"):
        assert step in paths
    authorize = next(data for _, path, _, data in world.log if path == "/as/authorize")
    assert authorize["code_challenge_method"] == "S256"
    assert authorize["resource"] == world.url  # RFC 8707
    token = next(data for _, path, _, data in world.log if path == "/as/token")
    assert token["resource"] == world.url and token["code_verifier"]


async def test_expired_token_is_refreshed_and_rotated(world: AuthWorld) -> None:
    world.knobs.expires_in = 1  # expired at once (30 s skew)
    auth = oauth()
    async with Client(world.url, auth=auth) as client:
        first = auth.tokens
        assert first is not None and first.refresh_token
        await client.call("echo", {"text": "again"})
        assert auth.tokens is not None and auth.tokens.access_token != first.access_token
        assert auth.tokens.refresh_token != first.refresh_token  # rotated
    grants = [d.get("grant_type") for _, p, _, d in world.log if p == "/as/token"]
    assert "refresh_token" in grants
    assert [p for p in world.paths() if p == "/as/authorize"] == ["/as/authorize"]


async def test_file_store_is_0600_and_a_second_process_reuses_the_token(
    world: AuthWorld, tmp_path: os.PathLike[str]
) -> None:
    path = os.path.join(tmp_path, "cfg", "tokens.json")
    async with Client(world.url, auth=oauth(token_store=FileTokenStore(path))) as client:
        await client.list_tools()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    before = world.paths().count("/as/authorize")
    script = textwrap.dedent(
        f"""
        import anyio
        from mcpbind import Client
        from mcpbind.auth.client import FileTokenStore, OAuth, HeadlessRedirect
        async def main():
            auth = OAuth(redirect_handler=HeadlessRedirect(), token_store=FileTokenStore({path!r}))
            async with Client({world.url!r}, auth=auth) as client:
                print(len((await client.list_tools()).tools))
        anyio.run(main)
        """
    )
    with anyio.fail_after(60):
        out = await anyio.run_process([sys.executable, "-c", script], check=True)
    assert out.stdout.decode().strip() == "1"
    assert world.paths().count("/as/authorize") == before  # no new authorization


async def test_scope_from_prm_and_offline_access_only_when_listed(world: AuthWorld) -> None:
    world.knobs.prm = {"scopes_supported": ["mcp:read"]}
    async with Client(world.url, auth=oauth()) as client:
        await client.list_tools()
    first = next(d for _, p, _, d in world.log if p == "/as/authorize")
    assert first["scope"] == "mcp:read"
    world.knobs.metadata = {"scopes_supported": ["mcp:read", "offline_access"]}
    world.log.clear()
    async with Client(world.url, auth=oauth()) as client:
        await client.list_tools()
    second = next(d for _, p, _, d in world.log if p == "/as/authorize")
    assert second["scope"] == "mcp:read offline_access"


# authorization.mdx §Scope Challenge Handling (step-up), SEP-2350 union, retry limit
async def test_step_up_on_insufficient_scope_keeps_earlier_scopes(world: AuthWorld) -> None:
    world.knobs.prm = {"scopes_supported": ["mcp:read"]}
    async with Client(world.url, auth=oauth(), protocol_version="2025-11-25") as client:
        world.knobs.forbid = 1
        await client.list_tools()
    scopes = [d.get("scope") for _, p, _, d in world.log if p == "/as/authorize"]
    assert scopes == ["mcp:read", "mcp:read mcp:write"]


async def test_step_up_gives_up_after_max_step_up(world: AuthWorld) -> None:
    from mcpbind.protocol import McpError

    async with Client(world.url, auth=oauth(), protocol_version="2025-11-25") as client:
        world.knobs.forbid = 100
        with pytest.raises(McpError, match="insufficient_scope after 2 step-up"):
            await client.list_tools()
    assert world.paths().count("/as/authorize") == 3  # the first, then two step-ups


async def test_a_stored_token_the_server_refuses_leads_to_a_new_authorization(
    world: AuthWorld, tmp_path: os.PathLike[str]
) -> None:
    store = FileTokenStore(os.path.join(tmp_path, "t.json"))
    world.knobs.refresh = False
    async with Client(world.url, auth=oauth(token_store=store)) as client:
        await client.list_tools()
    world.valid.clear()  # the server forgot (revoked) every token
    async with Client(world.url, auth=oauth(token_store=store)) as client:
        assert (await client.list_tools()).tools
    assert world.paths().count("/as/authorize") == 2


async def test_a_refused_fresh_token_is_an_error_not_a_loop(world: AuthWorld) -> None:
    from mcpbind.protocol import McpError

    world.valid = _NeverValid()
    with pytest.raises(McpError, match="refused the new access token"):
        async with Client(world.url, auth=oauth(), protocol_version="2025-11-25") as client:
            await client.list_tools()
    assert world.paths().count("/as/authorize") == 1


class _NeverValid(set[str]):
    def add(self, _: str) -> None:
        pass


# Workload identity federation (SEP-1933, RFC 7523 §2.1): a refused assertion is final
async def test_jwt_bearer_refusal_is_surfaced_without_retry(world: AuthWorld) -> None:
    from mcpbind.auth.client import JwtBearer
    from mcpbind.protocol import McpError

    world.knobs.token_error = {"error": "invalid_grant", "error_description": "expired"}
    with pytest.raises(McpError, match="invalid_grant: expired"):
        async with Client(world.url, auth=JwtBearer("eyJ.workload.jwt"), timeout=30) as client:
            await client.list_tools()
    tokens = [d for _, p, _, d in world.log if p == "/as/token"]
    assert len(tokens) == 1
    assert tokens[0]["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert tokens[0]["assertion"] == "eyJ.workload.jwt" and tokens[0]["resource"] == world.url


async def test_a_stored_token_is_not_reused_once_the_client_credentials_change(
    world: AuthWorld, tmp_path: os.PathLike[str]
) -> None:
    """Issue 31 item 7: tokens are cached per (issuer, resource); one obtained with a client
    secret is dropped, not served, when the same client id comes with another secret (or
    key), and a new one is obtained with the new credentials. Same credentials: reused."""
    from mcpbind.auth.client import ClientCredentials

    store = FileTokenStore(os.path.join(tmp_path, "tokens.json"))

    async def connect(secret: str) -> str:
        auth = ClientCredentials("svc", client_secret=secret, token_store=store)
        async with Client(world.url, auth=auth) as client:
            await client.list_tools()
        assert auth.tokens is not None
        return auth.tokens.access_token

    def grants() -> int:
        return sum(1 for _, path, _, _ in world.log if path == "/as/token")

    first = await connect("old-secret")
    assert grants() == 1
    assert await connect("old-secret") == first and grants() == 1  # cached, reused
    changed = await connect("new-secret")
    assert changed != first and grants() == 2
    kept = store.path.read_text()
    assert "new-secret" not in kept and "old-secret" not in kept  # only a digest is stored
