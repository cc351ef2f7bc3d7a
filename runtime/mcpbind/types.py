"""The MCP types: every definition of every protocol version (the generated unified superset,
``mcpbind_types.unified``), plus ``UNSET``/``UnsetType`` for optional fields.

An optional field that is absent on the wire is ``UNSET`` (``msgspec.UNSET``), distinct from
``None`` (an explicit JSON ``null``): test it with ``isinstance(x, UnsetType)`` or
``x is UNSET``, and leave a field out of a message by leaving it ``UNSET``.
"""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from mcpbind_types import unified
from mcpbind_types.unified import *  # noqa: F403

__all__ = ["UNSET", "UnsetType"]
__all__ += unified.__all__
