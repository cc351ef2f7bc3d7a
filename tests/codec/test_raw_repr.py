"""Not spec behaviour (issue 31 item 7): a struct holding raw JSON (``msgspec.Raw``: tool
arguments, structured content, schemas, a task's stored result) prints that JSON, not
``<msgspec.Raw object at 0x...>``; the rest of its repr is msgspec's own."""

from __future__ import annotations

import importlib

import msgspec
import pytest

from mcpbind import types as t
from mcpbind.tasks import TaskRecord
from mcpbind_types._common import raw_repr

MODULES = [
    "mcpbind_types.unified.types",
    "mcpbind_types.v2024_11_05.types",
    "mcpbind_types.v2025_03_26.types",
    "mcpbind_types.v2025_06_18.types",
    "mcpbind_types.v2025_11_25.types",
    "mcpbind_types.v2026_07_28.types",
]


def test_decoded_raw_fields_print_their_json() -> None:
    result = msgspec.json.decode(
        b'{"content":[],"structuredContent":{"temp":21}}', type=t.CallToolResult
    )
    assert repr(result) == "CallToolResult(content=[], structured_content=Raw('{\"temp\":21}'))"
    tool = msgspec.json.decode(b'{"name":"x","inputSchema":{"type":"object"}}', type=t.Tool)
    assert repr(tool) == "Tool(input_schema=Raw('{\"type\":\"object\"}'), name='x')"
    params = msgspec.json.decode(
        b'{"name":"f","arguments":{"a":[1]}}', type=t.CallToolRequestParams
    )
    assert repr(params) == "CallToolRequestParams(name='f', arguments=Raw('{\"a\":[1]}'))"
    assert "msgspec.Raw object" not in repr(
        t.CallToolResultResponse(jsonrpc="2.0", id=1, result=result)
    )


def test_without_raw_values_the_repr_is_msgspecs() -> None:
    built = t.CallToolResult(content=[t.TextContent(text="hi")], structured_content={"a": 1})
    assert repr(built) == msgspec.Struct.__repr__(built)
    assert repr(t.CallToolResult(content=[], is_error=True)) == (
        "CallToolResult(content=[], is_error=True)"
    )


@pytest.mark.parametrize("module", MODULES)
def test_every_generated_struct_with_a_raw_field_has_the_readable_repr(module: str) -> None:
    types = importlib.import_module(module)
    holding = [
        cls
        for cls in vars(types).values()
        if isinstance(cls, type)
        and issubclass(cls, msgspec.Struct)
        and any("Raw" in repr(f.type) for f in msgspec.structs.fields(cls))
    ]
    assert holding  # tool schemas at least, in every version
    assert [c.__name__ for c in holding if c.__repr__ is not raw_repr] == []


def test_a_task_record_prints_its_stored_json() -> None:
    record = TaskRecord(
        task_id="t1",
        scope="",
        method="tools/call",
        era="2025-11-25",
        result=msgspec.Raw(b'{"content":[]}'),
        input_requests={"k": msgspec.Raw(b'{"method":"ping"}')},
    )
    text = repr(record)
    assert "result=Raw('{\"content\":[]}')" in text
    assert "input_requests={'k': Raw('{\"method\":\"ping\"}')}" in text
    assert "msgspec.Raw object" not in text
