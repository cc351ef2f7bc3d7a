"""A linear, allocation-light nesting-depth scan over raw JSON bytes.

msgspec decodes recursively, so a hostile ``[[[[...`` payload would exhaust the stack
(``RecursionError``) before any validation runs. :func:`exceeds_depth` runs *before* decoding:

- fast path: if the message holds no more than ``limit`` opening brackets in total (counted in
  C by ``bytes.count``), it cannot nest deeper than ``limit``;
- otherwise escapes are stripped (in C) and one regex pass yields only brackets and whole
  string literals (so brackets inside strings never count), and the depth is tracked in a loop that stops as
  soon as the bound is crossed: a 100k-deep payload is rejected after ``limit + 1`` matches.

The scan does not validate JSON; the decoder does that afterwards.
"""

from __future__ import annotations

import re

__all__ = ["DEFAULT_MAX_DEPTH", "exceeds_depth"]

DEFAULT_MAX_DEPTH = 128

# After escapes are stripped, a string literal is a quote, non-quotes, and a closing quote (or
# the end of input when unterminated): every match attempt succeeds, so the scan is linear.
_TOKENS = re.compile(rb'"[^"]*(?:"|\Z)|[\[\]{}]')
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")


def exceeds_depth(data: bytes | bytearray | memoryview, limit: int = DEFAULT_MAX_DEPTH) -> bool:
    """True when ``data`` nests arrays/objects more than ``limit`` levels deep."""
    raw = bytes(data) if not isinstance(data, bytes) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    # Drop escaped backslashes, then escaped quotes (both in C): no quote left inside a string
    # is escaped, and nothing outside strings changes (backslashes only occur in strings).
    raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    depth = 0
    for match in _TOKENS.finditer(raw):
        first = raw[match.start()]
        if first in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif first in _CLOSE:
            depth -= 1
    return False
