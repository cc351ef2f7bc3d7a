"""The ``mcpbind`` command line: talk to one server, serve one, bind one, run a host.

Subcommands are imported only when they run (:class:`LazyGroup`), so ``mcpbind --help`` stays
fast and a missing optional dependency (the ``http`` or ``codegen`` extra) fails only the one
command that needs it, with a message that names the extra. Exit codes: :mod:`.errors`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:
    from .errors import EXIT_CODES
    from .group import COMMANDS, main
    from .lazy import LazyGroup

__all__ = ["COMMANDS", "EXIT_CODES", "LazyGroup", "main", "run"]

#: Every name but ``run`` is imported at its first use: they import click, and the console
#: script starts the server of a plain ``mcpbind ls SERVER`` before that (:mod:`.prestart`).
__getattr__ = lazy_attributes(
    __name__,
    {"COMMANDS": ".group", "main": ".group", "EXIT_CODES": ".errors", "LazyGroup": ".lazy"},
    globals(),
)


def run() -> None:
    """The ``mcpbind`` console script and ``python -m mcpbind.cli``: :func:`main` on
    ``sys.argv``, with the stdio server of a plain ``mcpbind ls SERVER`` started before
    click and the rest of the CLI are imported (issue 15, cold start)."""
    from .prestart import discard_unused, prestart

    prestart(sys.argv[1:])
    try:
        from .group import main
        from .output import show_library_logs

        show_library_logs()
        main(prog_name="mcpbind")
    finally:
        discard_unused()
