"""A nesting-depth bound checked over raw JSON bytes before decoding, at C speed.

msgspec decodes recursively, so a hostile ``[[[[...`` payload must be refused before any
decoding runs. :func:`exceeds_depth`:

- fast path: a message with no more than ``limit`` opening brackets in total (``bytes.count``,
  in C) cannot nest deeper than ``limit``;
- otherwise escapes and then string literals are removed and everything but brackets is
  deleted (``bytes.replace``/``split``/``translate``, all in C); then each pass removes
  the innermost ``[]``/``{}`` pairs everywhere at once. Depth ``d`` needs exactly ``d`` passes,
  so at most ``limit + 1`` linear passes decide, whatever the input: a 100k-deep payload costs
  ``limit`` C-level scans, an ordinary 80 KB message a handful.

Unclosed or mismatched brackets stop the passes early; the walk then measures the open prefix
(a decoder would recurse that deep before finding the error).
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_DEPTH", "exceeds_depth"]

DEFAULT_MAX_DEPTH = 128

_KEEP = b'[]{}"'
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_C_PASSES = 16
_OPEN = frozenset(b"[{")


def exceeds_depth(data: bytes | bytearray | memoryview, limit: int = DEFAULT_MAX_DEPTH) -> bool:
    """True when ``data`` nests arrays/objects more than ``limit`` levels deep."""
    raw = bytes(data) if not isinstance(data, bytes) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    # Escapes first (so no quote left is escaped), then keep only brackets and quotes, then
    # drop string literals: what remains is the bracket structure, usually a few KB.
    compact = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _DROP)
    # Outside-string runs are the even pieces between quotes (split/join run in C).
    brackets = b"".join(compact.split(b'"')[::2]) if b'"' in compact else compact
    passes = 0
    while passes < min(limit, _C_PASSES):
        if not brackets:
            return False
        inner = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if len(inner) == len(brackets):
            break  # unclosed or mismatched: the walk below measures the open prefix
        brackets, passes = inner, passes + 1
    # Each pass removed one level; what is left is deep or adversarial: walk it, stopping as
    # soon as the bound is crossed (after at most ``limit`` bytes of a ``[[[[...`` payload).
    remaining, depth = limit - passes, 0
    for byte in brackets:
        if byte in _OPEN:
            depth += 1
            if depth > remaining:
                return True
        else:
            depth -= 1
    return False
