"""Host names for tools and prompts: ``<server>__<name>``, valid and collision-free.

The model sees one flat list of tools from many servers, so each needs a name that is unique
across servers and valid under 2025-11-25 server/tools.mdx §Tool Names: 1 to 128 characters
from ``A-Z a-z 0-9 _ - .``. Host names keep to a stricter subset, ``[A-Za-z0-9_-]{1,64}``,
because they are what :meth:`Host.tools_for_llm` hands to LLM APIs, and those refuse more than
the spec does (OpenAI function names: ``^[a-zA-Z0-9_-]+$``, at most 64; Anthropic tool names:
``^[a-zA-Z0-9_-]{1,64}$``): a dot, valid in MCP, would fail the whole request there.

1. The server part is the server's name when it matches ``[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*``
   (no ``__``, no leading or trailing ``_``); otherwise its disallowed runs become ``-`` and a
   6-hex-digit hash of the original name is appended (``my server`` -> ``my-server-1a2b3c``).
2. The tool part is the tool's own name when it uses only ``A-Z a-z 0-9 _ -``; otherwise the
   same slug-plus-hash treatment (``admin.tools.list`` -> ``admin-tools-list-<hash>``).
3. Host name = server part + ``__`` + tool part. Because the server part never contains ``__``
   nor ends in ``_``, the first ``__`` always marks the split: distinct (server, tool) pairs
   give distinct names.
4. Over 64 characters: cut to 55 and append ``-`` + 8 hex digits of a hash of the pair.
5. Should two pairs still meet (a hash collision, in practice never), pairs are taken in
   sorted order and the later ones get ``-2``, ``-3``, ... (deterministic for a given set).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = [
    "MAX_NAME_LENGTH",
    "SEPARATOR",
    "assign_names",
    "host_name",
    "is_portable_name",
    "is_valid_tool_name",
]

#: The LLM APIs' limit (the spec allows 128).
MAX_NAME_LENGTH = 64
SEPARATOR = "__"
_SPEC_VALID = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_PORTABLE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_SAFE_SERVER = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")
_SAFE_ITEM = re.compile(r"[A-Za-z0-9_-]+")
_DISALLOWED = re.compile(r"[^A-Za-z0-9-]+")


def is_valid_tool_name(name: str) -> bool:
    """True when ``name`` follows the spec's tool-name rules (characters and length)."""
    return _SPEC_VALID.fullmatch(name) is not None


def is_portable_name(name: str) -> bool:
    """True when ``name`` is also accepted as a tool name by the common LLM APIs."""
    return _PORTABLE.fullmatch(name) is not None


def _digest(text: str, size: int) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:size]


def _slug(text: str) -> str:
    return _DISALLOWED.sub("-", text).strip("-") or "x"


def _server_part(server: str) -> str:
    if _SAFE_SERVER.fullmatch(server):
        return server
    return f"{_slug(server)}-{_digest(server, 6)}"


def _item_part(name: str) -> str:
    if _SAFE_ITEM.fullmatch(name):
        return name
    return f"{_slug(name)}-{_digest(name, 6)}"


def host_name(server: str, name: str) -> str:
    """The host name of tool (or prompt) ``name`` of ``server``, before collision handling."""
    full = f"{_server_part(server)}{SEPARATOR}{_item_part(name)}"
    if len(full) > MAX_NAME_LENGTH:
        full = f"{full[: MAX_NAME_LENGTH - 9]}-{_digest(server + chr(0) + name, 8)}"
    return full


def assign_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Host names for every (server, name) pair; unique, deterministic for a given set."""
    taken: set[str] = set()
    names: dict[tuple[str, str], str] = {}
    for pair in sorted(set(pairs)):
        base = host_name(*pair)
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            suffix = f"-{n}"
            candidate = base[: MAX_NAME_LENGTH - len(suffix)] + suffix
        taken.add(candidate)
        names[pair] = candidate
    return names
