"""The mcpbind OAuth client against a real authorization server (oidc-provider) and an
mcpbind resource server: 2025-11-25 / 2026-07-28 basic/authorization §Authorization Flow
Steps (discovery, dynamic client registration, authorization code with PKCE S256 and the
resource indicator, headless redirect), §Refresh Tokens, §Step-Up Authorization Flow, and
§Token Theft (tokens stored 0600, reused by another process without a new authorization),
and the client-credentials extension (extensions/auth/oauth-client-credentials.mdx)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from oidc_support import SECRETS, Provider, serve_protected

from mcpbind import LATEST_HANDSHAKE, Client
from mcpbind.auth.client import ClientCredentials, FileTokenStore, HeadlessRedirect, OAuth

REDIRECT = "http://127.0.0.1:9/callback"
HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.anyio


def _oauth(store: Path, name: str = "e2e") -> OAuth:
    """The OAuth client of a user: registered dynamically as ``name``, headless redirects."""
    return OAuth(
        redirect_handler=HeadlessRedirect(REDIRECT),
        token_store=FileTokenStore(store),
        client_name=name,
    )


async def _whoami(client: Client) -> dict[str, Any]:
    result = await client.call("whoami")
    decoded: dict[str, Any] = msgspec.json.decode(result.structured_content)  # type: ignore[arg-type]
    return decoded


@pytest.mark.parametrize("era", ["auto", LATEST_HANDSHAKE])
async def test_authorization_code_flow_with_pkce_and_registration(
    oidc: Provider, tmp_path: Path, era: str
) -> None:
    store = tmp_path / "tokens.json"
    auth = _oauth(store)
    with serve_protected(oidc.issuer) as live:
        async with Client(live.url, auth=auth, protocol_version=era) as client:
            who = await _whoami(client)
            assert who["subject"] == "alice"  # logged in at oidc-provider's interaction
            assert who["client"] not in (None, "mcp-service")  # registered dynamically
            assert who["scopes"] == ["mcp:read"]  # the metadata's scopes_supported
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert auth.tokens is not None and auth.tokens.access_token not in str(auth)


async def test_step_up_after_403_insufficient_scope(oidc: Provider, tmp_path: Path) -> None:
    auth = _oauth(tmp_path / "tokens.json")
    with serve_protected(oidc.issuer) as live:
        async with Client(live.url, auth=auth) as client:
            assert (await _whoami(client))["scopes"] == ["mcp:read"]
            result = await client.call("write_note", {"text": "stepped up"})
            assert result.content[0].text == "wrote stepped up"  # type: ignore[union-attr]
            # The new token holds the union: what it had and what the challenge asked for.
            assert (await _whoami(client))["scopes"] == ["mcp:read", "mcp:write"]


async def test_expired_access_token_is_refreshed(oidc: Provider, tmp_path: Path) -> None:
    auth = _oauth(tmp_path / "tokens.json", "short-lived")  # 2-second access tokens
    with serve_protected(oidc.issuer) as live:
        async with Client(live.url, auth=auth) as client:
            await _whoami(client)
            assert auth.tokens is not None and auth.tokens.refresh_token
            first = auth.tokens.access_token
            await anyio.sleep(3)  # past the access token's expiry
            assert (await _whoami(client))["subject"] == "alice"
            assert auth.tokens.access_token != first


async def test_stored_tokens_are_reused_by_a_second_process(oidc: Provider, tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    auth = _oauth(store)
    with serve_protected(oidc.issuer) as live:
        async with Client(live.url, auth=auth) as client:
            await _whoami(client)
        assert stat.S_IMODE(store.stat().st_mode) == 0o600
        with anyio.fail_after(120):
            second = await anyio.run_process(
                [sys.executable, str(HERE / "reuse_tokens.py"), live.url, str(store)], check=False
            )
        assert second.returncode == 0, second.stderr.decode()[-2000:]
        assert second.stdout.decode().strip() == "alice"


async def test_client_credentials_grant_by_the_mcpbind_client(oidc: Provider) -> None:
    auth = ClientCredentials("mcp-service", client_secret=SECRETS["mcp-service"])
    with serve_protected(oidc.issuer) as live:
        async with Client(live.url, auth=auth) as client:
            assert await _whoami(client) == {
                "subject": "mcp-service",
                "client": "mcp-service",
                "scopes": ["mcp:read"],
            }
