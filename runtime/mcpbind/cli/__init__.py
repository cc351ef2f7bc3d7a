"""The ``mcpbind`` command line: talk to one server, serve one, bind one, run a host.

Subcommands are imported only when they run (:class:`LazyGroup`), so ``mcpbind --help`` stays
fast and a missing optional dependency (the ``http`` or ``codegen`` extra) fails only the one
command that needs it, with a message that names the extra. Exit codes: :mod:`.errors`.
"""

from __future__ import annotations

import click

from .errors import EXIT_CODES
from .lazy import LazyCommand, LazyGroup

__all__ = ["COMMANDS", "EXIT_CODES", "LazyGroup", "main"]

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
}

_EPILOG = "\b\nExit codes:\n" + "\n".join(
    f"  {code}  {meaning}" for code, meaning in EXIT_CODES.items()
)


@click.group(cls=LazyGroup, lazy_commands=COMMANDS, epilog=_EPILOG)
@click.version_option(package_name="mcpbind", prog_name="mcpbind")
def main() -> None:
    """mcpbind: a typed Model Context Protocol toolkit.

    SERVER arguments are either a command line that starts a stdio server, quoted as one
    argument (e.g. "python -m examples.notes_server"), or an http(s):// URL.
    """
