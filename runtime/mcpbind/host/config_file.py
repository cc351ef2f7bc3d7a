"""The configuration shapes users already have, reduced to mcpbind's :class:`ServerConfig`.

Files: ``{"mcpServers": {...}}`` (Claude Desktop, Claude Code, Cursor, Cline, Roo, Windsurf,
Gemini CLI), ``{"servers": {...}, "inputs": [...]}`` (VS Code's ``mcp.json``) and
``{"mcp": {"servers": {...}, "inputs": [...]}}`` (VS Code's ``settings.json``). Keys of a
server entry are dispatched through :data:`SERVER_KEYS`:

- every :class:`ServerConfig` field under its JSON name (``command``, ``url``,
  ``protocolVersion``, ...), taken as is (a field added there is accepted here at once);
- other hosts' spellings: ``serverUrl`` (Windsurf) and ``httpUrl`` (Gemini CLI) for ``url``;
- other hosts' approval lists, mapped into the server's approval policy: ``autoApprove``
  (Cline), ``alwaysAllow`` (Roo) -> ``allow``; ``disabledTools`` (Roo) -> ``deny``;
- keys with no meaning here, such as ``description``: ignored without a word.

VS Code's ``${workspaceFolder}`` in string values is the workspace (:func:`workspace_of`);
an ``${input:ID}`` is the answer ``ask`` gives for the declared input (a prompt: ``mcpbind
host`` asks on the terminal, hiding a ``password``), asked once however often it is used; an
entry with one nobody answers (no ``ask``, no answer, an undeclared id, a ``command`` input)
is not started, with one warning line naming it and why.

Any other key is reported as a warning (``server 'x', key 'y': unknown key, ignored``) and
the server still starts. To support a new key, add one entry to :data:`SERVER_KEYS`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from .config import (
    ApprovalPolicy,
    ConfigError,
    ConfigWarning,
    HostConfig,
    ServerConfig,
    check_server,
)

__all__ = [
    "SERVER_KEYS",
    "AskInput",
    "KeyRule",
    "VsCodeInput",
    "load_config",
    "parse_config",
    "parse_server",
    "server_entries",
    "translate_server",
    "workspace_of",
]

logger = logging.getLogger("mcpbind.host")

#: Applies one key of a raw entry to the dict that becomes a ``ServerConfig``.
KeyRule = Callable[[str, str, Any, dict[str, Any]], None]


def _field(name: str, key: str, value: Any, out: dict[str, Any]) -> None:
    out[key] = value


def _alias(target: str) -> KeyRule:
    def apply(name: str, key: str, value: Any, out: dict[str, Any]) -> None:
        if target in out and out[target] != value:
            raise ConfigError(name, key, f"conflicts with {target!r}; give one of them")
        out[target] = value

    return apply


def _tool_list(verdict: str) -> KeyRule:
    """An approval list of another host: each named tool gets ``verdict`` unless the entry's
    own ``approval.tools`` names it (merged once every key is read, in :func:`_merge`)."""

    def apply(name: str, key: str, value: Any, out: dict[str, Any]) -> None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(name, key, "must be a list of tool names")
        out.setdefault(_LISTED, {}).update(dict.fromkeys(value, verdict))

    return apply


def _ignore(name: str, key: str, value: Any, out: dict[str, Any]) -> None:
    return None


_LISTED: Final = "\0listed"  # tool -> verdict from approval lists, merged into "approval"

SERVER_KEYS: dict[str, KeyRule] = {
    **{f.encode_name: _field for f in msgspec.structs.fields(ServerConfig)},
    "serverUrl": _alias("url"),
    "httpUrl": _alias("url"),
    "autoApprove": _tool_list("allow"),
    "alwaysAllow": _tool_list("allow"),
    "disabledTools": _tool_list("deny"),
    "description": _ignore,
}
"""Key of a server entry -> how it is applied. Extend here for a new key."""


Warn = Callable[[ConfigWarning], object]


def translate_server(name: str, entry: Mapping[str, Any], warn: Warn) -> dict[str, Any]:
    """The entry as ``ServerConfig`` fields; unknown keys are passed to ``warn``."""
    out: dict[str, Any] = {}
    for key, value in entry.items():
        rule = SERVER_KEYS.get(key)
        if rule is None:
            warn(ConfigWarning(name, key, "unknown key, ignored"))
            continue
        rule(name, key, value, out)
    return _merge(name, out)


def _merge(name: str, out: dict[str, Any]) -> dict[str, Any]:
    listed: dict[str, str] | None = out.pop(_LISTED, None)
    if not listed:
        return out
    approval = out.get("approval", {})
    if isinstance(approval, str):
        approval = {"default": approval}
    elif isinstance(approval, ApprovalPolicy):
        approval = msgspec.to_builtins(approval)
    if not isinstance(approval, dict):
        return out  # the type check of "approval" reports it
    tools = approval.get("tools", {})
    if isinstance(tools, dict):
        approval = {**approval, "tools": {**listed, **tools}}  # the entry's own policy wins
    out["approval"] = approval
    return out


def server_entries(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Every server entry of a configuration file, whichever host's shape it has.

    Raises :class:`ConfigError` for a section that is not an object, a name given twice,
    and a file with no server at all."""
    sections: list[tuple[str, Any]] = []
    for key in ("mcpServers", "servers"):
        if key in raw:
            sections.append((key, raw[key]))
    nested = raw.get("mcp")
    if isinstance(nested, Mapping) and "servers" in nested:
        sections.append(("mcp.servers", nested["servers"]))
    found: dict[str, Any] = {}
    for key, servers in sections:
        if not isinstance(servers, Mapping):
            raise ConfigError(None, key, "must be an object of server name -> settings")
        for name, entry in servers.items():
            if name in found:
                raise ConfigError(name, key, "this server name is given twice")
            found[name] = entry
    if not found:
        where = "an empty" if sections else "no"
        raise ConfigError(
            None,
            None,
            f"the configuration has {where} server list: expected at least one server under "
            '"mcpServers" (Claude Desktop, Cursor, ...) or "servers" (VS Code)',
        )
    return found


def _key_of(message: str) -> str | None:
    found = re.search(r"`\$\.([A-Za-z0-9_]+)", message) or re.search(
        r"unknown field `([^`]+)`", message
    )
    return found.group(1) if found else None


def _json_object(
    data: Mapping[str, Any] | bytes | str, server: str | None, not_object: str
) -> Mapping[str, Any]:
    try:
        raw: Any = msgspec.json.decode(data) if isinstance(data, bytes | str) else data
    except msgspec.DecodeError as exc:
        raise ConfigError(server, None, f"invalid JSON: {exc}") from None
    if not isinstance(raw, Mapping):
        raise ConfigError(server, None, not_object)
    return raw


def parse_server(
    name: str,
    data: Mapping[str, Any] | bytes | str,
    warn: Warn | None = None,
) -> ServerConfig:
    """One server entry from a dict or JSON text, in any shape :data:`SERVER_KEYS` reads.
    Unknown keys go to ``warn`` (default: the ``mcpbind.host`` logger)."""
    raw = _json_object(data, name, "a server entry must be a JSON object")
    fields = translate_server(name, raw, warn or (lambda w: logger.warning("%s", w)))
    try:
        config = msgspec.convert(fields, ServerConfig)
    except msgspec.ValidationError as exc:
        raise ConfigError(name, _key_of(str(exc)), str(exc)) from None
    return check_server(name, config)


_WORKSPACE = "${workspaceFolder}"
_INPUT = re.compile(r"\$\{input:([^}]*)\}")
_ASKABLE: Final = ("promptString", "pickString")


@dataclass(frozen=True, slots=True)
class VsCodeInput:
    """One of VS Code's ``inputs``, to ask the user for (the value of its ``${input:ID}``)."""

    id: str
    type: str
    """``promptString`` (a line, hidden when ``password``) or ``pickString`` (one of
    ``options``); a ``command`` input is never asked (it runs a VS Code command)."""
    description: str
    password: bool = False
    options: tuple[str, ...] = ()
    default: str | None = None
    servers: tuple[str, ...] = ()
    """The servers whose entries use it (each is started only if it is answered)."""


AskInput = Callable[[VsCodeInput], str | None]
"""Asks the user for an input's value; ``None``: no answer (its servers are not started)."""


def _declared_inputs(raw: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``inputs`` of a VS Code file (``mcp.json``, or ``mcp.inputs`` of ``settings.json``),
    by id."""
    nested = raw.get("mcp")
    declared = raw.get("inputs", nested.get("inputs", []) if isinstance(nested, Mapping) else [])
    if not isinstance(declared, list) or not all(
        isinstance(item, dict) and isinstance(item.get("id"), str) for item in declared
    ):
        raise ConfigError(None, "inputs", "must be a list of objects, each with a string id")
    return {item["id"]: item for item in declared}


def _input_of(declared: Mapping[str, Any], servers: tuple[str, ...]) -> VsCodeInput:
    options = declared.get("options")
    picks = tuple(
        str(o.get("value", o.get("label", ""))) if isinstance(o, dict) else str(o)
        for o in (options if isinstance(options, list) else [])
    )
    default = declared.get("default")
    return VsCodeInput(
        id=declared["id"],
        type=str(declared.get("type", "promptString")),
        description=str(declared.get("description") or declared["id"]),
        password=declared.get("password") is True,
        options=picks,
        default=None if default is None else str(default),
        servers=servers,
    )


def _strings(config: ServerConfig) -> list[str]:
    """The string values of an entry VS Code's variables may stand in."""
    found = [config.command, *config.args, *config.env.values(), config.cwd, config.url]
    return [value for value in (*found, *config.headers.values()) if value is not None]


def _answers(
    parsed: Mapping[str, ServerConfig], declared: Mapping[str, Any], ask: AskInput | None
) -> tuple[dict[str, str], dict[str, str]]:
    """Each ``${input:ID}`` the active servers use, asked once, in order of first use:
    (id -> value, id -> why it has none)."""
    users: dict[str, list[str]] = {}
    for name, config in parsed.items():
        if config.active:
            for value in _strings(config):
                for found in _INPUT.finditer(value):
                    users.setdefault(found.group(1), []).append(name)
    values: dict[str, str] = {}
    missing: dict[str, str] = {}
    for input_id, names in users.items():
        if input_id not in declared:
            missing[input_id] = (
                'is not declared in the file\'s "inputs": the Host cannot prompt for it'
            )
            continue
        spec = _input_of(declared[input_id], tuple(dict.fromkeys(names)))
        if spec.type not in _ASKABLE:
            missing[input_id] = f"is a VS Code {spec.type} input the Host cannot prompt for"
        elif ask is None:
            missing[input_id] = (
                "is a VS Code input the Host cannot prompt for here (not a terminal)"
            )
        elif (answer := ask(spec)) is None:
            missing[input_id] = "was not answered"
        else:
            values[input_id] = answer
    return values, missing


def _vscode_variables(
    name: str,
    config: ServerConfig,
    workspace: str,
    inputs: tuple[dict[str, str], dict[str, str]],
    warn: Warn,
) -> None:
    """VS Code's variables in the string values of an entry (command, args, env, cwd, url,
    headers): ``${workspaceFolder}`` becomes ``workspace``, an ``${input:ID}`` its answer;
    with one unanswered, the server is not started and ``warn`` says why."""
    values, missing = inputs

    def expand(key: str, value: str) -> str:
        for found in _INPUT.finditer(value):
            why = missing.get(found.group(1))
            if why is not None and config.active:
                config.enabled = False
                warn(
                    ConfigWarning(
                        name,
                        key,
                        f"{found.group(0)} {why}; server not started: put the value, or "
                        "${env:NAME}, in its place",
                    )
                )
        value = _INPUT.sub(lambda found: values.get(found.group(1), found.group(0)), value)
        return value.replace(_WORKSPACE, workspace)

    if config.command is not None:
        config.command = expand("command", config.command)
    config.args = [expand("args", arg) for arg in config.args]
    config.env = {k: expand("env", v) for k, v in config.env.items()}
    if config.cwd is not None:
        config.cwd = expand("cwd", config.cwd)
    if config.url is not None:
        config.url = expand("url", config.url)
    config.headers = {k: expand("headers", v) for k, v in config.headers.items()}


def parse_config(
    data: Mapping[str, Any] | bytes | str,
    *,
    workspace: str | os.PathLike[str] | None = None,
    ask: AskInput | None = None,
) -> HostConfig:
    """A whole configuration from a dict or JSON text; see :func:`server_entries`.
    ``${workspaceFolder}`` becomes ``workspace`` (default: the current directory); each
    ``${input:ID}`` of an active server is asked with ``ask`` (once per id; without it, or
    unanswered, the servers using it are not started, with a warning)."""
    raw = _json_object(data, None, "the configuration must be a JSON object")
    warnings: list[ConfigWarning] = []
    folder = os.fspath(workspace) if workspace is not None else os.getcwd()
    parsed = {}
    for name, entry in server_entries(raw).items():
        parsed[name] = parse_server(name, entry, warnings.append)
    inputs = _answers(parsed, _declared_inputs(raw), ask)
    for name, config in parsed.items():
        _vscode_variables(name, config, folder, inputs, warnings.append)
    return HostConfig(mcp_servers=parsed, warnings=warnings)


def workspace_of(file: Path) -> Path:
    """The workspace folder of a configuration file, as VS Code's ``${workspaceFolder}``:
    the folder holding ``.vscode/`` for a file in it (``.vscode/mcp.json``), else the
    file's own folder."""
    folder = file.resolve().parent
    return folder.parent if folder.name == ".vscode" else folder


def load_config(path: str | os.PathLike[str], *, ask: AskInput | None = None) -> HostConfig:
    """Read a configuration file. Relative ``cwd`` values are taken from the file's folder;
    ``ask`` answers its VS Code inputs (:func:`parse_config`)."""
    file = Path(path)
    try:
        text = file.read_bytes()
    except OSError as exc:
        raise ConfigError(None, None, f"cannot read {os.fspath(path)!r}: {exc.strerror}") from None
    try:
        config = parse_config(text, workspace=workspace_of(file), ask=ask)
    except ConfigError as exc:
        if exc.server is None and exc.key is None:
            raise ConfigError(None, None, f"{os.fspath(path)}: {exc}") from None
        raise
    base = file.resolve().parent
    for entry in config.mcp_servers.values():
        if entry.cwd is not None and not os.path.isabs(os.path.expanduser(entry.cwd)):
            entry.cwd = str(base / entry.cwd)
    return config
