"""``mcpbind serve MODULE:ATTR``: run a server written with mcpbind, over stdio or HTTP.

ATTR names a :class:`mcpbind.Server`, or a callable that takes no arguments and returns one
(a factory such as ``create_server``); without ``:ATTR`` the module's ``server`` is used. The
current directory is importable, as with ``python -m``, so ``examples.notes_server`` works from
the repository root whichever way the CLI was started.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from ..server.app import Server
from .errors import EXIT_USAGE, CliFailure, missing_dependency

__all__ = ["load_server", "serve"]


def load_server(spec: str) -> Server:
    """Import ``module[:attr]`` and return the :class:`Server` it names (or builds)."""
    module_name, _, attr = spec.partition(":")
    attr = attr or "server"
    if not module_name:
        raise click.BadParameter("expected MODULE:ATTR", param_hint="APP")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise click.BadParameter(
            f"cannot import {module_name!r}: {exc}", param_hint="APP"
        ) from None
    try:
        value: Any = module
        for part in attr.split("."):
            value = getattr(value, part)
    except AttributeError:
        raise click.BadParameter(
            f"{module_name!r} has no attribute {attr!r}", param_hint="APP"
        ) from None
    if not isinstance(value, Server) and callable(value):
        value = value()
    if not isinstance(value, Server):
        raise click.BadParameter(
            f"{spec} is a {type(value).__name__}, not an mcpbind Server (or a factory of one)",
            param_hint="APP",
        )
    return value


@click.command()
@click.argument("app", metavar="MODULE[:ATTR]")
@click.option(
    "--http",
    "port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Serve Streamable HTTP on this port instead of stdio.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface for --http (only loopback by default).",
)
@click.option("--path", default="/mcp", show_default=True, help="The MCP endpoint for --http.")
def serve(app: str, port: int | None, host: str, path: str) -> None:
    """Serve the mcpbind Server MODULE:ATTR over stdio, or over HTTP with --http PORT.

    \b
    mcpbind serve examples.notes_server:server
    mcpbind serve examples.files_server:create_server --http 8000
    """
    server = load_server(app)
    if port is None:
        from ..server.session import serve_stdio

        serve_stdio(server)
        return
    if not path.startswith("/"):
        raise CliFailure(f"--path must start with '/', got {path!r}", EXIT_USAGE)
    try:
        from mcpbind.http import serve_http
    except ImportError as exc:
        raise missing_dependency("mcpbind serve --http", exc, "http") from None
    click.echo(f"serving {app} on http://{host}:{port}{path}", err=True)
    serve_http(server, host=host, port=port, path=path)
