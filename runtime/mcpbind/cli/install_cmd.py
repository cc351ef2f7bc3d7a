"""``mcpbind install CLIENT APP``: add a server written with mcpbind to an MCP client's own
configuration file.

The entry starts ``APP`` with this Python (its absolute path, so the client finds the same
virtualenv) through ``python -m mcpbind.cli serve /absolute/path/app.py[:ATTR]``; a module
name (``package.module[:ATTR]``) gets the current directory on ``PYTHONPATH``, as ``python
-m`` would have it. ``--env KEY=VALUE`` and ``--env-file .env`` fill the entry's ``env`` (the
values are copied in: the clients start servers with a small environment of their own). The
rest of the file is kept as it was; installing the same entry again changes nothing, and a
different entry under the same name is refused unless ``--force``. Where each client keeps
its file, and how it spells an entry: :mod:`.install_clients`.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from .app_spec import portable_app
from .errors import EXIT_USAGE, CliFailure
from .install_clients import CLIENTS, ClientConfig, Scope
from .output import echo, echo_json

__all__ = ["install", "read_env_file", "server_entry"]

_ENV_LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)")


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines of a ``.env`` file: ``#`` comments and blank lines skipped, an
    ``export`` prefix allowed, one pair of matching quotes around a value removed."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliFailure(f"cannot read --env-file {path}: {exc}", EXIT_USAGE) from None
    env: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        found = _ENV_LINE.fullmatch(line)
        if found is None:
            raise CliFailure(f"{path}:{number}: expected KEY=VALUE, got {line!r}", EXIT_USAGE)
        key, value = found.groups()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        env[key] = value
    return env


def _env_pairs(pairs: tuple[str, ...]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--env")
        env[key] = value
    return env


def server_entry(client: ClientConfig, app: str, env: dict[str, str]) -> dict[str, Any]:
    """The client's entry that runs ``app`` with this Python (``env`` wins over what the
    module form needs)."""
    portable = portable_app(app)
    needed = {"PYTHONPATH": portable.folder} if portable.is_module else {}
    args = ["-m", "mcpbind.cli", "serve", portable.spec]
    return client.stdio_entry(sys.executable, args, {**needed, **env}, os.getcwd())


def _read_config(path: Path) -> dict[str, Any]:
    """The file's JSON object (empty when there is no file yet); a file that is not a JSON
    object is refused, never overwritten."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise CliFailure(f"cannot read {path}: {exc}", EXIT_USAGE) from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliFailure(
            f"{path} is not plain JSON (line {exc.lineno}: {exc.msg}); fix it, or remove "
            "its comments, and run again: it is left as it is",
            EXIT_USAGE,
        ) from None
    if not isinstance(data, dict):
        raise CliFailure(f"{path} does not hold a JSON object: it is left as it is", EXIT_USAGE)
    return data


def _write_config(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` in one step (a temporary file beside it, then a rename), keeping its
    permissions: a client reading meanwhile sees the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def _config_file(client: ClientConfig, scope: Scope | None, file: Path | None) -> Path:
    if file is not None:
        return file.resolve()
    chosen = scope or client.default_scope
    path = client.file(chosen, sys.platform, os.environ)
    if path is None:
        other = "project" if chosen == "user" else "user"
        raise CliFailure(
            f"{client.title} has no {chosen} configuration: use --scope {other}, or --file PATH",
            EXIT_USAGE,
        )
    return path


@click.command()
@click.argument("client_name", metavar="CLIENT", type=click.Choice(sorted(CLIENTS)))
@click.argument("app", metavar="FILE.py[:ATTR] | MODULE[:ATTR]")
@click.option(
    "--name", help="The server's name in the client's list (default: the Server's own name)."
)
@click.option(
    "--env",
    "-e",
    "env_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="An environment variable for the server (repeatable; wins over --env-file).",
)
@click.option(
    "--env-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Copy the KEY=VALUE lines of this .env file into the entry's environment.",
)
@click.option(
    "--scope",
    type=click.Choice(["user", "project"]),
    default=None,
    help="The client's user file or the current project's (default: user; mcp-json: project).",
)
@click.option(
    "--file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write this configuration file instead of the client's usual one.",
)
@click.option("--force", is_flag=True, help="Replace a different entry of the same name.")
@click.option(
    "--dry-run", is_flag=True, help="Print the entry as JSON and where it would go; write nothing."
)
def install(
    client_name: str,
    app: str,
    name: str | None,
    env_pairs: tuple[str, ...],
    env_file: Path | None,
    scope: Scope | None,
    file: Path | None,
    force: bool,
    dry_run: bool,
) -> None:
    """Add the mcpbind Server in APP to CLIENT's configuration: claude-desktop, claude-code,
    cursor, vscode, gemini-cli, or mcp-json (an mcp.json in the current directory). The entry
    runs APP with this Python; the rest of the file is kept. Installing the same entry again
    changes nothing; a different entry of the same name needs --force.

    \b
    mcpbind install claude-desktop examples/hello_server.py
    mcpbind install vscode server.py --scope project --env-file .env
    mcpbind install cursor app.server:create_server --name tasks --dry-run
    """
    from .serve_cmd import load_server

    client = CLIENTS[client_name]
    server = load_server(app)  # a typo in APP fails here, not later in the client
    server_name = name if name is not None else server.name
    env = {**(read_env_file(env_file) if env_file is not None else {}), **_env_pairs(env_pairs)}
    entry = server_entry(client, app, env)
    path = _config_file(client, scope, file)
    if dry_run:
        echo_json(json.dumps({client.section: {server_name: entry}}, indent=2))
        echo(f"(dry run: this entry would be written to {path})", err=True)
        return
    data = _read_config(path)
    servers = data.setdefault(client.section, {})
    if not isinstance(servers, dict):
        raise CliFailure(
            f"{path}: {client.section!r} is not an object of servers: it is left as it is",
            EXIT_USAGE,
        )
    if servers.get(server_name) == entry:
        echo(f"{server_name!r} is already installed in {client.title} ({path}): nothing to do")
        return
    if server_name in servers and not force:
        raise CliFailure(
            f"{client.title} already has a different server named {server_name!r} ({path}): "
            "choose another --name, or replace it with --force",
            EXIT_USAGE,
        )
    servers[server_name] = entry
    _write_config(path, data)
    restart = f" (restart {client.title} to load it)" if client.is_app else ""
    echo(f"installed {server_name!r} in {client.title}: {path}{restart}")
