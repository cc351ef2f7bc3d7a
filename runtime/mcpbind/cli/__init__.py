"""The ``mcpbind`` command line: talk to one server, serve one, bind one, run a host.

Subcommands are imported only when they run (:class:`LazyGroup`), so ``mcpbind --help`` stays
fast and a missing optional dependency (the ``http`` or ``codegen`` extra) fails only the one
command that needs it, with a message that names the extra. Exit codes: :mod:`.errors`.
"""

import sys
from typing import TYPE_CHECKING

# Every name but ``run`` is imported at its first use: they import click, and the console
# script starts the server of a plain ``mcpbind ls SERVER`` before that (:mod:`.prestart`).
# These imports and ``run`` are the names of the package (``mcpbind._lazy.lazy_package``).
if TYPE_CHECKING:
    from .errors import EXIT_CODES as EXIT_CODES
    from .group import COMMANDS as COMMANDS
    from .group import main as main
    from .lazy import LazyGroup as LazyGroup
else:
    from .._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())


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
