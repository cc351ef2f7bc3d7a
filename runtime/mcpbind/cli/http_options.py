"""The options of every command that serves an app over Streamable HTTP (``serve``, ``dev``):
``--http PORT``, ``--host`` and ``--path``, declared once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from .errors import EXIT_USAGE, CliFailure

__all__ = ["endpoint_path", "http_options"]

_F = TypeVar("_F", bound=Callable[..., object])


def http_options(http_help: str) -> Callable[[_F], _F]:
    """``--http PORT`` (``port``, ``None`` for stdio; ``http_help`` says what it does in
    this command), ``--host`` (loopback by default) and ``--path`` (``/mcp``)."""

    def decorate(command: _F) -> _F:
        command = click.option(
            "--path", default="/mcp", show_default=True, help="The MCP endpoint for --http."
        )(command)
        command = click.option(
            "--host",
            default="127.0.0.1",
            show_default=True,
            help="Interface for --http (only loopback by default).",
        )(command)
        return click.option(
            "--http", "port", type=click.IntRange(1, 65535), default=None, help=http_help
        )(command)

    return decorate


def endpoint_path(path: str) -> str:
    """``--path``, refused in one line unless it starts with ``/``."""
    if not path.startswith("/"):
        raise CliFailure(f"--path must start with '/', got {path!r}", EXIT_USAGE)
    return path
