"""Whether a set of declared capabilities holds a capability (basic/lifecycle.mdx, Capability
Negotiation): the one test the core, the request acceptance and the sub-capability checks share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["has_capability"]


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
