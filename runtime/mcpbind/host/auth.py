"""Per-server authorization: a server entry's auth keys made into the HTTP headers and the
OAuth provider it is connected with. The keys (read and checked with the rest of the entry in
:mod:`.config`) come in the shapes MCP hosts already use:

::

    "remote": {"url": "https://mcp.example.com/mcp",
               "headers": {"Authorization": "Bearer ${env:EXAMPLE_TOKEN}"}}
    "github": {"url": "https://api.example.com/mcp", "bearerTokenEnv": "GH_TOKEN"}
    "notion": {"url": "https://mcp.example.com/mcp", "oauth": true}
    "corp":   {"url": "https://mcp.corp.example/mcp",
               "oauth": {"clientId": "abc", "clientSecret": "${env:CORP_SECRET}",
                         "callbackPort": 33418, "scopes": ["mcp:read"]}}
    "robot":  {"url": "https://mcp.corp.example/mcp",
               "oauth": {"grant": "client_credentials", "clientId": "svc",
                         "clientSecret": "${env:SVC_SECRET}"}}

* ``${env:NAME}`` (VS Code, Cursor) and ``${NAME}`` (Claude Code) in ``headers`` values and
  in ``oauth.clientSecret`` are read from the environment when the server is connected; an
  unset variable is an error naming it (never an empty credential).
* ``bearerTokenEnv``: the name of a variable holding a bearer token.
* ``oauth``: ``true`` for OAuth with dynamic registration (or a Client ID Metadata Document
  via ``clientMetadataUrl``), or an object with a pre-registered client; the browser opens
  on the loopback redirect (``callbackPort``, default any free port), and tokens are kept
  in the user's token file (:class:`mcpbind.auth.client.FileTokenStore`).
"""

from __future__ import annotations

import os
import re
from typing import Any

from .config import ConfigError, OAuthSettings, ServerConfig

__all__ = ["expand_env", "http_options"]

_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: str, server: str, key: str) -> str:
    """``value`` with ``${env:NAME}`` / ``${NAME}`` replaced from the environment."""

    def one(match: re.Match[str]) -> str:
        found = os.environ.get(match.group(1))
        if found is None:
            raise ConfigError(server, key, f"environment variable {match.group(1)} is not set")
        return found

    return _VAR.sub(one, value)


def http_options(name: str, config: ServerConfig) -> dict[str, Any]:
    """``headers`` and ``auth`` for :func:`mcpbind.http.client.connect_http`."""
    headers = {k: expand_env(v, name, "headers") for k, v in config.headers.items()}
    if config.bearer_token_env is not None:
        token = os.environ.get(config.bearer_token_env)
        if not token:
            raise ConfigError(name, "bearerTokenEnv", f"{config.bearer_token_env} is not set")
        headers["Authorization"] = f"Bearer {token}"
    options: dict[str, Any] = {"headers": headers}
    oauth = config.oauth
    if oauth is None or oauth is False:
        return options
    settings = oauth if isinstance(oauth, OAuthSettings) else OAuthSettings()
    options["auth"] = _build(name, settings)
    return options


def _build(name: str, settings: OAuthSettings) -> Any:
    from ..auth.client import ClientCredentials, FileTokenStore, LoopbackRedirect, OAuth

    secret = (
        expand_env(settings.client_secret, name, "oauth")
        if settings.client_secret is not None
        else None
    )
    key = None
    if settings.private_key_file is not None:
        path = os.path.expanduser(settings.private_key_file)
        try:
            with open(path) as f:
                key = f.read()
        except OSError as exc:  # a configuration error: retrying cannot help
            raise ConfigError(
                name, "oauth", f"cannot read privateKeyFile {path!r}: {exc.strerror or exc}"
            ) from None
    scopes = settings.scopes.split() if isinstance(settings.scopes, str) else settings.scopes
    store = FileTokenStore()
    if settings.grant == "client_credentials":
        assert settings.client_id is not None
        return ClientCredentials(
            settings.client_id,
            client_secret=secret,
            private_key=key,
            scopes=scopes,
            token_store=store,
        )
    return OAuth(
        redirect_handler=LoopbackRedirect(settings.callback_port or 0),
        client_name="mcpbind host",
        client_id=settings.client_id,
        client_secret=secret,
        private_key=key,
        client_metadata_url=settings.client_metadata_url,
        scopes=scopes,
        token_store=store,
    )
