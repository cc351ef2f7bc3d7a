"""``x-mcp-header``: tool parameters mirrored into ``Mcp-Param-{Name}`` HTTP headers.

2026-07-28 basic/transports/streamable-http.mdx §Custom Headers from Tool Parameters: a
tool's ``inputSchema`` may mark primitive properties, reachable from the root through
``properties`` keys only, with ``x-mcp-header``; an HTTP client mirrors their values into
headers and rejects (leaves out of ``tools/list``) a tool whose annotations break the rules.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "HeaderPath",
    "InvalidToolHeaders",
    "encode_header_value",
    "header_paths",
    "param_headers",
]

HeaderPath = tuple[tuple[str, ...], str]
"""The property path from the arguments root, and the header's name part."""

_TCHAR: Final = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_PRIMITIVES: Final = frozenset({"string", "integer", "boolean"})
_SAFE_INT: Final = 2**53 - 1
_KEY: Final = "x-mcp-header"


class InvalidToolHeaders(ValueError):
    """A tool whose ``x-mcp-header`` annotations break §Schema Extension (the reason)."""


def header_paths(schema: Any) -> list[HeaderPath]:
    """Every ``x-mcp-header`` of ``schema`` with its property path; raise
    ``InvalidToolHeaders`` when one is malformed, misplaced or duplicated."""
    found: list[HeaderPath] = []
    _walk(schema, (), True, found)
    seen: set[str] = set()
    for _, name in found:
        if name.lower() in seen:
            raise InvalidToolHeaders(f"x-mcp-header {name!r} is not unique (case-insensitive)")
        seen.add(name.lower())
    return found


def _walk(node: Any, path: tuple[str, ...], reachable: bool, out: list[HeaderPath]) -> None:
    """Visit every subschema; only ``properties`` chains from the root are ``reachable``."""
    if isinstance(node, list):
        for item in node:
            _walk(item, path, False, out)
        return
    if not isinstance(node, Mapping):
        return
    if _KEY in node:
        if not reachable or not path:
            where = "/".join(path) or "the schema root"
            raise InvalidToolHeaders(f"x-mcp-header at {where} is not reachable by properties")
        out.append((path, _check_annotation(node, path)))
    for key, value in node.items():
        if key == "properties" and isinstance(value, Mapping):
            for prop, sub in value.items():
                _walk(sub, (*path, str(prop)), reachable, out)
        elif key not in (_KEY, "const", "enum", "default", "examples"):
            _walk(value, path, False, out)


def _check_annotation(node: Mapping[str, Any], path: tuple[str, ...]) -> str:
    name = node[_KEY]
    where = ".".join(path)
    if not isinstance(name, str) or not name:
        raise InvalidToolHeaders(f"x-mcp-header of {where} must be a non-empty string")
    if not all(c in _TCHAR for c in name):
        raise InvalidToolHeaders(f"x-mcp-header {name!r} of {where} is not an HTTP token")
    kind = node.get("type")
    if not isinstance(kind, str) or kind not in _PRIMITIVES:
        raise InvalidToolHeaders(
            f"x-mcp-header {name!r} is on {where} of type {kind!r}; only string, integer "
            "and boolean parameters may be mirrored"
        )
    return name


def param_headers(paths: list[HeaderPath], arguments: Any) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers for one call; absent (or null) values are omitted."""
    headers: dict[str, str] = {}
    for path, name in paths:
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        text = _as_text(value)
        if text is not None:
            headers[f"mcp-param-{name.lower()}"] = encode_header_value(text)
    return headers


def _as_text(value: Any) -> str | None:
    """§Value Encoding, type conversion: strings as is, integers in decimal, booleans in
    lowercase; anything else (null, objects, fractions, unsafe integers) is not mirrored."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return str(value) if -_SAFE_INT <= value <= _SAFE_INT else None
    if isinstance(value, str):
        return value
    return None


def encode_header_value(value: str) -> str:
    """The value as is when it is plain printable ASCII without surrounding spaces, else
    ``=?base64?...?=`` of its UTF-8 (also for values that look like that sentinel)."""
    plain = (
        value == value.strip(" \t")
        and all(0x20 <= ord(c) <= 0x7E for c in value)
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )
    if plain:
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode("ascii") + "?="
