"""The generator on a schema it has never seen: results from what the schema says, overrides by
what they match over open version ranges, and a clear stop on constructs it cannot handle."""

from __future__ import annotations

import copy
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpbind_codegen.cli import main
from mcpbind_codegen.constructs import UnsupportedSchema
from mcpbind_codegen.model import StructDef
from mcpbind_codegen.overrides import (
    OVERRIDES,
    PINNED,
    Override,
    OverrideError,
    OverrideTracker,
    only,
    since,
)
from mcpbind_codegen.pipeline import build_model, generate_version, read_manifest
from mcpbind_types import _common

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "schema" / "manifest.json"
SHA = "0" * 64


def _schema(version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "schema" / version / "schema.json").read_text())
    return data


def _methods(schema: dict[str, Any], version: str) -> dict[str, str | None]:
    model = build_model(schema, version, "x", SHA)
    return {f"{m.direction}:{m.method}": m.result_type for m in model.methods}


# ------------------------------------------------------------------ results
@pytest.mark.parametrize("version", PINNED)
def test_empty_results_come_from_the_result_unions(version: str) -> None:
    """ping, logging/setLevel, resources/(un)subscribe name no `<Name>Result`: the base `Result`
    in the union of results of their direction says they return the empty result."""
    results = _methods(_schema(version), version)
    for key in (
        "client_to_server:ping",
        "server_to_client:ping",
        "client_to_server:logging/setLevel",
        "client_to_server:resources/subscribe",
    ):
        if key in results:
            assert results[key] == "EmptyResult", key


def test_a_result_response_names_the_result() -> None:
    """`<Name>ResultResponse.result` says the result where no `<Name>Result` exists."""
    schema = copy.deepcopy(_schema("2025-11-25"))
    defs = schema["$defs"]
    defs["ServerResult"]["anyOf"] = [
        m for m in defs["ServerResult"]["anyOf"] if m["$ref"] != "#/$defs/Result"
    ]
    defs["ServerResult"]["anyOf"].append({"$ref": "#/$defs/ElicitResult"})  # still a union
    with pytest.raises(
        ValueError,
        match=r"no result type for (Ping|SetLevel|Subscribe|Unsubscribe)Request: .* no empty Result",
    ):
        build_model(schema, "2025-11-25", "x", SHA)
    defs["SetLevelResultResponse"] = {
        "type": "object",
        "properties": {
            "id": {"$ref": "#/$defs/RequestId"},
            "jsonrpc": {"const": "2.0", "type": "string"},
            "result": {"$ref": "#/$defs/Result"},
        },
        "required": ["id", "jsonrpc", "result"],
    }
    for name in ("Ping", "Subscribe", "Unsubscribe"):
        defs[f"{name}ResultResponse"] = copy.deepcopy(defs["SetLevelResultResponse"])
    results = _methods(schema, "2025-11-25")
    assert results["client_to_server:logging/setLevel"] == "Result"
    assert results["client_to_server:ping"] == "Result"
    assert results["server_to_client:ping"] == "Result"  # the response is the same both ways
    assert results["server_to_client:roots/list"] == "ListRootsResult"


def test_a_result_override_wins_only_where_it_differs_from_the_schema() -> None:
    schema = _schema("2025-11-25")
    differs = Override("result", since(PINNED[0]), "PingRequest", "test", "x", "ElicitResult")
    tracker = OverrideTracker("2025-11-25", [*OVERRIDES, differs])
    model = build_model(schema, "2025-11-25", "x", SHA, tracker)
    assert {m.result_type for m in model.methods if m.method == "ping"} == {"ElicitResult"}
    same = Override("result", since(PINNED[0]), "PingRequest", "test", "x", "EmptyResult")
    with pytest.raises(OverrideError, match=r"PingRequest -> EmptyResult .*says so already"):
        build_model(schema, "2025-11-25", "x", SHA, OverrideTracker("2025-11-25", [same]))


def test_a_required_property_with_a_schema_default_is_absent_means_default() -> None:
    schema = copy.deepcopy(_schema("2025-11-25"))
    tool = schema["$defs"]["Tool"]
    tool["properties"]["kind"] = {"type": "string", "default": "plain"}
    tool["required"].append("kind")
    model = build_model(schema, "2025-11-25", "x", SHA)
    tool_def = model.definitions["Tool"]
    assert isinstance(tool_def, StructDef)
    kind = next(f for f in tool_def.fields if f.wire == "kind")
    assert (kind.required, kind.default) == (False, "plain")


# ------------------------------------------------------------------ version ranges
def test_pinned_matches_the_manifest() -> None:
    assert tuple(p.version for p in read_manifest(MANIFEST)[1]) == PINNED


def test_ranges_are_open_to_later_versions_and_unknown_labels() -> None:
    assert not since("2025-06-18").covers("2025-03-26")
    assert since("2025-06-18").covers("2026-07-28")
    assert since("2025-06-18").covers("draft-2026-03-31")
    assert only("2024-11-05").covers("2024-11-05")
    assert not only("2024-11-05").covers("draft-2026-03-31")
    assert str(since("2025-06-18")) == "2025-06-18 and later"
    with pytest.raises(ValueError, match="not a pinned version"):
        since("2027-01-01")


def _types(files: dict[Path, str]) -> str:
    text = next(t for p, t in files.items() if p.name == "types.py")
    return text.split('"""', 1)[1].split("\n", 1)[1]  # without header and module docstring


@pytest.mark.parametrize(
    "version",
    [v for v in PINNED if all(o.versions.last is None for o in OVERRIDES if o.versions.covers(v))],
)
def test_an_unknown_label_gets_every_fix(version: str, tmp_path: Path) -> None:
    """Under a label no table entry names, a pinned schema whose fixes are all open-ended
    generates exactly the same types: `Tool.inputSchema` keeps `additionalProperties`, vendor
    `_meta` keys survive, numbers stay numbers."""
    path = ROOT / "schema" / version / "schema.json"
    pinned = _types(generate_version(path, version, tmp_path / "a"))
    tracker = OverrideTracker("draft-2099-01-01")
    draft = _types(generate_version(path, "draft-2099-01-01", tmp_path / "b", tracker=tracker))
    assert draft == pinned
    assert tracker.applied and not tracker.strict
    assert "input_schema: JSONObjectRaw" in draft


def test_an_override_that_no_longer_matches_is_skipped_under_an_unknown_label() -> None:
    schema = copy.deepcopy(_schema("2025-11-25"))
    node = schema["$defs"]["ElicitResult"]["properties"]["content"]["additionalProperties"]
    node["anyOf"][1]["type"] = ["string", "number", "boolean"]
    with pytest.raises(OverrideError, match="ElicitResult"):
        build_model(schema, "2025-11-25", "x", SHA)
    tracker = OverrideTracker("draft-2099-01-01")
    build_model(schema, "draft-2099-01-01", "x", SHA, tracker)
    assert any(o.target.startswith("ElicitResult/") for o in tracker.skipped)
    assert not any(o.target.startswith("ElicitResult/") for o in tracker.applied)


@pytest.mark.parametrize("version", PINNED)
def test_an_override_matching_nothing_in_a_pinned_version_fails(version: str) -> None:
    dead = Override("open", since(PINNED[0]), "NoSuchDefinition.x", "test", "x")
    with pytest.raises(OverrideError, match=r"NoSuchDefinition\.x"):
        build_model(_schema(version), version, "x", SHA, OverrideTracker(version, [dead]))


@pytest.mark.parametrize("version", PINNED)
def test_every_override_in_range_of_a_pinned_version_matches_it(version: str) -> None:
    tracker = OverrideTracker(version)
    build_model(_schema(version), version, "x", SHA, tracker)
    assert tracker.skipped == [] and tracker.applied


# ------------------------------------------------------------------ unsupported constructs
_CONSTRUCTS: list[tuple[str, dict[str, Any], str]] = [
    ("patternProperties", {"type": "object", "patternProperties": {"^x": {}}}, "patternProperties"),
    ("not", {"not": {"type": "string"}}, "`not`"),
    ("if", {"if": {"type": "string"}, "then": {"type": "string"}}, "`if`"),
    ("external $ref", {"$ref": "other.json#/X"}, "`$ref` 'other.json#/X'"),
    ("dangling $ref", {"$ref": "#/$defs/Nope"}, "undefined definition"),
    ("tuple items", {"type": "array", "items": [{"type": "string"}]}, "`items` as a list"),
    ("unknown type", {"type": "decimal"}, "`type` 'decimal'"),
    ("float const", {"const": 1.5}, "`const` value 1.5"),
    (
        "anyOf beside properties",
        {"type": "object", "properties": {"a": {}}, "anyOf": [{"required": ["a"]}]},
        "`anyOf` beside `properties`",
    ),
]


@pytest.mark.parametrize(
    ("construct", "node", "named"), _CONSTRUCTS, ids=[c[0] for c in _CONSTRUCTS]
)
def test_an_unsupported_construct_names_the_definition_and_the_construct(
    construct: str, node: dict[str, Any], named: str, tmp_path: Path
) -> None:
    schema = copy.deepcopy(_schema("2025-11-25"))
    schema["$defs"]["Tool"]["properties"]["extra"] = node
    with pytest.raises(UnsupportedSchema, match="`Tool`") as info:
        build_model(schema, "2025-11-25", "x", SHA)
    assert named in str(info.value) and "Tool/properties/extra" in str(info.value)
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["generate", str(path), "--version", "draft-x", "--out", str(out)]
    )
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {info.value}"]
    assert not out.exists()


@pytest.mark.parametrize("version", PINNED)
def test_the_pinned_schemas_use_only_supported_constructs(version: str) -> None:
    build_model(_schema(version), version, "x", SHA)  # raises UnsupportedSchema otherwise


# ------------------------------------------------------------------ output
def test_generate_writes_an_importable_package(tmp_path: Path) -> None:
    out = tmp_path / "bindings"
    path = ROOT / "schema" / "2025-11-25" / "schema.json"
    runner = CliRunner()
    for label in ("draft-2099-01-01", "draft-2099-02-01"):
        result = runner.invoke(main, ["generate", str(path), "--version", label, "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert "is not a pinned version" in result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "__init__.py",
        "vdraft_2099_01_01",
        "vdraft_2099_02_01",
    ]
    init = (out / "__init__.py").read_text()
    assert 'VERSIONS: tuple[str, ...] = ("draft-2099-01-01", "draft-2099-02-01",)' in init
    # No copy of the helpers: the package plugs into the runtime's own RequestSender/MethodInfo.
    sys.path.insert(0, str(tmp_path))
    try:
        stubs = importlib.import_module("bindings.vdraft_2099_01_01.stubs")
        methods = importlib.import_module("bindings.vdraft_2099_01_01.methods")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == "bindings" or n.startswith("bindings.")]:
            del sys.modules[name]
    assert issubclass(stubs.ClientMethods, _common.RequestSender)
    assert all(isinstance(m, _common.MethodInfo) for m in methods.METHODS)
    bad = runner.invoke(
        main, ["generate", str(path), "--version", "x", "--out", str(tmp_path / "not-a-name")]
    )
    assert bad.exit_code == 2 and "not a Python package name" in bad.output
