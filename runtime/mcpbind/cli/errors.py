"""Exit codes of the CLI, and the one place that turns an exception into one.

Scripts branch on the code, so each failure class keeps its own: a tool that ran and said
"no" (1) is not a server that refused the request (2), which is not a server we could not
reach (3).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn

import click

from .output import echo

__all__ = [
    "DEBUG_KEY",
    "EXIT_AUTH",
    "EXIT_CODES",
    "EXIT_CONNECTION",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_MISSING_DEPENDENCY",
    "EXIT_OK",
    "EXIT_PROTOCOL",
    "EXIT_TIMEOUT",
    "EXIT_TOOL_ERROR",
    "EXIT_USAGE",
    "CliFailure",
    "ReaderGone",
    "exit_code_for",
    "main_with_one_line_errors",
    "missing_dependency",
    "translate",
]

EXIT_OK: Final = 0
EXIT_TOOL_ERROR: Final = 1
EXIT_USAGE: Final = 2  # click's own code for usage errors
EXIT_PROTOCOL: Final = 2
EXIT_CONNECTION: Final = 3
EXIT_TIMEOUT: Final = 4
EXIT_MISSING_DEPENDENCY: Final = 5
EXIT_AUTH: Final = 6
EXIT_INTERNAL: Final = 70  # EX_SOFTWARE
EXIT_INTERRUPTED: Final = 130

#: ``click.Context.meta`` key: ``--debug`` was given (tracebacks wanted).
DEBUG_KEY: Final = "mcpbind.debug"

EXIT_CODES: Final[dict[int, str]] = {
    EXIT_OK: "success",
    EXIT_TOOL_ERROR: "the tool ran and reported an error (isError); bind --check: file out of date",
    EXIT_PROTOCOL: "bad usage (click), or the server answered with a JSON-RPC error",
    EXIT_CONNECTION: "could not start or reach the server, or it went away",
    EXIT_TIMEOUT: "the server did not answer in time (--timeout)",
    EXIT_MISSING_DEPENDENCY: "an optional dependency is not installed (the message names it)",
    EXIT_AUTH: "the server requires authorization (HTTP 401/403): use --auth, or it failed",
    EXIT_INTERNAL: "an unexpected error inside mcpbind (a bug): --debug shows the traceback",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}


class CliFailure(click.ClickException):
    """A failure with a message for stderr and a chosen exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        setattr(self, "exit_code", exit_code)  # noqa: B010  (a ClassVar on ClickException)


def missing_dependency(what: str, exc: ImportError, extra: str) -> CliFailure:
    """The error for an optional dependency that is not installed."""
    return CliFailure(
        f"{what} needs an optional dependency that is not installed ({exc}); "
        f"install it with: pip install 'mcpbind[{extra}]'",
        EXIT_MISSING_DEPENDENCY,
    )


def _leaf(exc: BaseException) -> BaseException:
    """The single exception inside nested one-member exception groups (task groups wrap)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _is_http_connect_error(exc: BaseException) -> bool:
    """httpx2's transport errors, checked without importing the HTTP stack."""
    for name in ("httpx2", "httpx"):
        module = sys.modules.get(name)
        kind = getattr(module, "TransportError", None) if module is not None else None
        if isinstance(kind, type) and isinstance(exc, kind):
            return True
    return False


def exit_code_for(exc: BaseException) -> tuple[int, str] | None:
    """The exit code and message for an exception raised while talking to a server, or
    ``None`` when it is a bug that should surface with its traceback."""
    from ..client import UnsupportedVersion
    from ..connection import ConnectionClosed, RequestTimeout
    from ..protocol import McpError
    from ..transports import TransportClosed

    exc = _leaf(exc)
    if isinstance(exc, BaseExceptionGroup):  # several failures at once: the first we know
        for member in exc.exceptions:
            known = exit_code_for(member)
            if known is not None:
                return known
        return None
    if isinstance(exc, click.ClickException | KeyboardInterrupt):
        return None
    if isinstance(exc, RequestTimeout):
        return EXIT_TIMEOUT, f"timed out: {exc.message}"
    if isinstance(exc, ConnectionClosed):
        return EXIT_CONNECTION, exc.message
    if isinstance(exc, TransportClosed):
        return EXIT_CONNECTION, f"connection failed: {exc}"
    if isinstance(exc, UnsupportedVersion):
        return EXIT_PROTOCOL, f"handshake failed: {exc.message}"
    if isinstance(exc, McpError):
        data = exc.data if isinstance(exc.data, dict) else {}
        if data.get("authorization") is True:
            return EXIT_AUTH, exc.message
        if data.get("httpStatus") in (401, 403):
            from .refusals import refusal_message

            return EXIT_AUTH, refusal_message(data["httpStatus"], data, exc.message)
        return EXIT_PROTOCOL, f"server error {exc.code}: {exc.message}"
    if isinstance(exc, OSError) or _is_http_connect_error(exc):
        return EXIT_CONNECTION, f"connection failed: {exc}"
    return None


def translate(exc: BaseException) -> NoReturn:
    """Re-raise ``exc`` as a :class:`CliFailure` when it has an exit code, else unchanged."""
    known = exit_code_for(exc)
    if known is None:
        leaf = _leaf(exc)
        if isinstance(leaf, click.ClickException):
            raise leaf from None
        if isinstance(leaf, KeyboardInterrupt):
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        raise exc
    code, message = known
    raise CliFailure(message, code) from exc


class ReaderGone(Exception):
    """stdout's reader went away (``| head -1``): not a failure."""


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush after a closed pipe
    neither fails nor prints."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)


def _fail(message: str, code: int, cause: BaseException | None, debug: bool) -> NoReturn:
    if debug and cause is not None:  # (the messages in it may quote a server)
        echo("".join(traceback.format_exception(cause)), err=True, nl=False)
    echo(f"Error: {message.strip() or 'failed'}", err=True)
    sys.exit(code)


def main_with_one_line_errors(
    run: Callable[[list[str]], Any], args: Sequence[str], debug: bool
) -> NoReturn:
    """Run the CLI (``run(args)``, click in non-standalone mode) so that every failure is one
    line on stderr and an exit code of :data:`EXIT_CODES`; with ``debug`` the traceback of
    the cause comes first. A reader that stops reading (``mcpbind ls ... | head -1``) is not
    a failure: exit 0, quietly."""
    try:
        code = run(list(args))
        sys.stdout.flush()
    except (BrokenPipeError, ReaderGone):
        _silence_stdout()
        sys.exit(EXIT_OK)
    except click.UsageError as exc:
        where = f" (try '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        _fail(exc.format_message() + where, exc.exit_code, exc.__cause__, debug)
    except click.ClickException as exc:
        _fail(exc.format_message(), exc.exit_code, exc.__cause__, debug)
    except (click.Abort, KeyboardInterrupt):
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        if debug:
            raise
        _fail(
            f"unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            EXIT_INTERNAL,
            None,
            debug,
        )
    sys.exit(code if isinstance(code, int) else EXIT_OK)
