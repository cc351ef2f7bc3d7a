"""VS Code's ``${input:ID}`` in ``mcpbind host``'s configuration, asked on the terminal before
the servers start (as VS Code prompts for them): a ``promptString`` as a line, hidden when it
is a ``password``; a ``pickString`` as one of its options. Without a terminal nothing is asked,
and each server using one is not started, with one warning line
(:func:`mcpbind.host.config_file.parse_config`)."""

from __future__ import annotations

import sys

import click

from ..host.config_file import AskInput, VsCodeInput
from .output import echo, visible

__all__ = ["input_asker"]


def input_asker() -> AskInput | None:
    """The terminal's asker, or ``None`` when stdin is not a terminal (a script, a pipe)."""
    try:
        terminal = sys.stdin.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        terminal = False
    return _ask if terminal else None


def _ask(spec: VsCodeInput) -> str | None:
    """One answer; ``None`` on Ctrl-C or Ctrl-D (the servers using it are not started)."""
    users = ", ".join(spec.servers)
    text = visible(f"{spec.description} (${{input:{spec.id}}} of {users})", one_line=True)
    try:
        if spec.type == "pickString" and spec.options:
            answer = click.prompt(
                text, type=click.Choice(spec.options), default=spec.default, err=True
            )
        else:
            answer = click.prompt(
                text,
                default=spec.default,
                hide_input=spec.password,
                show_default=not spec.password,
                err=True,
            )
    except click.Abort:
        echo(err=True)
        return None
    return str(answer)
