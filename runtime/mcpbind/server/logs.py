"""Where a server's own log lines go when the application set up no logging: stderr.

A handler's uncaught exception is logged with its traceback under the ``mcpbind.server``
logger (the standard ``logging`` module); ``serve``, ``serve_stdio`` and ``serve_http`` call
:func:`log_to_stderr` so that it is seen by default. An application that configured logging
itself (a handler on the root logger or on ``mcpbind``) keeps its own setup untouched. Never
stdout: on stdio that is the protocol's channel.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["FORMAT", "log_to_stderr"]

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_to_stderr() -> None:
    """Send mcpbind's warnings and errors (tracebacks included) to stderr, unless logging is
    configured already (then this does nothing; calling it twice attaches one handler)."""
    package = logging.getLogger("mcpbind")
    if package.hasHandlers():  # the application's own setup (root or mcpbind), or ours
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(logging.WARNING)
    package.addHandler(handler)
