"""The one exception the OAuth client raises, and the redaction every message goes through.

A token never reaches a log line or an exception text: messages are built from server
metadata, error codes and URLs only, and :func:`redact` scrubs anything that looks like a
credential from text a server sent back (an ``error_description`` may echo what we sent).
"""

from __future__ import annotations

import re

from ...transports.base import AuthorizationFailed

__all__ = ["AuthError", "redact"]

_SECRETS = re.compile(
    r"(?i)((?:access|refresh|id)_token|client_secret|assertion|code_verifier|code|"
    r"authorization|dpop)([\"']?\s*[:=]\s*[\"']?)([^\s\"'&,]+)"
)
_BEARER = re.compile(r"(?i)\b(bearer|dpop|basic)\s+[A-Za-z0-9\-._~+/]+=*")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")


def redact(text: str, limit: int = 300) -> str:
    """``text`` with credentials replaced by ``[redacted]``, cut to ``limit`` characters."""
    text = _SECRETS.sub(r"\1\2[redacted]", text)
    text = _BEARER.sub(r"\1 [redacted]", text)
    text = _JWT.sub("[redacted JWT]", text)
    return text if len(text) <= limit else text[:limit] + "…"


class AuthError(AuthorizationFailed):
    """Authorization could not be obtained or was refused: one line that says why.

    ``status`` is the HTTP status that led here (401, 403), when there was one.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(redact(message, 500))
        self.status = status
