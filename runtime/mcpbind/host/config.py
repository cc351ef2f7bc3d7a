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
read, as some hosts write it), ``timeout`` (seconds per request), ``roots`` (paths or
``file://`` URIs the server may see), ``approval`` (see :mod:`mcpbind.host.approval`) and
``maxMessageSize``. A ``command`` of ``python`` or ``python3`` runs the host's own
interpreter (so a file written for a virtualenv works from it). Unknown keys, and keys of the
other transport (``env`` on a ``url`` server), are errors, so a typo does not silently drop a
setting; every error names the server and the key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from mcpbind_types import unified as t

from .auth import OAuthSettings, check_auth

__all__ = [
    "ApprovalPolicy",
    "ConfigError",
    "HostConfig",
    "PolicyValue",
    "RootConfig",
    "ServerConfig",
    "load_config",
    "parse_config",
    "parse_server",
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
    uri: str
    name: str | None = None


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
    #: Authorization of an HTTP server (:mod:`mcpbind.host.auth`).
    oauth: OAuthSettings | bool | None = None
    bearer_token_env: str | None = None

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if self.url is not None else "stdio"

    @property
    def active(self) -> bool:
        return self.enabled and not self.disabled

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
    """A whole configuration file; keys other than ``mcpServers`` are ignored (other hosts')."""

    mcp_servers: dict[str, ServerConfig] = msgspec.field(default_factory=dict)


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


def _key_of(message: str) -> str | None:
    found = re.search(r"`\$\.([A-Za-z0-9_]+)", message) or re.search(
        r"unknown field `([^`]+)`", message
    )
    return found.group(1) if found else None


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
    for root in config.roots or ():
        uri = root if isinstance(root, str) else root.uri
        if "://" in uri and not uri.startswith("file://"):
            raise ConfigError(name, "roots", f"roots are file:// URIs or paths, got {uri!r}")
        if not uri.strip():
            raise ConfigError(name, "roots", "a root must not be empty")
        if ".." in Path(uri.removeprefix("file://")).parts:
            raise ConfigError(name, "roots", f"'..' is not allowed in a root: {uri!r}")
    check_auth(name, config)
    return config


def parse_server(name: str, data: Mapping[str, Any] | bytes | str) -> ServerConfig:
    """One server entry from a dict (``from_python``) or JSON text."""
    try:
        if isinstance(data, bytes | str):
            config = msgspec.json.decode(data, type=ServerConfig)
        else:
            config = msgspec.convert(dict(data), ServerConfig)
    except msgspec.ValidationError as exc:
        raise ConfigError(name, _key_of(str(exc)), str(exc)) from None
    except msgspec.DecodeError as exc:
        raise ConfigError(name, None, f"invalid JSON: {exc}") from None
    return check_server(name, config)


def parse_config(data: Mapping[str, Any] | bytes | str) -> HostConfig:
    """A whole configuration (``{"mcpServers": {...}}``) from a dict or JSON text."""
    try:
        raw: Any = msgspec.json.decode(data) if isinstance(data, bytes | str) else dict(data)
    except msgspec.DecodeError as exc:
        raise ConfigError(None, None, f"invalid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(None, None, "the configuration must be a JSON object")
    servers = raw.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(None, "mcpServers", "must be an object of server name -> settings")
    parsed = {}
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            raise ConfigError(name, None, "a server entry must be a JSON object")
        parsed[name] = parse_server(name, entry)
    return HostConfig(mcp_servers=parsed)


def load_config(path: str | os.PathLike[str]) -> HostConfig:
    """Read a configuration file. Relative ``cwd`` values are taken from the file's folder."""
    file = Path(path)
    try:
        text = file.read_bytes()
    except OSError as exc:
        raise ConfigError(None, None, f"cannot read {os.fspath(path)!r}: {exc.strerror}") from None
    config = parse_config(text)
    base = file.resolve().parent
    for entry in config.mcp_servers.values():
        if entry.cwd is not None and not os.path.isabs(os.path.expanduser(entry.cwd)):
            entry.cwd = str(base / entry.cwd)
    return config
