"""2026-07-28 basic/transports/streamable-http.mdx §Schema Extension and §Value Encoding, on
the pure functions the HTTP client uses."""

from __future__ import annotations

from typing import Any

import pytest

from mcpbind.protocol.mcp_headers import (
    InvalidToolHeaders,
    encode_value,
    header_paths,
    param_headers,
)


def _schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("us west 1", "us west 1"),
    ],
)
def test_value_encoding_table(value: str, header: str) -> None:
    """§Value Encoding, the spec's examples table (and an internal space, which stays)."""
    assert encode_value(value) == header


def test_paths_follow_properties_chains() -> None:
    """§Schema Extension: nested properties are allowed; the path is the properties chain."""
    schema = _schema(
        a={"type": "string", "x-mcp-header": "A"},
        o={"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
    )
    assert header_paths(schema) == [(("a",), "A"), (("o", "n"), "N")]
    headers = param_headers(header_paths(schema), {"a": "x", "o": {"n": 2**53}})
    assert headers == {"mcp-param-a": "x"}  # an unsafe integer is not mirrored


@pytest.mark.parametrize(
    "schema",
    [
        _schema(v={"type": "string", "x-mcp-header": ""}),
        _schema(v={"type": "string", "x-mcp-header": "My Region"}),
        _schema(v={"type": "string", "x-mcp-header": "Région"}),
        _schema(v={"type": "string", "x-mcp-header": "A:B"}),
        _schema(v={"type": "number", "x-mcp-header": "V"}),
        _schema(v={"type": "object", "x-mcp-header": "V"}),
        _schema(
            v={"type": "string", "x-mcp-header": "V"}, w={"type": "string", "x-mcp-header": "v"}
        ),
        _schema(v={"type": "array", "items": {"type": "string", "x-mcp-header": "V"}}),
        {"type": "object", "anyOf": [_schema(v={"type": "string", "x-mcp-header": "V"})]},
        {
            "$defs": {"d": {"type": "string", "x-mcp-header": "V"}},
            **_schema(v={"$ref": "#/$defs/d"}),
        },
    ],
)
def test_invalid_annotations_are_rejected(schema: dict[str, Any]) -> None:
    """§Schema Extension: empty, non-token, non-primitive, duplicate (case-insensitively) or
    not statically reachable annotations make the tool definition invalid."""
    with pytest.raises(InvalidToolHeaders):
        header_paths(schema)
