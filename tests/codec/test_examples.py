"""Every official 2026-07-28 example decodes into the type its folder names and re-encodes equal.

Spec: 2026-07-28 schema examples (schema/2026-07-28/examples/<Type>/*.json upstream).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpbind_types._common import decoder, encode
from mcpbind_types.v2026_07_28 import types as T

EXAMPLES = Path(__file__).resolve().parents[2] / "schema" / "2026-07-28" / "examples"
FILES = sorted(EXAMPLES.rglob("*.json"))

#: Examples that contradict their own schema: file -> (keys the schema does not declare, reason).
CONTRADICTIONS: dict[str, tuple[set[str], str]] = {
    "ListRootsRequest/list-roots-request.json": (
        {"id"},
        "ListRootsRequest is an InputRequest in 2026-07-28 (embedded in an InputRequiredResult, "
        "not a JSON-RPC request) and declares no `id`; the example still carries one",
    ),
}


def test_all_129_examples_are_present() -> None:
    assert len(FILES) == 129
    assert len({f.parent.name for f in FILES}) == 88


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_round_trips(path: Path) -> None:
    tp = getattr(T, path.parent.name)
    raw = path.read_bytes()
    obj = decoder(tp).decode(raw)
    back: Any = json.loads(encode(obj))
    expected: Any = json.loads(raw)
    key = f"{path.parent.name}/{path.name}"
    if key in CONTRADICTIONS:
        dropped, reason = CONTRADICTIONS[key]
        assert reason
        assert set(expected) - set(back) == dropped
        expected = {k: v for k, v in expected.items() if k not in dropped}
    assert back == expected


def test_contradictions_are_real() -> None:
    """Each listed contradiction names keys that the official schema does not declare."""
    schema = json.loads((EXAMPLES.parent / "schema.json").read_text())["$defs"]
    for key, (dropped, _) in CONTRADICTIONS.items():
        type_name = key.split("/")[0]
        declared = set(schema[type_name].get("properties", {}))
        assert dropped.isdisjoint(declared), key
