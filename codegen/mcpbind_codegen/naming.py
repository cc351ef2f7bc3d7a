"""Python names for wire names: deterministic, collision-free, never shadowing what we annotate with."""

from __future__ import annotations

import keyword
import re

# Names used inside generated annotations: a field with one of these names would shadow it in
# the class namespace, so it gets a trailing underscore.
_SHADOWED = frozenset(
    {
        "list",
        "dict",
        "str",
        "int",
        "float",
        "bool",
        "Any",
        "Literal",
        "UnsetType",
        "UNSET",
        "msgspec",
    }
)
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake(name: str) -> str:
    """``inputSchema`` -> ``input_schema``; ``_meta`` -> ``meta``; ``$schema`` -> ``schema``."""
    core = name.lstrip("_$")
    core = re.sub(r"[^0-9A-Za-z]+", "_", core)
    out = _CAMEL_BOUNDARY.sub("_", core).lower().strip("_")
    if not out:
        out = "field"
    if out[0].isdigit():
        out = "f_" + out
    return out


def field_name(wire: str, taken: set[str]) -> str:
    """A Python attribute name for a wire property, unique within its class."""
    name = snake(wire)
    if keyword.iskeyword(name) or name in _SHADOWED:
        name += "_"
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def pascal(name: str) -> str:
    """``inputSchema`` -> ``InputSchema``; ``io.modelcontextprotocol/x`` -> ``IoModelcontextprotocolX``."""
    parts = re.split(r"[^0-9A-Za-z]+", name)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def stub_method_name(message_type: str, kind: str) -> str:
    """``CallToolRequest`` -> ``call_tool``; ``ProgressNotification`` -> ``notify_progress``."""
    for suffix in ("Request", "Notification"):
        if message_type.endswith(suffix):
            base = message_type[: -len(suffix)]
            break
    else:
        base = message_type
    name = snake(base)
    return "notify_" + name if kind == "notification" else name
