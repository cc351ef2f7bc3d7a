"""Why a server failed, in one line, and whether trying again can help.

A stdio server that dies says why on stderr (a Node stack trace, a Python traceback); the
transport's reason carries its tail. The Host reports the cause as one line (the exit status
and the line of stderr that names the error) and the tail once, not on every retry; a command
that cannot be started (not found, not executable, a missing working directory) fails for
good instead of being retried, and so does a configuration error found on connecting (an
unset ``${env:X}``) and a server that refuses the configured credentials (HTTP 401/403).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..protocol import McpError
from .config import ConfigError
from .state import StartError, describe

__all__ = ["Failure"]

_TAIL_MARK = "; stderr tail:\n"
#: A line that names an error: ``Error: Cannot find module``, ``ModuleNotFoundError: ...``.
_ERROR_LINE = re.compile(r"^\s*(?:Uncaught\s+)?[\w.]*(?:Error|Exception|Fatal)\b[^:]*:\s*\S")


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed attempt: the one-line cause, the stderr tail, and whether to retry."""

    summary: str
    stderr: str = ""
    permanent: bool = False

    @classmethod
    def of(cls, exc: BaseException) -> Failure:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        if isinstance(exc, StartError):
            return cls(str(exc), permanent=exc.permanent)
        if isinstance(exc, ConfigError):  # a missing ${env:X}, a bad key: the same next time
            return cls(str(exc), permanent=True)
        if _refused(exc):
            return cls(f"{describe(exc)} (check the server's credentials)", permanent=True)
        return cls.of_reason(describe(exc))

    @classmethod
    def of_reason(cls, reason: str) -> Failure:
        head, _, tail = reason.partition(_TAIL_MARK)
        head = head.removeprefix("[-32000] ").removeprefix("Connection closed: ")
        tail = tail.strip()
        telling = _telling_line(tail)
        return cls(f"{head}: {telling}" if telling else head, tail)

    def same_as(self, other: Failure | None) -> bool:
        """The same cause again (process ids and numbers aside)."""
        return other is not None and _shape(self.summary) == _shape(other.summary)


def _refused(exc: BaseException) -> bool:
    """Whether the server refused our credentials (HTTP 401/403): the configuration's token
    or client is wrong, and sending the same again cannot help."""
    if not isinstance(exc, McpError):
        return False
    data = exc.data if isinstance(exc.data, dict) else {}
    return data.get("httpStatus") in (401, 403)


def _telling_line(tail: str) -> str:
    """The line of stderr that names the error (the last such line: a Python traceback ends
    with it), else the last line."""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    named = [line for line in lines if _ERROR_LINE.match(line)]
    return (named or lines or [""])[-1][:200]


def _shape(text: str) -> str:
    return re.sub(r"\d+", "#", text)
