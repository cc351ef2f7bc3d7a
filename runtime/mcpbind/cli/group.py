"""The ``mcpbind`` click group: its subcommands (each imported only when it runs,
:class:`LazyGroup`), ``--debug`` and the exit codes in its help. :mod:`mcpbind.cli` resolves
``main`` from here at first use."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from .errors import DEBUG_KEY, EXIT_CODES, ReaderGone, main_with_one_line_errors
from .lazy import LazyCommand, LazyGroup

__all__ = ["COMMANDS", "CliGroup", "main"]

COMMANDS: dict[str, LazyCommand] = {
    "ls": LazyCommand(
        "mcpbind.cli.inspect_cmds:ls", "List a server's tools, resources, templates and prompts."
    ),
    "call": LazyCommand("mcpbind.cli.inspect_cmds:call", "Call one tool and show its result."),
    "read": LazyCommand("mcpbind.cli.inspect_cmds:read", "Read one resource by URI."),
    "prompt": LazyCommand("mcpbind.cli.inspect_cmds:prompt", "Get one prompt's messages."),
    "serve": LazyCommand(
        "mcpbind.cli.serve_cmd:serve", "Run a server written with mcpbind (stdio or HTTP)."
    ),
    "bind": LazyCommand(
        "mcpbind.cli.bind_cmd:bind",
        "Generate typed Python bindings for a server's tools.",
        extra="codegen",
    ),
    "generate": LazyCommand(
        "mcpbind.cli.generate_cmd:generate",
        "Run the protocol schema generator (python -m mcpbind_codegen).",
    ),
    "host": LazyCommand(
        "mcpbind.cli.host_cmd:host", "Run an interactive host over several servers."
    ),
    "dev": LazyCommand(
        "mcpbind.cli.dev_cmd:dev",
        "Run a server under the MCP Inspector, reloading it when its files change.",
    ),
    "install": LazyCommand(
        "mcpbind.cli.install_cmd:install",
        "Add a server to Claude Desktop, Claude Code, Cursor, VS Code or Gemini CLI.",
    ),
}

_EPILOG = "\b\nExit codes:\n" + "\n".join(
    f"  {code}  {meaning}" for code, meaning in EXIT_CODES.items()
)


class CliGroup(LazyGroup):
    """The ``mcpbind`` group: every failure is one line on stderr (:mod:`.errors`)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        argv = list(sys.argv[1:] if args is None else args)

        def run(argv: list[str]) -> Any:
            return super(CliGroup, self).main(argv, prog_name, complete_var, False, **extra)

        main_with_one_line_errors(run, argv, _debug_requested(argv))

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:  # raised past click, which would exit 1 on it
            raise ReaderGone from exc


def _debug_requested(argv: Sequence[str]) -> bool:
    """``--debug`` before the subcommand, or ``MCPBIND_DEBUG`` set to a non-empty value."""
    for arg in argv:
        if arg == "--debug":
            return True
        if not arg.startswith("-"):
            break
    return bool(os.environ.get("MCPBIND_DEBUG"))


@click.group(cls=CliGroup, lazy_commands=COMMANDS, epilog=_EPILOG)
@click.version_option(package_name="mcpbind", prog_name="mcpbind")
@click.option(
    "--debug", is_flag=True, help="Show the traceback of a failure (also: MCPBIND_DEBUG=1)."
)
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """mcpbind: a typed Model Context Protocol toolkit.

    SERVER arguments are an http(s):// URL, a server file (server.py runs with this Python,
    server.js with node), or a command line that starts a stdio server, quoted as one
    argument (e.g. "python -m examples.notes_server"). Every failure is one line on stderr
    and one of the exit codes below; --debug adds the traceback.
    """
    ctx.meta[DEBUG_KEY] = debug or _debug_requested(())
