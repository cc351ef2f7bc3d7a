"""The client's result cache (2026-07-28).

server/utilities/caching.mdx: a result is fresh for ``ttlMs`` after it arrived; the cache key
is the method and the parameters that affect the result (never ``_meta``); retries carrying
``inputResponses``/``requestState`` are never cached; a list-changed notification invalidates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import msgspec

__all__ = ["CACHED_METHODS", "INVALIDATES", "ResultCache"]

INVALIDATES: Final = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
    "notifications/resources/updated": ("resources/read",),
}
"""caching.mdx, Interaction with Notifications: which cached methods a notification makes stale."""

CACHED_METHODS: Final = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)


def _key_params(params: Any) -> bytes:
    if params is None:
        return b""
    if isinstance(params, msgspec.Struct):
        params = msgspec.structs.replace(params, meta=msgspec.UNSET)
    elif isinstance(params, dict):
        params = {k: v for k, v in params.items() if k != "_meta"}
    return msgspec.json.encode(params, order="sorted")


class ResultCache:
    """Fresh results by (method, params); one per client, so one authorization context."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[tuple[str, bytes], tuple[float, Any]] = {}
        self.hits = 0

    @staticmethod
    def cacheable(method: str, params: Any) -> bool:
        if method not in CACHED_METHODS:
            return False
        for attr in ("input_responses", "request_state"):
            if getattr(params, attr, msgspec.UNSET) is not msgspec.UNSET:
                return False
        return True

    def get(self, method: str, params: Any) -> Any | None:
        key = (method, _key_params(params))
        entry = self._entries.get(key)
        if entry is None:
            return None
        if self._clock() >= entry[0]:
            del self._entries[key]
            return None
        self.hits += 1
        return entry[1]

    def put(self, method: str, params: Any, result: Any) -> None:
        ttl = getattr(result, "ttl_ms", msgspec.UNSET)
        if not isinstance(ttl, int) or ttl <= 0:
            return  # absent, zero or negative: immediately stale
        self._entries[(method, _key_params(params))] = (self._clock() + ttl / 1000, result)

    def invalidate(self, methods: Sequence[str] | None = None) -> None:
        """Drop the entries of ``methods`` (all entries when ``None``)."""
        if methods is None:
            self._entries.clear()
            return
        for key in [k for k in self._entries if k[0] in methods]:
            del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)
