"""Round-trip properties for every definition of every pinned MCP schema version.

For each ``(version, definition)``: draw an instance valid under the official schema (see
``strategies.py``), decode its JSON with ``decoder(types.<Definition>)``, re-encode it with
``encode``, and check that

(a) the re-encoded JSON equals the input as a JSON value, except for the documented override
    effects, which are computed into the expected value (``tolerate``: an absent ``resultType``
    comes back as ``"complete"``), and
(b) the re-encoded JSON validates against the official schema for that definition (against the
    schema with the ``tolerate`` relaxations when the input itself relied on them).

Spec: basic/index.mdx (messages and the JSON schema as the source of truth), and the pages named
by each entry of codegen/mcpbind_codegen/overrides.py.
"""

from __future__ import annotations

import importlib
import json
import os
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from mcpbind_types._common import decoder, encode

from .strategies import (
    SEMANTIC_HINTS,
    VERSIONS,
    definitions,
    expected,
    strategies_for,
    tolerated,
    validator,
)

#: Examples drawn per definition: ~550 definitions must run in well under a minute. Raise it for
#: a deeper (still deterministic) search: ``MCPBIND_PROPERTY_EXAMPLES=500 pytest tests/codec``.
EXAMPLES = int(os.environ.get("MCPBIND_PROPERTY_EXAMPLES", "15"))

#: Definitions the property cannot cover, each with a named reason. Must stay empty.
UNCOVERED: dict[tuple[str, str], str] = {}

CASES = [
    (version, name)
    for version in VERSIONS
    for name in sorted(definitions(version))
    if (version, name) not in UNCOVERED
]


def types_module(version: str) -> ModuleType:
    return importlib.import_module(f"mcpbind_types.v{version.replace('-', '_')}.types")


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: ``1 == 1.0`` but ``true != 1`` and key order is irrelevant."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _errors(version: str, name: str, value: Any, *, relaxed: bool) -> list[str]:
    v = validator(version, name, relaxed=relaxed)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(value)]


@pytest.mark.parametrize(("version", "name"), CASES, ids=[f"{v}:{n}" for v, n in CASES])
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@seed(20260728)
@given(data=st.data())
def test_round_trip(version: str, name: str, data: st.DataObject) -> None:
    """Decode -> encode is the identity on valid JSON, up to the documented overrides."""
    wire = data.draw(strategies_for(version).definition(name), label="wire")
    # Sanity: the generator only produces what a receiver must accept (the official schema, or
    # the official schema minus the fields a receiver tolerates absent).
    official = validator(version, name).is_valid(wire)
    if not official:
        relaxed = validator(version, name, relaxed=True)
        assert relaxed.is_valid(wire), _errors(version, name, wire, relaxed=True)

    tp = getattr(types_module(version), name)
    value = decoder(tp).decode(json.dumps(wire))
    out = json.loads(encode(value))

    want = expected(wire)
    assert json_equal(out, want), f"re-encoded {out!r}\n  expected {want!r}"
    # What an input relied on (a tolerated absent field) may survive; nothing else may break.
    assert validator(version, name, relaxed=not official).is_valid(out), _errors(
        version, name, out, relaxed=not official
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_every_definition_is_covered(version: str, record_property: Any) -> None:
    """Every definition of the schema is a type of the version's module and has a round trip.

    Spec: basic/index.mdx (the schema is the source of truth for every message shape).
    """
    assert UNCOVERED == {}, "definitions without a round-trip property"
    names = set(definitions(version))
    covered = {n for v, n in CASES if v == version}
    module = types_module(version)
    assert covered == names
    assert [n for n in sorted(names) if not hasattr(module, n)] == []
    record_property("definitions_covered", len(covered))
    print(f"{version}: {len(covered)}/{len(names)} definitions covered")


def _draws(strategy: st.SearchStrategy[Any], n: int = 25) -> list[Any]:
    out: list[Any] = []

    @settings(max_examples=n, database=None, deadline=None)
    @seed(0)
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out


@pytest.mark.parametrize(
    ("definition", "field"),
    [
        (d, f)
        for d, fields in tolerated("2026-07-28").items()
        for f in fields
        # A hint may withdraw the leniency: InputRequiredResult always says "input_required".
        if not getattr(SEMANTIC_HINTS.get(("2026-07-28", d, f)), "required", False)
    ],
)
def test_tolerated_fields_are_drawn_absent_and_present(definition: str, field: str) -> None:
    """Both sides of each ``tolerate`` override are exercised, with the default expected back.

    Spec: 2026-07-28 basic/index.mdx#result-type (absent ``resultType`` means "complete") and
    server/utilities/caching.mdx (absent ``ttlMs``/``cacheScope``: not cacheable).
    """
    version = "2026-07-28"
    default = tolerated(version)[definition][field]
    wires = _draws(strategies_for(version).definition(definition))
    assert {field in w for w in wires} == {True, False}
    for w in wires:
        if field not in w:
            got = expected(w).get(field)
            assert got == default, f"{definition}.{field}: absent should come back as {default!r}"


def test_semantic_hints_narrow_the_schema() -> None:
    """Each hint narrows a property the official schema types more loosely (never contradicts it).

    Spec: 2026-07-28 basic/patterns/mrtr.mdx (``resultType`` selects the result shape).
    """
    for (version, definition, prop), hint in SEMANTIC_HINTS.items():
        node = definitions(version)[definition]["properties"][prop]
        assert node.get("type") == hint.schema["type"]
        instance = {prop: hint.schema["const"]}
        errors = [
            e
            for e in validator(version, definition).iter_errors(instance)
            if list(e.absolute_path)[:1] == [prop]  # other (required) fields are not the point
        ]
        assert errors == [], (definition, prop)


@pytest.mark.parametrize(
    ("version", "definition", "where"),
    [
        ("2025-11-25", "CancelTaskRequest", ("params", "_meta")),  # inherit, inline params
        ("2026-07-28", "CreateMessageRequestParams", ("_meta",)),  # inherit, a definition
        ("2025-11-25", "CallToolRequestParams", ("_meta",)),  # open: *._meta
        ("2024-11-05", "Tool", ("inputSchema",)),  # open: Tool.inputSchema
        ("2026-07-28", "Tool", ("outputSchema",)),  # additionalProperties: {}
        ("2026-07-28", "Result", ()),  # additionalProperties: {}
    ],
)
def test_open_maps_are_drawn_with_undeclared_keys(
    version: str, definition: str, where: tuple[str, ...]
) -> None:
    """Open maps get keys the schema does not declare, so the round trip checks they survive.

    Spec: basic/index.mdx#_meta (vendor keys) and server/tools.mdx#tool (schemas kept whole).
    """
    gen = strategies_for(version)
    node = gen._resolve(definitions(version)[definition])
    for step in where:  # an inherited `_meta` is not in the schema: nothing declared
        node = gen._resolve(node.get("properties", {}).get(step, {}))
    declared = set(node.get("properties", {}))
    seen_extra = False
    for wire in _draws(strategies_for(version).definition(definition), 40):
        for step in where:
            wire = wire.get(step, {})
        seen_extra |= bool(set(wire) - declared)
    assert seen_extra
