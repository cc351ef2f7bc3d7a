"""Protocol errors: remote errors (JSON-RPC error objects) and local misuse, kept apart.

As in h11, an error the *peer* caused travels as data (:class:`McpError`, carried by an
``ErrorReceived`` event or produced by the core as an ``Outgoing`` error response), while an
error *we* caused (calling the API in a way the protocol forbids) raises
:class:`LocalProtocolError` before anything is produced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import join_error_path

__all__ = [
    "CONNECTION_CLOSED",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "LocalProtocolError",
    "McpError",
    "RemoteProtocolError",
    "UrlElicitationRequired",
    "error_for_exception",
    "validation_message",
]

# JSON-RPC 2.0, section 5.1 "Error object".
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

# MCP-defined codes (implementation-defined server-error range -32000..-32099).
RESOURCE_NOT_FOUND: Final = -32002
"""server/resources: "Resource not found" (2025 revisions)."""
HEADER_MISMATCH: Final = -32020
"""Streamable HTTP: an ``Mcp-*`` header disagrees with the JSON-RPC body."""
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
"""The request needs a client capability the client did not declare."""
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
"""The requested protocol version is not supported."""
URL_ELICITATION_REQUIRED: Final = -32042
"""client/elicitation.mdx §URL Elicitation Required Error (2025-11-25): the request needs the
URL-mode elicitations listed in ``data.elicitations`` completed first."""

# Local-only codes used to fail pending calls (never put on the wire by this core).
CONNECTION_CLOSED: Final = -32000
REQUEST_TIMEOUT: Final = -32001


class McpError(Exception):
    """A JSON-RPC error object: ``code``, ``message`` and optional ``data``."""

    code: int
    message: str
    data: Any

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, data={self.data!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, McpError):
            return NotImplemented
        return (self.code, self.message, self.data) == (other.code, other.message, other.data)

    __hash__ = Exception.__hash__


class UrlElicitationRequired(McpError):
    """-32042 (client/elicitation.mdx §URL Elicitation Required Error): the request can go on
    only once these URL-mode elicitations are completed. A server handler raises it with the
    ``ElicitRequestURLParams`` (or their wire dicts); a client call raises it as a
    ``PeerError``, with ``elicitations`` to show the user before retrying."""

    def __init__(
        self,
        elicitations: Sequence[Any],
        message: str = "This request requires more information.",
    ) -> None:
        items = [e if isinstance(e, Mapping) else msgspec.to_builtins(e) for e in elicitations]
        super().__init__(URL_ELICITATION_REQUIRED, message, {"elicitations": items})

    @property
    def elicitations(self) -> list[t.ElicitRequestURLParams]:
        """The URL-mode elicitations listed in ``data`` (entries of another shape are left out)."""
        raw = self.data.get("elicitations") if isinstance(self.data, Mapping) else None
        found: list[t.ElicitRequestURLParams] = []
        for item in raw if isinstance(raw, list) else ():
            try:
                found.append(msgspec.convert(item, t.ElicitRequestURLParams))
            except msgspec.ValidationError:
                continue
        return found


class RemoteProtocolError(McpError):
    """The peer broke the protocol in a response (malformed or ill-typed result).

    Delivered in an ``ErrorReceived`` event so the pending call fails instead of hanging.
    """


class LocalProtocolError(Exception):
    """We tried to do something the protocol (or our declared state) forbids."""


def error_for_exception(exc: BaseException, debug: bool = False) -> McpError:
    """Map a handler exception to the error object to send back.

    ``McpError`` passes through unchanged. Anything else becomes ``INTERNAL_ERROR`` with a
    sanitized message: the exception type and text only when ``debug`` is set, never a
    traceback, and nothing at all about the exception otherwise.
    """
    if isinstance(exc, McpError):
        return exc
    if debug:
        text = str(exc)
        detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        return McpError(INTERNAL_ERROR, "Internal error", {"exception": detail[:1000]})
    return McpError(INTERNAL_ERROR, "Internal error")


def validation_message(exc: msgspec.ValidationError, root: str) -> str:
    """What failed to validate, with its path anchored in ``root`` (``$.params.name``)."""
    # msgspec reports paths from the decoded value ("- at `$.name`"); join the halves reported
    # from inside unions and raw-JSON checks, then anchor the path in the message.
    return join_error_path(str(exc)).replace("at `$", f"at `$.{root}")
