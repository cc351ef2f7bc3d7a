"""Opaque pagination cursors (2025-11-25 basic/utilities/pagination.mdx): a position, encoded;
a cursor the server did not mint is -32602."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from .._lazy import LazyModule
from .errors import INVALID_PARAMS, McpError

if TYPE_CHECKING:
    import base64
else:  # imported at first use, not with mcpbind (issue 15, cold start)
    base64 = LazyModule("base64", globals())

__all__ = ["decode_cursor", "encode_cursor"]


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(msgspec.json.encode({"o": offset})).decode()


def decode_cursor(cursor: str) -> int:
    try:
        offset = msgspec.json.decode(base64.urlsafe_b64decode(cursor.encode()))["o"]
    except Exception:
        raise McpError(INVALID_PARAMS, "Invalid cursor") from None
    if not isinstance(offset, int) or offset < 0:
        raise McpError(INVALID_PARAMS, "Invalid cursor")
    return offset
