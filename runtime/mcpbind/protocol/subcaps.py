"""Sub-capabilities a request needs because of what its params carry, not its method alone.

client/sampling.mdx §Tools in Sampling: a ``sampling/createMessage`` with ``tools`` or
``toolChoice`` needs ``sampling.tools``. client/elicitation.mdx §Capabilities: an
``elicitation/create`` needs the mode it uses (``elicitation.url`` or ``elicitation.form``);
an empty ``elicitation`` object means form mode only. The core checks both directions with
these: a sender refuses locally, a receiver answers -32602; the 2026-07-28 input rounds use
them too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from .capabilities import has_capability

__all__ = ["SUBCAPABILITY_METHODS", "needed_subcapability", "subcapability_refusal"]

SUBCAPABILITY_METHODS = frozenset({"sampling/createMessage", "elicitation/create"})
"""The methods whose params can need more than the method's own capability."""

_WHAT: dict[tuple[str, ...], str] = {
    ("sampling", "tools"): "tool use in sampling (sampling.mdx §Tools in Sampling)",
    ("elicitation", "url"): "URL-mode elicitation (elicitation.mdx §Capabilities)",
    ("elicitation", "form"): "form-mode elicitation (elicitation.mdx §Capabilities)",
}


def _given(params: Any, attr: str, key: str) -> Any:
    value = params.get(key) if isinstance(params, Mapping) else getattr(params, attr, None)
    return None if value is msgspec.UNSET else value


def needed_subcapability(method: str, params: Any) -> tuple[str, ...] | None:
    """The capability path ``params`` need beyond the method's own, or ``None``."""
    if params is None:
        return None
    if method == "sampling/createMessage":
        uses_tools = _given(params, "tools", "tools") is not None
        if uses_tools or _given(params, "tool_choice", "toolChoice") is not None:
            return ("sampling", "tools")
        return None
    if method == "elicitation/create":
        mode = _given(params, "mode", "mode")
        return ("elicitation", "url" if mode == "url" else "form")
    return None


def subcapability_refusal(
    method: str, params: Any, caps: Mapping[str, Any] | None
) -> tuple[tuple[str, ...], str] | None:
    """The missing sub-capability of a request and a one-line reason, or ``None`` if allowed."""
    need = needed_subcapability(method, params)
    if need is None or has_capability(caps, need):
        return None
    return need, f"{_WHAT[need]} needs the client capability {'.'.join(need)!r}"
