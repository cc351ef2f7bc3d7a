"""The Host's per-server authorization (mcpbind.host.auth): config shapes, checks, and a
Host reaching a protected server with a token from the environment and with OAuth through
the loopback redirect receiver."""

from __future__ import annotations

import os
import threading

import httpx2
import pytest
from auth_client_support import AuthWorld

from mcpbind.auth.client import LoopbackRedirect, OAuth
from mcpbind.host import Backoff, Host, HostEvent
from mcpbind.host.auth import http_options
from mcpbind.host.config import ConfigError, OAuthSettings
from mcpbind.host.config_file import parse_config, parse_server

pytestmark = pytest.mark.anyio


def test_shapes_users_write_are_accepted() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "a": {
                    "url": "https://x.example/mcp",
                    "headers": {"Authorization": "Bearer ${env:T}"},
                },
                "b": {"url": "https://x.example/mcp", "bearerTokenEnv": "T"},
                "c": {"url": "https://x.example/mcp", "oauth": True},
                "d": {
                    "url": "https://x.example/mcp",
                    "oauth": {"clientId": "id", "clientSecret": "${S}", "callbackPort": 33418},
                },
            }
        }
    )
    d = config.mcp_servers["d"].oauth
    assert isinstance(d, OAuthSettings) and d.client_id == "id" and d.callback_port == 33418


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"command": "x", "oauth": True}, "oauth"),
        ({"url": "https://x.example/mcp", "bearerTokenEnv": "not a name"}, "bearerTokenEnv"),
        ({"url": "https://x.example/mcp", "oauth": {"clientID": "typo"}}, None),
        ({"url": "https://x.example/mcp", "oauth": {"grant": "client_credentials"}}, "oauth"),
    ],
)
def test_bad_auth_keys_name_the_server_and_key(entry: dict[str, object], key: str | None) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_server("s", entry)
    assert caught.value.server == "s"
    if key is not None:
        assert caught.value.key == key


def test_environment_values_are_read_when_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = parse_server(
        "s", {"url": "https://x.example/mcp", "headers": {"Authorization": "Bearer ${env:TOK}"}}
    )
    monkeypatch.delenv("TOK", raising=False)
    with pytest.raises(ConfigError, match="TOK is not set"):
        http_options("s", entry)
    monkeypatch.setenv("TOK", "abc")
    assert http_options("s", entry)["headers"] == {"Authorization": "Bearer abc"}


async def test_host_with_a_bearer_token_from_the_environment(
    world: AuthWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.valid.add("token-from-env")
    monkeypatch.setenv("WORLD_TOKEN", "token-from-env")
    config = {"mcpServers": {"p": {"url": world.url, "bearerTokenEnv": "WORLD_TOKEN"}}}
    async with Host(config) as host:
        assert host.servers()[0].status == "running", host.servers()[0].error
        result = await host.client("p").call("echo", {"text": "via host"})
    assert "via host" in str(result.content)


def browse(url: str) -> None:
    """A browser that consents at once: follow the redirects to the loopback receiver."""

    def go() -> None:
        with httpx2.Client(follow_redirects=True, timeout=10) as client:
            client.get(url)

    threading.Thread(target=go, daemon=True).start()


async def test_loopback_receiver_gets_the_redirect(
    world: AuthWorld, tmp_path: os.PathLike[str]
) -> None:
    from mcpbind import Client
    from mcpbind.auth.client import FileTokenStore

    handler = LoopbackRedirect(open_browser=browse, timeout=30)
    assert handler.redirect_uri.startswith("http://127.0.0.1:")
    store = FileTokenStore(os.path.join(tmp_path, "t.json"))
    auth = OAuth(redirect_handler=handler, token_store=store)
    async with Client(world.url, auth=auth) as client:
        assert (await client.list_tools()).tools[0].name == "echo"
    token = next(d for _, p, _, d in world.log if p == "/as/token")
    assert token["redirect_uri"] == handler.redirect_uri


FAST = Backoff(initial=0.02, factor=2.0, maximum=0.1, max_attempts=6)


async def test_an_unset_variable_names_the_server_and_is_not_retried(
    world: AuthWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31 item 6: a missing ``${env:X}`` is a configuration error of the server named
    in the config (not its URL), and retrying cannot set the variable: no retry."""
    monkeypatch.delenv("NOT_SET_TOKEN", raising=False)
    headers = {"Authorization": "Bearer ${env:NOT_SET_TOKEN}"}
    config = {"mcpServers": {"notes": {"url": world.url, "headers": headers}}}
    events: list[HostEvent] = []
    async with Host(config, backoff=FAST, on_event=events.append) as host:
        state = host.servers()[0]
    assert state.status == "failed", state
    assert state.error is not None and state.error.startswith("server 'notes', key 'headers'")
    assert "NOT_SET_TOKEN is not set" in state.error and world.url not in state.error
    assert state.attempts == 1
    assert not any(e.kind == "retrying" for e in events)


@pytest.mark.parametrize("forbid", [False, True], ids=["401", "403"])
async def test_refused_credentials_are_not_retried(
    world: AuthWorld, monkeypatch: pytest.MonkeyPatch, forbid: bool
) -> None:
    """Issue 31 item 6: a server that refuses the configured token (401) or its scopes (403)
    will refuse it again: one failure naming the status, no retry."""
    monkeypatch.setenv("WORLD_TOKEN", "a-token")
    if forbid:
        world.valid.add("a-token")
        world.knobs.forbid = 100
    config = {"mcpServers": {"p": {"url": world.url, "bearerTokenEnv": "WORLD_TOKEN"}}}
    events: list[HostEvent] = []
    async with Host(config, backoff=FAST, on_event=events.append) as host:
        state = host.servers()[0]
    assert state.status == "failed", state
    assert state.error is not None and f"HTTP {403 if forbid else 401}" in state.error
    assert state.error.endswith("(not retried)"), state.error
    assert state.attempts == 1
    assert not any(e.kind == "retrying" for e in events)


async def test_an_unreadable_private_key_file_is_a_config_error_not_retried(
    world: AuthWorld, tmp_path: os.PathLike[str]
) -> None:
    """The sibling of the unset variable: ``oauth.privateKeyFile`` that cannot be read names
    the server and the key, and is not retried."""
    missing = os.path.join(tmp_path, "no-such-key.pem")
    oauth = {"grant": "client_credentials", "clientId": "svc", "privateKeyFile": missing}
    config = {"mcpServers": {"robot": {"url": world.url, "oauth": oauth}}}
    events: list[HostEvent] = []
    async with Host(config, backoff=FAST, on_event=events.append) as host:
        state = host.servers()[0]
    assert state.status == "failed", state
    assert state.error is not None and state.error.startswith("server 'robot', key 'oauth'")
    assert "cannot read privateKeyFile" in state.error and missing in state.error
    assert state.attempts == 1
    assert not any(e.kind == "retrying" for e in events)
