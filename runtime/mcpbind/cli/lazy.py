"""A click group that imports a subcommand's module only when that subcommand runs.

``mcpbind --help`` lists the commands from a static table (name, import path, one-line help),
so it imports none of them; a command whose module cannot be imported (an optional extra is
missing, or the module is not there) becomes a stub that explains why and exits 5, leaving
every other command working.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from .errors import EXIT_MISSING_DEPENDENCY
from .output import echo

__all__ = ["LazyCommand", "LazyGroup"]


@dataclass(frozen=True, slots=True)
class LazyCommand:
    """Where a subcommand lives (``"package.module:attr"``) and its one-line help."""

    target: str
    help: str
    #: The pip extra that provides what the command imports, named in the error message.
    extra: str | None = None


class LazyGroup(click.Group):
    """A :class:`click.Group` whose commands come from ``lazy_commands``, loaded on use."""

    def __init__(
        self, *args: Any, lazy_commands: Mapping[str, LazyCommand] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands: dict[str, LazyCommand] = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in self.lazy_commands:
            return super().get_command(ctx, cmd_name)
        command = _load(cmd_name, self.lazy_commands[cmd_name])
        self.commands[cmd_name] = command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the static table: no subcommand module is imported."""
        rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            if name in self.lazy_commands and name not in self.commands:
                rows.append((name, self.lazy_commands[name].help))
            else:
                command = self.commands.get(name)
                if command is not None and not command.hidden:
                    rows.append((name, command.get_short_help_str(formatter.width)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _load(name: str, lazy: LazyCommand) -> click.Command:
    module_name, _, attr = lazy.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        return _unavailable(name, lazy, exc)
    command = getattr(module, attr)
    if not isinstance(command, click.Command):
        raise TypeError(f"{lazy.target} is not a click command")
    return command


def _unavailable(name: str, lazy: LazyCommand, exc: ImportError) -> click.Command:
    """A stand-in that accepts any arguments and explains why the command cannot run."""
    hint = f"; install it with: pip install 'mcpbind[{lazy.extra}]'" if lazy.extra else ""
    message = f"mcpbind {name} is unavailable: {exc}{hint}"

    def run() -> None:
        echo(f"Error: {message}", err=True)
        raise click.exceptions.Exit(EXIT_MISSING_DEPENDENCY)

    return click.Command(
        name,
        callback=run,
        help=f"{lazy.help}\n\n(Unavailable: {exc})",
        short_help=lazy.help,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        add_help_option=False,
    )
