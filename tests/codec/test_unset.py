"""``mcpbind.types``: the generated unified types plus ``UNSET``/``UnsetType``, the marker of an
absent optional field (distinct from ``None``, a JSON ``null``), as the README tells users."""

from __future__ import annotations

import msgspec

import mcpbind
from mcpbind import types as t
from mcpbind.types import UNSET, Tool, UnsetType
from mcpbind_types import unified


def test_unset_is_msgspecs_marker_and_types_are_the_unified_ones() -> None:
    assert UNSET is msgspec.UNSET and UnsetType is msgspec.UnsetType
    assert mcpbind.types is t and t.Tool is Tool is unified.Tool
    assert {"UNSET", "UnsetType", "Tool", "CallToolResult"} <= set(t.__all__)
    assert set(unified.__all__) <= set(t.__all__)


def test_absent_optional_fields_are_unset_and_left_out_on_the_wire() -> None:
    tool = Tool(name="echo", input_schema={"type": "object"})
    assert tool.title is UNSET and isinstance(tool.description, UnsetType)
    assert msgspec.json.decode(msgspec.json.encode(tool)) == {
        "name": "echo",
        "inputSchema": {"type": "object"},
    }
    tool.title = "Echo"
    tool.title = UNSET  # leaving a field out again
    assert "title" not in msgspec.json.decode(msgspec.json.encode(tool))
