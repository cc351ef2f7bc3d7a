"""The stdio server of a plain ``mcpbind ls SERVER``, started before click is imported.

``mcpbind ls`` is mostly waiting for the server to start (a Python server imports its SDK
and an event loop), so the CLI starts it as early as it can: before click and the rest of the
CLI are imported (~140M instructions), instead of after parsing its options with them (issue
15, cold start). Only when nothing else on the command line can change how the server is
started (no ``--env``, ``--cwd``, help or unknown option): then the argv click parses later
names the same process, and :meth:`ServerTarget.start <.target.ServerTarget.start>` takes it
over. Click-free, like what it imports: the stdio process starter and the SERVER parser.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..transports.stdio.spawn import StartedProcess

__all__ = ["discard_unused", "prestart", "take"]

#: What may follow ``ls SERVER``: flags that change what is shown, not what is started.
_SHOW_FLAGS = frozenset(("--json", "--verbose", "-v"))

#: Started servers by their SERVER text, until a target takes them over.
_started: dict[str, StartedProcess] = {}


def prestart(argv: Sequence[str]) -> None:
    """Start the stdio server of ``argv`` (the command line after ``mcpbind``) now when it is
    ``ls SERVER`` plus only flags of :data:`_SHOW_FLAGS`; anything else (an URL, a SERVER that
    does not parse or does not start) is left to the CLI, which reports it as usual."""
    if len(argv) < 2 or argv[0] != "ls" or argv[1].startswith("-"):
        return
    if not _SHOW_FLAGS.issuperset(argv[2:]):
        return
    from ..launch import parse_server
    from ..transports.stdio.spawn import start_process

    try:
        location = parse_server(argv[1])
    except ValueError:
        return
    if location.url is not None:
        return
    command, *args = location.argv
    try:
        _started[argv[1]] = start_process(command, args)
    except OSError:
        return


def take(spec: str, env: dict[str, str], cwd: str | None) -> StartedProcess | None:
    """The server started for ``spec`` if it was started as ``env`` and ``cwd`` ask (the
    inherited environment only, this directory), else ``None``; each is taken once."""
    if env or cwd is not None:
        return None
    return _started.pop(spec, None)


def discard_unused() -> None:
    """Kill every started server no target took over (the command failed before it)."""
    while _started:
        _started.popitem()[1].discard()
