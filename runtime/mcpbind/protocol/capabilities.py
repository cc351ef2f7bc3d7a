"""Whether a set of declared capabilities holds a capability (basic/lifecycle.mdx, Capability
Negotiation): the one test the core, the request acceptance and the sub-capability checks share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["declares_any", "has_capability"]


def has_capability(caps: Mapping[str, Any] | None, path: tuple[str, ...]) -> bool:
    """Whether ``caps`` declares ``path`` (every key present; the leaf not ``None``/``False``).

    ``elicitation: {}`` reads as ``{"form": {}}`` (client/elicitation.mdx §Capabilities: an
    empty object declares form mode only, for backwards compatibility)."""
    node: Any = caps
    for key in path:
        # A dict (the usual case) spares the ABC's Python-level isinstance check.
        if type(node) is not dict and not isinstance(node, Mapping):
            return False
        if key not in node:
            return key == "form" and path[0] == "elicitation" and node == {}
        node = node[key]
    return node is not None and node is not False


def declares_any(caps: Mapping[str, Any] | None, names: tuple[str, ...]) -> bool:
    """Whether ``caps`` declares any of the top-level capabilities ``names``, each read as
    :func:`has_capability` reads ``(name,)``: one call for what a 2026-07-28 server asks of
    every request's client (the gateway: can it be asked anything?)."""
    found: Any = caps  # from the wire: not always a mapping
    if not found:  # the usual case: a client that declares nothing
        return False
    if type(found) is not dict and not isinstance(found, Mapping):
        return False
    for name in names:
        node = found.get(name)
        if node is not None and node is not False:
            return True
    return False
