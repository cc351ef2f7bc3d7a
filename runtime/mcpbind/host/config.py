"""Host configuration: the ``mcpServers`` JSON that desktop MCP hosts use, plus mcpbind keys.

::

    {"mcpServers": {
        "notes": {"command": "python", "args": ["-m", "examples.notes_server"],
                  "env": {"LANG": "C"}, "cwd": ".", "timeout": 30,
                  "roots": ["/home/me/notes"],
                  "approval": {"default": "auto", "tools": {"delete_note": "deny"}}},
        "files": {"url": "http://127.0.0.1:8000/mcp", "headers": {"X-Key": "..."},
                  "enabled": false}}}

A server is stdio (``command``, ``args``, ``env``, ``cwd``) or HTTP (``url``, ``headers``);
``type`` may say which. mcpbind's own keys are all optional: ``enabled`` (``disabled`` is also
read, as some hosts write it), ``protocolVersion`` (pin one: ``handshake``, ``stateless`` or a
version such as ``2025-06-18``; the default ``auto`` negotiates per server), ``timeout``
(seconds per request), ``roots`` (paths or
``file://`` URIs the server may see), ``approval`` (see :mod:`mcpbind.host.approval`) and
``maxMessageSize``. A ``command`` of ``python`` or ``python3`` runs the host's own
interpreter (so a file written for a virtualenv works from it). Keys of the other transport
(``env`` on a ``url`` server) are errors, so a setting is not silently dropped; every error
names the server and the key. Reading files, other hosts' shapes and keys, and the warnings
for unknown keys: :mod:`.config_file`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from mcpbind_types import unified as t

from ..versions import pinned_version

__all__ = [
    "ApprovalPolicy",
    "ConfigError",
    "ConfigWarning",
    "HostConfig",
    "OAuthSettings",
    "PolicyValue",
    "RootConfig",
    "ServerConfig",
    "check_server",
    "pinned_version",
]

PolicyValue = Literal["allow", "deny", "ask"]


class ConfigError(ValueError):
    """Invalid configuration; ``server`` and ``key`` say where."""

    def __init__(self, server: str | None, key: str | None, message: str) -> None:
        where = []
        if server is not None:
            where.append(f"server {server!r}")
        if key is not None:
            where.append(f"key {key!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.server = server
        self.key = key


@dataclass(frozen=True, slots=True)
class ConfigWarning:
    """Something read but ignored (an unknown key): the server still starts."""

    server: str | None
    key: str | None
    message: str

    def __str__(self) -> str:
        return str(ConfigError(self.server, self.key, self.message))


class ApprovalPolicy(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, rename="camel"):
    """Which tool calls of one server run, are refused, or ask the user first.

    ``default``: ``auto`` decides from the tool's annotations (read-only: allow; anything else:
    ask), or a fixed ``allow``/``deny``/``ask``. ``tools`` overrides per tool (server-side name).
    ``trust_annotations=False`` treats the annotations as untrusted (tools.mdx: annotations are
    untrusted unless from trusted servers): ``auto`` then asks for every tool.
    """

    default: Literal["auto", "allow", "deny", "ask"] = "auto"
    tools: dict[str, PolicyValue] = msgspec.field(default_factory=dict)
    trust_annotations: bool = True


class RootConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One root a server may see (its entry's ``roots`` key): a ``file://`` URI and a name."""

    uri: str
    name: str | None = None


class OAuthSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, rename="camel"):
    """The ``oauth`` object of a server entry."""

    grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    client_id: str | None = None
    client_secret: str | None = None
    private_key_file: str | None = None
    client_metadata_url: str | None = None
    callback_port: int | None = None
    scopes: list[str] | str | None = None


class ServerConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, rename="camel"):
    """One entry of ``mcpServers``."""

    command: str | None = None
    args: list[str] = msgspec.field(default_factory=list)
    env: dict[str, str] = msgspec.field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    type: Literal["stdio", "http", "streamable-http", "streamableHttp", "sse"] | None = None
    enabled: bool = True
    disabled: bool = False
    timeout: float | None = None
    roots: list[str | RootConfig] | None = None
    approval: ApprovalPolicy | Literal["auto", "allow", "deny", "ask"] = msgspec.field(
        default_factory=ApprovalPolicy
    )
    max_message_size: int | None = None
    protocol_version: str | None = None
    #: Authorization of an HTTP server (:mod:`mcpbind.host.auth`).
    oauth: OAuthSettings | bool | None = None
    bearer_token_env: str | None = None

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if self.url is not None else "stdio"

    @property
    def active(self) -> bool:
        return self.enabled and not self.disabled

    def pinned_version(self) -> str | None:
        """The version to connect with (``None``: negotiate, as ``protocol_version="auto"``)."""
        return pinned_version(self.protocol_version)

    def policy(self) -> ApprovalPolicy:
        if isinstance(self.approval, str):
            return ApprovalPolicy(default=self.approval)
        return self.approval

    def root_list(self) -> list[t.Root] | None:
        """The roots as protocol objects (``None``: the server gets no roots capability)."""
        if self.roots is None:
            return None
        out = []
        for root in self.roots:
            uri, name = (root, None) if isinstance(root, str) else (root.uri, root.name)
            item = t.Root(uri=_root_uri(uri, self.cwd))
            if name is not None:
                item.name = name
            out.append(item)
        return out


class HostConfig(msgspec.Struct, kw_only=True, rename="camel"):
    """A whole configuration (see :mod:`.config_file` for the file shapes read)."""

    mcp_servers: dict[str, ServerConfig] = msgspec.field(default_factory=dict)
    #: What was read but ignored (unknown keys); the Host reports each as a warning event.
    warnings: list[ConfigWarning] = msgspec.field(default_factory=list)


_NAME = re.compile(r"\S(?:.{0,62}\S)?")


def _root_uri(value: str, cwd: str | None) -> str:
    """A ``file://`` URI for a root given as a URI or a path (roots.mdx: roots are file URIs)."""
    if value.startswith("file://"):
        return value
    path = Path(os.path.expanduser(value))
    if not path.is_absolute():
        path = Path(cwd or os.getcwd()) / path
    return Path(os.path.normpath(path)).as_uri()


def _other_transport_keys(config: ServerConfig) -> list[str]:
    """The keys set that belong to the transport this server does not use."""
    if config.url is not None:
        given = {"args": bool(config.args), "env": bool(config.env), "cwd": config.cwd is not None}
    else:
        given = {"headers": bool(config.headers)}
    return [key for key, is_set in given.items() if is_set]


def check_server(name: str, config: ServerConfig) -> ServerConfig:
    """The checks a type cannot express: transport keys, numbers, roots."""
    if not _NAME.fullmatch(name):
        raise ConfigError(name, None, "a server name is 1 to 64 characters, not blank at ends")
    if (config.command is None) == (config.url is None):
        key = "command" if config.command is None else "url"
        raise ConfigError(name, key, "give exactly one of 'command' (stdio) or 'url' (HTTP)")
    kind = config.type
    if kind is not None and (kind == "stdio") != (config.command is not None):
        raise ConfigError(name, "type", f"type {kind!r} does not match the transport keys")
    if config.command is not None and not config.command.strip():
        raise ConfigError(name, "command", "must not be empty")
    if config.url is not None and not re.match(r"https?://[^/?#\s]+", config.url):
        raise ConfigError(name, "url", f"must be an http:// or https:// URL, got {config.url!r}")
    # A key of the other transport would be silently ignored: refuse it, like an unknown key.
    stray = _other_transport_keys(config)
    if stray:
        used = "an HTTP (url)" if config.url is not None else "a stdio (command)"
        raise ConfigError(name, stray[0], f"does not apply to {used} server")
    if config.timeout is not None and not config.timeout > 0:
        raise ConfigError(
            name, "timeout", f"must be a positive number of seconds, got {config.timeout}"
        )
    if config.max_message_size is not None and config.max_message_size < 1024:
        raise ConfigError(name, "maxMessageSize", "must be at least 1024 bytes")
    try:
        pinned_version(config.protocol_version)
    except ValueError as exc:
        raise ConfigError(name, "protocolVersion", str(exc)) from None
    for root in config.roots or ():
        uri = root if isinstance(root, str) else root.uri
        if "://" in uri and not uri.startswith("file://"):
            raise ConfigError(name, "roots", f"roots are file:// URIs or paths, got {uri!r}")
        if not uri.strip():
            raise ConfigError(name, "roots", "a root must not be empty")
        if ".." in Path(uri.removeprefix("file://")).parts:
            raise ConfigError(name, "roots", f"'..' is not allowed in a root: {uri!r}")
    _check_auth(name, config)
    return config


def _check_auth(name: str, config: ServerConfig) -> None:
    """The checks of the auth keys (:mod:`mcpbind.host.auth` reads them when connecting)."""
    if config.url is None:
        for key, value in (("oauth", config.oauth), ("bearerTokenEnv", config.bearer_token_env)):
            if value not in (None, False):
                raise ConfigError(name, key, "does not apply to a stdio (command) server")
        return
    if config.bearer_token_env is not None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", config.bearer_token_env):
            raise ConfigError(name, "bearerTokenEnv", "must be an environment variable name")
        if config.oauth not in (None, False):
            raise ConfigError(name, "oauth", "give one of 'oauth' and 'bearerTokenEnv'")
    oauth = config.oauth
    if isinstance(oauth, OAuthSettings):
        if oauth.grant == "client_credentials" and not oauth.client_id:
            raise ConfigError(name, "oauth", "the client_credentials grant needs 'clientId'")
        if oauth.callback_port is not None and not 0 < oauth.callback_port < 65536:
            raise ConfigError(name, "oauth", f"callbackPort {oauth.callback_port} is not a port")
