"""A nesting-depth bound checked over raw JSON bytes before decoding, at C speed, and the
salvage of a request id from a message that cannot be decoded.

msgspec decodes recursively, so a hostile ``[[[[...`` payload must be refused before any
decoding runs (past ~1,000 levels msgspec raises ``RecursionError``, not ``DecodeError``).
:func:`exceeds_depth` is exact for valid JSON and never under-counts for invalid JSON:

- fast path: a message with no more than ``limit`` opening brackets in total (``bytes.count``,
  in C) cannot nest deeper than ``limit``;
- otherwise escapes and then string literals are removed, ``{``/``}`` are mapped to ``[``/``]``
  and everything else is deleted (``bytes.replace``/``split``/``translate``, all in C); each
  pass then removes the innermost ``[]`` pairs everywhere at once (``bytes.replace`` does not
  rescan what it produced), so depth ``d`` needs exactly ``d`` passes. A run of ``limit + 1``
  openers decides at once; when a pass shrinks the text little, one running sum (``accumulate``
  over a lookup, C iteration) measures the rest: linear whatever the input.

Unclosed or stray brackets stop the passes early; what is left is then ``]...][...[``, and
the passes done plus the openers left bound the depth a decoder would reach.
"""

from __future__ import annotations

import itertools
import re
from itertools import accumulate

import msgspec

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_META_BYTES",
    "exceeds_depth",
    "shallow_if_valid",
    "meta_too_large",
    "salvage_id",
    "salvage_oversized_id",
]

DEFAULT_MAX_DEPTH = 128
DEFAULT_MAX_META_BYTES = 64 * 1024


class _MetaSpan(msgspec.Struct):
    meta: msgspec.Raw = msgspec.field(default=msgspec.Raw(b"{}"), name="_meta")


_META_SPAN = msgspec.json.Decoder(_MetaSpan)

_KEEP = b'[]{}"'
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_STEP = [0] * 256
_STEP[ord("[")], _STEP[ord("]")] = 1, -1
# Patterns of the error paths: compiled on first use (re caches them), not at import.
_ID_KEY = rb'"id"\s*:\s*'
_ID_VALUE = rb'(-?\d+|"(?:[^"\\]|\\.)*")\s*[,}]'
_LAST_ID = rb',\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*}\s*$'
_MAX_ID_CANDIDATES = 4


def _structure(raw: bytes) -> bytes:
    """Only the brackets outside string literals, all as ``[``/``]``."""
    # Escapes first (so no quote left is escaped), then keep only brackets and quotes, then
    # drop string literals: what remains is the bracket structure, usually a few KB.
    compact = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(_ONE_KIND, _DROP)
    # Outside-string runs are the even pieces between quotes (split/join run in C).
    return b"".join(compact.split(b'"')[::2]) if b'"' in compact else compact


def exceeds_depth(data: bytes | bytearray | memoryview, limit: int = DEFAULT_MAX_DEPTH) -> bool:
    """True when ``data`` nests arrays/objects more than ``limit`` levels deep."""
    raw = bytes(data) if not isinstance(data, bytes) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    brackets = _structure(raw)
    if b"[" * (limit + 1) in brackets:
        return True
    passes = 0
    while brackets:
        inner = brackets.replace(b"[]", b"")
        if len(inner) == len(brackets):
            # No adjacent pair left: ``]...][...[``. A decoder stops at the first stray
            # closer; the openers left are unclosed levels on top of those removed.
            return passes + inner.count(b"[") > limit
        passes += 1
        if passes > limit:
            return True
        if len(inner) * 4 > len(brackets) * 3:
            # Passes that shrink little (many deep branches) would need up to ``limit``
            # copies: one running sum (C iteration) measures what is left instead.
            return passes + max(accumulate(map(_STEP.__getitem__, inner))) > limit
        brackets = inner
    return False


def shallow_if_valid(data: bytes, limit: int = DEFAULT_MAX_DEPTH) -> bool:
    """Whether ``data``, *if it is valid JSON*, nests at most ``limit`` levels: decided from
    its length and whether it holds a ``[``, without scanning its brackets. The caller must
    decode ``data`` and, if that fails, check it with :func:`exceeds_depth` before saying
    why (a run of unclosed brackets is refused for its depth).

    In valid JSON, ``d`` nested containers take at least 2 bytes for the innermost, 2 for
    each array around it (``[``, ``]``) and 5 for each object around it (``{``, a key of at
    least ``""``, ``:``, ``}``). So ``2d <= len`` and, with ``A`` arrays at most,
    ``5d <= len + 3 + 3A``: a message with no ``[`` (``find``: ``memchr``) and at most
    ``5 * limit - 3`` bytes long, such as the usual 2026-07-28 request with its ``_meta``,
    is shallow enough."""
    size = len(data)
    if size <= 2 * limit:
        return True
    if size + 3 > 5 * limit:
        return False
    arrays = data.count(b"[") if data.find(b"[") >= 0 else 0
    return size + 3 + 3 * arrays <= 5 * limit


def meta_too_large(params: bytes | msgspec.Raw, limit: int = DEFAULT_MAX_META_BYTES) -> bool:
    """Whether the params' ``_meta`` object is over ``limit`` bytes of JSON: it is decoded
    into Python objects (several times its size) and held while the handler runs. Params no
    bigger than ``limit`` pass at the cost of a ``len``; others are skimmed (``_meta`` is
    kept raw, nothing else is built). Undecodable params pass: the decoder reports them."""
    if len(params) <= limit:
        return False
    try:
        return len(_META_SPAN.decode(params).meta) > limit
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return False


def salvage_oversized_id(head: bytes, tail: bytes) -> tuple[int | str | None, bool]:
    """:func:`salvage_id` for a message of which only the first and last bytes were kept
    (too large): the id near the start, else a top-level ``,"id":...}`` closing it."""
    rid, is_request = salvage_id(head)
    if rid is not None:
        return rid, is_request
    last = re.search(_LAST_ID, tail)
    if last is not None:
        try:
            decoded = msgspec.json.decode(last.group(1))
        except msgspec.DecodeError:
            return None, False
        if isinstance(decoded, int | str) and not isinstance(decoded, bool):
            return decoded, _has_top_level_method(head)
    return None, False


def salvage_id(data: bytes) -> tuple[int | str | None, bool]:
    """The top-level ``id`` of a message that failed to decode (too deep, a bad escape
    elsewhere, cut short) and whether it has a top-level ``method``: so the error can be
    answered on that request, or the pending call failed, instead of ``id: null``."""
    rid: int | str | None = None
    id_value = re.compile(_ID_VALUE)
    for index, match in enumerate(re.finditer(_ID_KEY, data)):
        if index == _MAX_ID_CANDIDATES:
            break
        value = id_value.match(data, match.end())
        if value is None or not _top_level(data, match.start()):
            continue
        token = value.group(1)
        try:
            decoded = msgspec.json.decode(token)
        except msgspec.DecodeError:
            continue
        if isinstance(decoded, int | str) and not isinstance(decoded, bool):
            rid = decoded
            break
    if rid is None:
        return None, False
    return rid, _has_top_level_method(data)


def _has_top_level_method(data: bytes) -> bool:
    keys = re.finditer(rb'"method"\s*:', data[:65536])
    return any(_top_level(data, m.start()) for m in itertools.islice(keys, _MAX_ID_CANDIDATES))


def _top_level(data: bytes, position: int) -> bool:
    """Whether ``position`` (the quote of a key) is a key of the outermost object."""
    prefix = data[:position]
    compact = prefix.replace(b"\\\\", b"").replace(b'\\"', b"").translate(_ONE_KIND, _DROP)
    if compact.count(b'"') % 2:
        return False  # inside a string
    outside = b"".join(compact.split(b'"')[::2])
    return outside.count(b"[") - outside.count(b"]") == 1 and outside.lstrip()[:1] == b"["
