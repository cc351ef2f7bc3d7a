"""Where each MCP client keeps its list of servers, and the shape of one entry there, for
``mcpbind install``.

The locations follow each client's own documentation (the page is named on each entry of
:data:`CLIENTS`); every file keeps the servers in an object of name -> entry, under
``mcpServers`` (Claude Desktop, Claude Code, Cursor, Gemini CLI, a generic ``mcp.json``) or
``servers`` (VS Code's ``mcp.json``), which is what :mod:`mcpbind.host.config_file` reads back.
A user file is found from the home folder, ``APPDATA`` (Windows) or ``XDG_CONFIG_HOME``
(Linux) as the client itself does; a project file is relative to the current directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

__all__ = ["CLIENTS", "ClientConfig", "Scope", "app_data"]

Scope = Literal["user", "project"]


def app_data(platform: str, environ: Mapping[str, str]) -> Path:
    """The per-user application settings folder as Electron apps (Claude Desktop, VS Code)
    use it: ``%APPDATA%`` on Windows, ``~/Library/Application Support`` on macOS,
    ``$XDG_CONFIG_HOME`` (default ``~/.config``) elsewhere."""
    if platform == "win32":
        roaming = environ.get("APPDATA")
        return Path(roaming) if roaming else Path.home() / "AppData" / "Roaming"
    if platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    xdg = environ.get("XDG_CONFIG_HOME")
    return Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"


UserFile = Callable[[str, Mapping[str, str]], Path]


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """One client: its name on the command line, where its configuration lives and how an
    entry is spelled there."""

    #: How the client is named in messages ("Claude Desktop").
    title: str
    #: The top-level key of the server list in the file.
    section: str
    #: The file of the user scope (from the platform and the environment), if it has one.
    user_file: UserFile | None
    #: The file of the project scope, relative to the project's folder, if it has one.
    project_file: str | None
    #: The documentation page the locations and the entry shape come from.
    docs: str
    #: Its stdio entries carry ``"type": "stdio"`` (VS Code requires it; Claude Code writes it).
    typed: bool = False
    #: It reads a ``cwd`` key (the folder the server starts in).
    has_cwd: bool = False
    #: An application that reads the file when it starts (not a bare file for any client).
    is_app: bool = True

    @property
    def default_scope(self) -> Scope:
        return "user" if self.user_file is not None else "project"

    def file(self, scope: Scope, platform: str, environ: Mapping[str, str]) -> Path | None:
        """The configuration file of ``scope`` (``None``: the client has no such scope)."""
        if scope == "user":
            return None if self.user_file is None else self.user_file(platform, environ)
        return None if self.project_file is None else Path.cwd() / self.project_file

    def stdio_entry(
        self, command: str, args: list[str], env: Mapping[str, str], cwd: str | None
    ) -> dict[str, Any]:
        """The entry that starts ``command args`` over stdio, in this client's spelling."""
        entry: dict[str, Any] = {"type": "stdio"} if self.typed else {}
        entry["command"] = command
        entry["args"] = args
        if env:
            entry["env"] = dict(env)
        if cwd is not None and self.has_cwd:
            entry["cwd"] = cwd
        return entry


def _home_file(*parts: str) -> UserFile:
    return lambda platform, environ: Path.home().joinpath(*parts)


def _app_data_file(*parts: str) -> UserFile:
    return lambda platform, environ: app_data(platform, environ).joinpath(*parts)


CLIENTS: Final[dict[str, ClientConfig]] = {
    # modelcontextprotocol.io/docs/develop/connect-local-servers: macOS and Windows; the Linux
    # builds keep it in the XDG config folder, like every Electron app.
    "claude-desktop": ClientConfig(
        title="Claude Desktop",
        section="mcpServers",
        user_file=_app_data_file("Claude", "claude_desktop_config.json"),
        project_file=None,
        docs="https://modelcontextprotocol.io/docs/develop/connect-local-servers",
    ),
    # code.claude.com/docs/en/mcp#mcp-installation-scopes: user scope in ~/.claude.json
    # (top-level mcpServers), project scope in .mcp.json at the project's root.
    "claude-code": ClientConfig(
        title="Claude Code",
        section="mcpServers",
        user_file=_home_file(".claude.json"),
        project_file=".mcp.json",
        docs="https://code.claude.com/docs/en/mcp#mcp-installation-scopes",
        typed=True,
    ),
    # cursor.com/docs/mcp: ~/.cursor/mcp.json (global), .cursor/mcp.json (project).
    "cursor": ClientConfig(
        title="Cursor",
        section="mcpServers",
        user_file=_home_file(".cursor", "mcp.json"),
        project_file=os.path.join(".cursor", "mcp.json"),
        docs="https://cursor.com/docs/mcp",
    ),
    # code.visualstudio.com/docs/agents/reference/mcp-configuration: "servers" in
    # .vscode/mcp.json or in the user profile's mcp.json, whose folder is given in
    # code.visualstudio.com/docs/configure/settings#_settings-file-locations.
    "vscode": ClientConfig(
        title="VS Code",
        section="servers",
        user_file=_app_data_file("Code", "User", "mcp.json"),
        project_file=os.path.join(".vscode", "mcp.json"),
        docs="https://code.visualstudio.com/docs/agents/reference/mcp-configuration",
        typed=True,
        has_cwd=True,
    ),
    # geminicli.com/docs/tools/mcp-server and geminicli.com/docs/cli/configuration:
    # ~/.gemini/settings.json (user), .gemini/settings.json (project).
    "gemini-cli": ClientConfig(
        title="Gemini CLI",
        section="mcpServers",
        user_file=_home_file(".gemini", "settings.json"),
        project_file=os.path.join(".gemini", "settings.json"),
        docs="https://geminicli.com/docs/tools/mcp-server/",
        has_cwd=True,
    ),
    # The shape most clients read: an mcp.json in the current directory (or --file).
    "mcp-json": ClientConfig(
        title="mcp.json",
        section="mcpServers",
        user_file=None,
        project_file="mcp.json",
        docs="https://modelcontextprotocol.io/docs/develop/connect-local-servers",
        is_app=False,
    ),
}
"""CLIENT argument of ``mcpbind install`` -> that client's configuration."""
