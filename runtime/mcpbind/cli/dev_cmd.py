"""``mcpbind dev APP``: run a server written with mcpbind under the MCP Inspector, restarting
it whenever its source changes.

The Inspector is the official ``@modelcontextprotocol/inspector`` npm package at a pinned
version (:data:`INSPECTOR`), fetched by ``npx`` on first use; it needs Node.js
:data:`NODE_NEEDED` or newer. Over stdio the Inspector starts ``mcpbind dev APP
--no-inspector``, the reloading relay of :mod:`.dev_reload`; with ``--http PORT`` the server
listens on 127.0.0.1 and the Inspector connects to its URL. Arguments after ``--`` go to the
Inspector: ``--cli --method tools/list`` runs its command-line mode once instead of the web
UI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import click

from .app_spec import PortableApp, portable_app
from .errors import EXIT_MISSING_DEPENDENCY, EXIT_USAGE, CliFailure
from .http_options import endpoint_path, http_options

if TYPE_CHECKING:
    from .watch import SourceWatcher

__all__ = ["INSPECTOR", "NODE_NEEDED", "dev"]

#: The MCP Inspector, pinned (its ``engines`` asks for Node.js >= :data:`NODE_NEEDED`).
INSPECTOR: Final = "@modelcontextprotocol/inspector@2.12.0"
NODE_NEEDED: Final = (22, 19)

_MODES = ("--web", "--cli", "--tui")


def _check_node() -> str:
    """The path of ``npx``, once Node.js is known to be new enough for the Inspector."""
    npx = shutil.which("npx")
    node = shutil.which("node")
    needed = ".".join(map(str, NODE_NEEDED))
    if npx is None or node is None:
        raise CliFailure(
            f"mcpbind dev runs the MCP Inspector with npx: install Node.js {needed} or newer "
            "(https://nodejs.org), or run the server alone with --no-inspector",
            EXIT_MISSING_DEPENDENCY,
        )
    found = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    version = found.stdout.strip()
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:2])
    if numbers < NODE_NEEDED:
        raise CliFailure(
            f"the MCP Inspector needs Node.js {needed} or newer, and node is {version or '?'}: "
            "install a newer one (https://nodejs.org), or run with --no-inspector",
            EXIT_MISSING_DEPENDENCY,
        )
    return npx


def _serve_command(app: str, http: tuple[str, int, str] | None) -> list[str]:
    """``mcpbind serve APP`` with this Python (over HTTP on ``host, port, path``)."""
    command = [sys.executable, "-m", "mcpbind.cli", "serve", app, "--debug"]
    if http is not None:
        host, port, path = http
        command += ["--http", str(port), "--host", host, "--path", path]
    return command


def _inspector_command(npx: str, target: Sequence[str], passed: Sequence[str]) -> list[str]:
    """The Inspector's command line: its mode flag first (it must come first), the arguments
    passed after ``--``, then the server: a URL, or a command (after ``--``) started in the
    current folder with this ``PYTHONPATH`` (the Inspector starts stdio servers with a small
    environment of its own)."""
    modes = [a for a in passed if a in _MODES]
    rest = [a for a in passed if a not in _MODES]
    command = [npx, "--yes", INSPECTOR, *modes[:1], *rest]
    if target[0].startswith(("http://", "https://")):
        return [*command, "--transport", "http", "--server-url", target[0]]
    pythonpath = os.environ.get("PYTHONPATH")
    if pythonpath:
        command += ["-e", f"PYTHONPATH={pythonpath}"]
    return [*command, "--cwd", os.getcwd(), "--", *target]


@click.command()
@click.argument("app", metavar="FILE.py[:ATTR] | MODULE[:ATTR]")
@click.argument("inspector_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- INSPECTOR_ARGS]")
@http_options(
    "Serve Streamable HTTP on this port (the Inspector connects to its URL) instead of stdio."
)
@click.option(
    "--reload/--no-reload",
    default=True,
    show_default=True,
    help="Restart the server when a .py file under its folder changes.",
)
@click.option(
    "--inspector/--no-inspector",
    default=True,
    show_default=True,
    help="Start the MCP Inspector; without it, the reloading server alone (stdio or --http).",
)
def dev(
    app: str,
    inspector_args: tuple[str, ...],
    port: int | None,
    host: str,
    path: str,
    reload: bool,
    inspector: bool,
) -> None:
    """Run the mcpbind Server in APP under the MCP Inspector (the official npm package,
    fetched by npx on first use; Node.js 22.19 or newer), restarting the server whenever a
    .py file under its folder changes: the Inspector keeps its session and lists again.
    The server runs with --debug (a failing handler's exception text reaches the client).
    Arguments after -- are passed to the Inspector.

    \b
    mcpbind dev examples/notes_server.py
    mcpbind dev server.py --http 8000
    mcpbind dev server.py -- --cli --method tools/list
    mcpbind dev server.py --no-inspector    # the reloading server alone, over stdio
    """
    from .dev_reload import terminate_as_exit
    from .watch import SourceWatcher

    endpoint_path(path)
    if inspector_args and not inspector:
        raise CliFailure("arguments after -- go to the Inspector: drop --no-inspector", EXIT_USAGE)
    portable = portable_app(app)
    npx = None
    if inspector:
        from .serve_cmd import load_server

        load_server(app)  # a mistake in APP fails here, in one line, not inside the Inspector
        npx = _check_node()
    watcher = SourceWatcher(portable.folder) if reload else None
    with terminate_as_exit():
        if port is not None:
            code = _dev_http(portable, (host, port, path), watcher, npx, inspector_args)
        else:
            code = _dev_stdio(portable, reload, watcher, npx, inspector_args)
    click.get_current_context().exit(code)


def _dev_http(
    app: PortableApp,
    http: tuple[str, int, str],
    watcher: SourceWatcher | None,
    npx: str | None,
    inspector_args: Sequence[str],
) -> int:
    """The server over HTTP, restarted on changes; the Inspector connected to its URL."""
    from .dev_reload import reload_http

    host, port, path = http
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"
    start = None
    if npx is not None:
        command = _inspector_command(npx, [url], inspector_args)

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(command)

    return reload_http(_serve_command(app.spec, http), host, port, watcher, start)


def _dev_stdio(
    app: PortableApp,
    reload: bool,
    watcher: SourceWatcher | None,
    npx: str | None,
    inspector_args: Sequence[str],
) -> int:
    """The Inspector starting the server over stdio (through the reloading relay); without
    the Inspector, the relay itself, on this process's stdin and stdout."""
    from .dev_reload import StdioRelay, stop_process

    serve = _serve_command(app.spec, None)
    if npx is None:
        StdioRelay(serve, watcher, sys.stdin.buffer, sys.stdout.buffer).run()
        return 0
    relay = [sys.executable, "-m", "mcpbind.cli", "dev", app.spec, "--no-inspector"]
    target = relay if reload else serve
    process = subprocess.Popen(_inspector_command(npx, target, inspector_args))
    try:
        return process.wait()
    finally:
        stop_process(process)
