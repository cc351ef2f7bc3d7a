"""Server settings for the stateless era: versions, cache hints, ``requestState`` protection.

A leaf module (settings, and the key check of ``request_state``) so ``Server`` can hold one without importing the dispatcher.
"""

from __future__ import annotations

import os
from typing import Literal

import msgspec

from ..versions import ALL_VERSIONS
from .request_state import check_key

__all__ = [
    "STATE_KEYS_VARIABLE",
    "CacheHint",
    "StatelessOptions",
    "keys_from_environment",
    "options_of",
]

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
    secret: bytes = b""
    """HMAC-SHA256 key sealing ``requestState``. Default: the first of ``MCPBIND_STATE_KEYS``
    in the environment, else random per process: set the same key on every replica when
    requests may land on different processes."""
    previous_secrets: tuple[bytes, ...] = ()
    """Earlier keys, still accepted when opening a state and never used to seal one (key
    rotation). Default: the rest of ``MCPBIND_STATE_KEYS`` when ``secret`` came from it."""
    audience: str | None = None
    """Who a state is for: one minted for another audience is refused even under a shared key.
    ``None``: the server's name (replicas of one server share it)."""
    state_ttl: float = 600.0
    """Seconds a ``requestState`` stays valid (mrtr.mdx: a short expiry against replay)."""
    max_rounds: int = 8
    """Input rounds one request may take before the server gives up with an error."""
    server_info_in_meta: bool = True
    """Put ``io.modelcontextprotocol/serverInfo`` in every result's ``_meta``."""

    def __post_init__(self) -> None:
        if not self.secret:
            keys = keys_from_environment()
            self.secret = keys[0] if keys else os.urandom(32)
            if not self.previous_secrets:
                self.previous_secrets = tuple(keys[1:])
        for key in (self.secret, *self.previous_secrets):
            check_key(key)

    def __repr__(self) -> str:  # without the secret
        return (
            f"StatelessOptions(versions={self.versions!r}, cache={self.cache!r}, "
            f"audience={self.audience!r}, state_ttl={self.state_ttl!r}, max_rounds={self.max_rounds!r}, "
            f"server_info_in_meta={self.server_info_in_meta!r})"
        )

    def hint(self, method: str) -> CacheHint:
        return self.cache.get(method, CacheHint())


STATE_KEYS_VARIABLE = "MCPBIND_STATE_KEYS"


def keys_from_environment() -> list[bytes]:
    """The keys of ``MCPBIND_STATE_KEYS``: comma-separated base64 (standard or url-safe,
    padding optional), the current key first; ``[]`` when it is unset or empty."""
    import base64
    import binascii

    keys = []
    for text in os.environ.get(STATE_KEYS_VARIABLE, "").split(","):
        text = text.strip()
        if not text:
            continue
        try:
            keys.append(
                base64.b64decode(
                    text.replace("-", "+").replace("_", "/") + "=" * (-len(text) % 4), validate=True
                )
            )
        except (binascii.Error, ValueError):
            raise ValueError(f"{STATE_KEYS_VARIABLE}: a key is not base64") from None
    return keys


_DEFAULT = StatelessOptions()


def options_of(server: object) -> StatelessOptions:
    """The server's options (defaults for an object without them)."""
    opts = getattr(server, "stateless", None)
    return opts if isinstance(opts, StatelessOptions) else _DEFAULT
