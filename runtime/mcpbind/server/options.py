"""Server settings for the stateless era: versions, cache hints, ``requestState`` protection.

A leaf module (dataclasses only) so ``Server`` can hold one without importing the dispatcher.
"""

from __future__ import annotations

import os
from typing import Literal

import msgspec

from ..versions import ALL_VERSIONS

__all__ = ["CacheHint", "StatelessOptions", "options_of"]

CacheScope = Literal["public", "private"]


class CacheHint(msgspec.Struct, frozen=True):
    """``ttlMs`` and ``cacheScope`` for one kind of result (server/utilities/caching.mdx)."""

    ttl_ms: int = 0
    scope: CacheScope = "public"

    def __post_init__(self) -> None:
        if self.ttl_ms < 0:
            raise ValueError("ttl_ms must be >= 0 (caching.mdx: servers MUST provide ttlMs >= 0)")
        if self.scope not in ("public", "private"):
            raise ValueError(f"scope must be 'public' or 'private', not {self.scope!r}")


def _default_hints() -> dict[str, CacheHint]:
    # Lists are shared unless they depend on the caller (then Server sends them "private",
    # mcpbind.server.visibility); reads may be per user.
    listing = CacheHint(60_000, "public")
    return {
        "server/discover": CacheHint(300_000, "public"),
        "tools/list": listing,
        "prompts/list": listing,
        "resources/list": listing,
        "resources/templates/list": listing,
        "resources/read": CacheHint(0, "private"),
    }


class StatelessOptions(msgspec.Struct, kw_only=True):
    """How a ``Server`` behaves towards clients of each era.

    ``versions`` lists what the server accepts, newest first: stateless versions are served
    per request, handshake versions through ``initialize``. Leave out every stateless version
    for a handshake-only server, or every handshake version for a stateless-only one.
    """

    versions: tuple[str, ...] = ALL_VERSIONS
    cache: dict[str, CacheHint] = msgspec.field(default_factory=_default_hints)
    """Cache hints by method; a cacheable method missing here gets ``ttlMs: 0``."""
    secret: bytes = msgspec.field(default_factory=lambda: os.urandom(32))
    """HMAC-SHA256 key for ``requestState``. Random per process by default: set the same key
    on every replica when requests may land on different processes."""
    state_ttl: float = 600.0
    """Seconds a ``requestState`` stays valid (mrtr.mdx: a short expiry against replay)."""
    max_rounds: int = 8
    """Input rounds one request may take before the server gives up with an error."""
    server_info_in_meta: bool = True
    """Put ``io.modelcontextprotocol/serverInfo`` in every result's ``_meta``."""

    def __repr__(self) -> str:  # without the secret
        return (
            f"StatelessOptions(versions={self.versions!r}, cache={self.cache!r}, "
            f"state_ttl={self.state_ttl!r}, max_rounds={self.max_rounds!r}, "
            f"server_info_in_meta={self.server_info_in_meta!r})"
        )

    def hint(self, method: str) -> CacheHint:
        return self.cache.get(method, CacheHint())


_DEFAULT = StatelessOptions()


def options_of(server: object) -> StatelessOptions:
    """The server's options (defaults for an object without them)."""
    opts = getattr(server, "stateless", None)
    return opts if isinstance(opts, StatelessOptions) else _DEFAULT
