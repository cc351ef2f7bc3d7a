"""Tests for mcpbind.server.signature: tool schemas from Python signatures, argument binding.

Spec: MCP 2025-11-25, ``server/tools.mdx`` §Tool (``inputSchema``, ``outputSchema``,
§Tool Names), §Structured Content and §Output Schema; ``basic/index.mdx`` §JSON Schema
Usage (2020-12 is the default dialect; schemas MUST be valid). The MCP schema restricts
``inputSchema``/``outputSchema`` to ``"type": "object"`` at the root.
"""

import dataclasses
import datetime
import enum
import functools
import inspect
import json
import math
import pathlib
import types
import uuid
from typing import Annotated, Any, Generic, Literal, NamedTuple, Optional, TypedDict, TypeVar

import jsonschema  # type: ignore[import-untyped]
import msgspec
import pytest
from msgspec import UNSET, Meta, UnsetType

from mcpbind.server.signature import (
    ToolArgumentsError,
    ToolOutputError,
    ToolSignature,
    is_valid_tool_name,
)

T = TypeVar("T")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(msgspec.Struct):
    """A point on the plane."""

    x: int
    y: int = 0


@dataclasses.dataclass
class Address:
    street: str
    zip_code: Annotated[str, Meta(pattern=r"^\d{5}$")]
    tags: list[str] = dataclasses.field(default_factory=list)


class Options(TypedDict):
    verbose: bool
    level: int


class Node(msgspec.Struct):
    value: int
    children: "list[Node]" = []


class Page(msgspec.Struct, Generic[T]):
    items: list[T]
    next_cursor: str | None = None


class Cat(msgspec.Struct, tag=True):
    lives: int


class Dog(msgspec.Struct, tag=True):
    good: bool


class Pair(msgspec.Struct, array_like=True):
    left: int
    right: int


class Weather(msgspec.Struct):
    temperature: Annotated[float, Meta(description="Temperature in celsius")]
    conditions: str
    humidity: float


class Pet(NamedTuple):
    name: str
    age: int


class Context:
    """Stand-in for the server's request context type."""


class SubContext(Context, Generic[T]):
    pass


def make_other_point() -> type[msgspec.Struct]:
    class Point(msgspec.Struct):  # same __name__ as the module-level Point
        label: str

    return Point


OtherPoint = make_other_point()


# --------------------------------------------------------------------------------------
# helpers


def check_schema(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """The schema is valid JSON Schema 2020-12, JSON-serializable, and $refs resolve."""
    jsonschema.Draft202012Validator.check_schema(schema)
    assert json.loads(json.dumps(schema)) == schema
    assert schema["type"] == "object"
    defs = schema.get("$defs", {})
    for ref in _refs(schema):
        assert ref.startswith("#/$defs/"), ref
        assert ref.removeprefix("#/$defs/") in defs, ref
    return jsonschema.Draft202012Validator(schema)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if "$ref" in node else []
        return found + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def assert_parity(sig: ToolSignature, valid: list[Any], invalid: list[Any]) -> None:
    """jsonschema and bind() agree on every sample."""
    validator = check_schema(sig.input_schema)
    for args in valid:
        assert not list(validator.iter_errors(args)), args
        sig.bind(args)
    for args in invalid:
        assert list(validator.iter_errors(args)), args
        with pytest.raises(ToolArgumentsError):
            sig.bind(args)


def bind_error(sig: ToolSignature, args: Any) -> ToolArgumentsError:
    with pytest.raises(ToolArgumentsError) as info:
        sig.bind(args)
    return info.value


# --------------------------------------------------------------------------------------
# §Tool: inputSchema


def test_primitives_schema_and_bind() -> None:
    def tool(s: str, i: int, f: float, b: bool, n: None) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    assert sig.input_schema == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "f": {"type": "number"},
            "b": {"type": "boolean"},
            "n": {"type": "null"},
        },
        "required": ["s", "i", "f", "b", "n"],
        "additionalProperties": False,
    }
    assert sig.parameters == ("s", "i", "f", "b", "n")
    ok = {"s": "x", "i": 1, "f": 2, "b": True, "n": None}
    assert sig.bind(ok) == ok
    assert type(sig.bind(ok)["f"]) is float  # JSON number 2 -> float
    assert_parity(
        sig,
        valid=[ok, {**ok, "f": 2.5}],
        invalid=[
            {**ok, "i": "1"},  # strict: no str -> int coercion
            {**ok, "i": True},  # bool is not an integer
            {**ok, "f": "2"},
            {**ok, "b": 1},
            {**ok, "n": 0},
            {**ok, "s": None},
            {k: v for k, v in ok.items() if k != "s"},
            {**ok, "extra": 1},
        ],
    )


def test_no_parameters_uses_recommended_empty_schema() -> None:
    def now() -> str:
        return "12:00"

    sig = ToolSignature.from_function(now)
    assert sig.input_schema == {"type": "object", "additionalProperties": False}
    assert sig.bind(None) == {}
    assert sig.bind({}) == {}
    assert_parity(sig, valid=[{}], invalid=[{"x": 1}, [], "x"])


def test_allow_extra_ignores_unknown_arguments() -> None:
    def tool(a: int) -> None:
        pass

    sig = ToolSignature.from_function(tool, allow_extra=True)
    assert "additionalProperties" not in sig.input_schema
    assert sig.bind({"a": 1, "b": 2}) == {"a": 1}
    assert_parity(sig, valid=[{"a": 1, "b": 2}], invalid=[{"b": 2}])
    empty = ToolSignature.from_function(lambda: None, allow_extra=True)
    assert empty.input_schema == {"type": "object"}
    assert empty.bind({"anything": 1}) == {}


def test_unknown_argument_rejected_by_default() -> None:
    def tool(a: int = 0) -> None:
        pass

    err = bind_error(ToolSignature.from_function(tool), {"a": 1, "b": 2})
    assert err.message == "Object contains unknown field `b`"
    assert err.path == "$"


def test_arguments_may_be_any_mapping() -> None:
    def tool(a: int) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    assert sig.bind(types.MappingProxyType({"a": 1})) == {"a": 1}


def test_unannotated_parameter_accepts_any_json() -> None:
    def tool(x, y=3):  # type: ignore[no-untyped-def]
        pass

    sig = ToolSignature.from_function(tool)
    assert sig.input_schema["properties"] == {"x": {}, "y": {"default": 3}}
    assert sig.input_schema["required"] == ["x"]
    assert sig.bind({"x": {"a": [1, None]}}) == {"x": {"a": [1, None]}, "y": 3}
    assert_parity(sig, valid=[{"x": 1}, {"x": None, "y": "z"}], invalid=[{}])


# --------------------------------------------------------------------------------------
# defaults


def test_defaults_are_optional_and_documented() -> None:
    def tool(
        a: int,
        b: str = "hi",
        c: float | None = None,
        d: Color = Color.BLUE,
        e: tuple[int, ...] = (1, 2),
        f: datetime.date = datetime.date(2025, 11, 25),
    ) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    props = sig.input_schema["properties"]
    assert sig.input_schema["required"] == ["a"]
    assert props["b"]["default"] == "hi"
    assert props["c"]["default"] is None
    assert props["d"]["default"] == "blue"
    assert props["e"]["default"] == [1, 2]
    assert props["f"]["default"] == "2025-11-25"
    assert sig.bind({"a": 1}) == {
        "a": 1,
        "b": "hi",
        "c": None,
        "d": Color.BLUE,
        "e": (1, 2),
        "f": datetime.date(2025, 11, 25),
    }
    assert_parity(
        sig,
        valid=[{"a": 1}, {"a": 1, "c": 1.5, "d": "red", "e": [], "f": "2020-01-02"}],
        invalid=[{"a": 1, "d": "green"}, {"a": 1, "e": ["x"]}, {"a": 1, "c": "x"}],
    )


def test_absent_argument_gets_the_functions_own_default_object() -> None:
    shared: list[int] = [1, 2]
    sentinel = object()

    def tool(items: list[int] = shared, marker: Any = sentinel, empty: dict[str, int] = {}) -> None:  # noqa: B006
        pass

    sig = ToolSignature.from_function(tool)
    bound = sig.bind({})
    assert bound["items"] is shared  # same object, exactly as a Python call would
    assert bound["marker"] is sentinel
    assert bound["empty"] == {}
    props = sig.input_schema["properties"]
    assert props["items"]["default"] == [1, 2]
    assert "default" not in props["marker"]  # not JSON-serializable: omitted
    assert sig.bind({"items": [3]})["items"] == [3]


def test_non_json_defaults_are_omitted_from_schema() -> None:
    def tool(a: float = math.nan, b: int | UnsetType = UNSET) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    props = sig.input_schema["properties"]
    assert props == {"a": {"type": "number"}, "b": {"type": "integer"}}
    assert "required" not in sig.input_schema
    bound = sig.bind({})
    assert math.isnan(bound["a"])
    assert bound["b"] is UNSET  # lets a handler tell "absent" from any value
    assert sig.bind({"b": 2})["b"] == 2
    check_schema(sig.input_schema)


# --------------------------------------------------------------------------------------
# Annotated descriptions and constraints


def test_annotated_string_is_a_description() -> None:
    def get_weather(location: Annotated[str, "City name or zip code"]) -> None:
        pass

    sig = ToolSignature.from_function(get_weather)
    # Exactly the spec's get_weather example inputSchema (plus additionalProperties).
    assert sig.input_schema == {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name or zip code"}},
        "required": ["location"],
        "additionalProperties": False,
    }


def test_annotated_meta_description_and_constraints() -> None:
    def tool(
        count: Annotated[int, Meta(ge=1, le=10, description="How many")],
        name: Annotated[str, Meta(min_length=1, max_length=5, pattern="^[a-z]+$")] = "abc",
        both: Annotated[int, "from string", Meta(description="from Meta")] = 0,
        nested: Annotated[Optional[Point], "A point"] = None,  # noqa: UP045
        ratio: Annotated[float, Meta(gt=0, lt=1), "A ratio"] = 0.5,
    ) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    props = sig.input_schema["properties"]
    assert props["count"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 10,
        "description": "How many",
    }
    assert props["name"]["minLength"] == 1
    assert props["name"]["pattern"] == "^[a-z]+$"
    assert props["both"]["description"] == "from Meta"  # explicit Meta wins
    assert props["nested"]["description"] == "A point"
    assert props["ratio"]["description"] == "A ratio"
    assert props["ratio"]["exclusiveMinimum"] == 0
    assert_parity(
        sig,
        valid=[{"count": 1}, {"count": 10, "name": "ab", "nested": {"x": 1}, "ratio": 0.1}],
        invalid=[
            {"count": 0},
            {"count": 11},
            {"count": 1, "name": ""},
            {"count": 1, "name": "abcdef"},
            {"count": 1, "name": "ABC"},
            {"count": 1, "ratio": 1},
            {"count": 1, "nested": {"x": "1"}},
        ],
    )
    err = bind_error(sig, {"count": 0})
    assert err.message == "Expected `int` >= 1 - at `$.count`"
    assert err.path == "$.count"


def test_annotated_nested_in_optional_lists_and_dicts() -> None:
    """Descriptions and constraints wherever ``Annotated`` sits: inside ``X | None``,
    ``Optional``, ``list``, ``dict`` values and ``tuple`` items, with string and ``Meta``
    metadata mixed. Built with public typing APIs only, so it holds on every supported Python
    (3.13 removed ``Annotated.__class_getitem__``)."""

    def tool(
        tags: Annotated[list[Annotated[str, "A tag", Meta(min_length=1)]], "The tags"],
        limit: Optional[Annotated[int, Meta(ge=0), "Max results"]] = None,  # noqa: UP045
        scores: dict[str, Annotated[float, Meta(le=1.0), "A score"]] | None = None,
        pair: tuple[Annotated[int, "first"], Annotated[str, "second"]] | None = None,
        either: Annotated[int, "a number"] | Annotated[str, "a word"] = 0,
    ) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    props = sig.input_schema["properties"]
    assert props["tags"] == {
        "type": "array",
        "description": "The tags",
        "items": {"type": "string", "description": "A tag", "minLength": 1},
    }
    assert props["limit"] == {
        "anyOf": [
            {"type": "integer", "description": "Max results", "minimum": 0},
            {"type": "null"},
        ],
        "default": None,
    }
    scores = props["scores"]["anyOf"][0]
    assert scores["additionalProperties"] == {
        "type": "number",
        "description": "A score",
        "maximum": 1.0,
    }
    items = props["pair"]["anyOf"][0]["prefixItems"]
    assert [i["description"] for i in items] == ["first", "second"]
    assert [a["description"] for a in props["either"]["anyOf"]] == ["a number", "a word"]
    assert_parity(
        sig,
        valid=[
            {"tags": ["a"]},
            {"tags": [], "limit": 0, "scores": {"x": 0.5}, "pair": [1, "b"], "either": "w"},
        ],
        invalid=[
            {"tags": [""]},
            {"tags": ["a"], "limit": -1},
            {"tags": ["a"], "scores": {"x": 1.5}},
            {"tags": ["a"], "pair": ["1", "b"]},
            {"tags": ["a"], "either": 1.5},
        ],
    )


def test_description_on_struct_reference() -> None:
    def tool(where: Annotated[Point, "Where to go"]) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    assert sig.input_schema["properties"]["where"] == {
        "description": "Where to go",
        "$ref": "#/$defs/Point",
    }
    assert sig.input_schema["$defs"]["Point"]["description"] == "A point on the plane."
    assert_parity(sig, valid=[{"where": {"x": 1}}], invalid=[{"where": {"y": 1}}])


# --------------------------------------------------------------------------------------
# unions, literals, enums, containers


def test_unions_literals_enums() -> None:
    def tool(
        mode: Literal["fast", "slow"],
        color: Color,
        priority: Priority,
        maybe: int | None,
        either: int | str = 0,
        opt: Optional[Literal[1, 2]] = None,  # noqa: UP045
    ) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    base = {"mode": "fast", "color": "red", "priority": 2, "maybe": None}
    bound = sig.bind({**base, "either": "x", "opt": 2})
    assert bound == {
        "mode": "fast",
        "color": Color.RED,
        "priority": Priority.HIGH,
        "maybe": None,
        "either": "x",
        "opt": 2,
    }
    assert_parity(
        sig,
        valid=[base, {**base, "maybe": 3, "either": 4}],
        invalid=[
            {**base, "mode": "medium"},
            {**base, "color": "RED"},
            {**base, "priority": 3},
            {**base, "maybe": "x"},
            {**base, "either": 1.5},
            {**base, "opt": 3},
            {k: v for k, v in base.items() if k != "maybe"},  # Optional without default
        ],
    )


def test_containers() -> None:
    def tool(
        xs: list[int],
        pair: tuple[int, str],
        tags: set[str],
        frozen: frozenset[int],
        scores: dict[str, float],
        by_id: dict[int, str],
        matrix: list[list[int]],
        pets: list[Pet],
    ) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    args = {
        "xs": [1, 2],
        "pair": [1, "a"],
        "tags": ["a", "b"],
        "frozen": [3],
        "scores": {"a": 1.5},
        "by_id": {"1": "one"},  # JSON object keys are strings
        "matrix": [[1], []],
        "pets": [["rex", 3]],
    }
    bound = sig.bind(args)
    assert bound["pair"] == (1, "a")
    assert bound["tags"] == {"a", "b"}
    assert bound["frozen"] == frozenset({3})
    assert bound["by_id"] == {1: "one"}
    assert bound["pets"] == [Pet("rex", 3)]
    assert_parity(
        sig,
        valid=[args],
        invalid=[
            {**args, "xs": [1, "2"]},
            {**args, "pair": [1]},
            {**args, "pair": [1, "a", 2]},
            {**args, "tags": "ab"},
            {**args, "scores": {"a": "x"}},
            {**args, "matrix": [1]},
            {**args, "pets": [["rex"]]},
        ],
    )
    err = bind_error(sig, {**args, "by_id": {"x": "one"}})
    assert err.path == "$.by_id"
    err = bind_error(sig, {**args, "matrix": [[1], [2, "3"]]})
    assert err.message == "Expected `int`, got `str` - at `$.matrix[1][1]`"
    assert err.path == "$.matrix[1][1]"


# --------------------------------------------------------------------------------------
# Structs, dataclasses, TypedDicts, nesting, $defs


def test_structs_dataclasses_typeddicts() -> None:
    def tool(point: Point, address: Address, options: Options, points: list[Point] = []) -> None:  # noqa: B006
        pass

    sig = ToolSignature.from_function(tool)
    schema = sig.input_schema
    assert schema["properties"]["point"] == {"$ref": "#/$defs/Point"}
    assert schema["properties"]["points"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Point"},
        "default": [],
    }
    assert set(schema["$defs"]) == {"Point", "Address", "Options"}
    assert schema["$defs"]["Address"]["properties"]["zip_code"]["pattern"] == r"^\d{5}$"
    args = {
        "point": {"x": 1},
        "address": {"street": "Main", "zip_code": "12345"},
        "options": {"verbose": True, "level": 2},
    }
    bound = sig.bind({**args, "points": [{"x": 1, "y": 2}]})
    assert bound["point"] == Point(1, 0)
    assert bound["address"] == Address("Main", "12345", [])
    assert bound["options"] == {"verbose": True, "level": 2}
    assert bound["points"] == [Point(1, 2)]
    assert_parity(
        sig,
        valid=[args, {**args, "points": [{"x": 1}, {"x": 2, "y": 3}]}],
        invalid=[
            {**args, "point": {"x": "1"}},
            {**args, "point": [1, 2]},
            {**args, "address": {"street": "Main", "zip_code": "1234"}},
            {**args, "options": {"verbose": True}},
            {**args, "points": [{"y": 2}]},
        ],
    )
    err = bind_error(sig, {**args, "points": [{"x": 1}, {"x": "2"}]})
    assert err.message == "Expected `int`, got `str` - at `$.points[1].x`"
    assert err.path == "$.points[1].x"
    err = bind_error(sig, {**args, "address": {"street": "Main"}})
    assert err.message == "Object missing required field `zip_code` - at `$.address`"
    assert err.path == "$.address"


def test_recursive_and_generic_types() -> None:
    def tool(tree: Node, page: Page[int]) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    defs = sig.input_schema["$defs"]
    assert defs["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert sig.input_schema["properties"]["page"] == {"$ref": "#/$defs/Page_int_"}
    args = {"tree": {"value": 1, "children": [{"value": 2}]}, "page": {"items": [1]}}
    assert sig.bind(args)["tree"] == Node(1, [Node(2)])
    assert_parity(
        sig,
        valid=[args],
        invalid=[
            {**args, "tree": {"value": 1, "children": [{"value": "2"}]}},
            {**args, "page": {"items": ["x"]}},
        ],
    )
    err = bind_error(sig, {**args, "tree": {"value": 1, "children": [{"value": "2"}]}})
    assert err.path == "$.tree.children[0].value"


def test_component_name_collisions_get_distinct_defs() -> None:
    def tool(a: Point, b: OtherPoint) -> None:  # type: ignore[valid-type]
        pass

    sig = ToolSignature.from_function(tool)
    refs = {sig.input_schema["properties"][k]["$ref"] for k in ("a", "b")}
    assert len(refs) == 2
    assert_parity(
        sig,
        valid=[{"a": {"x": 1}, "b": {"label": "p"}}],
        invalid=[{"a": {"label": "p"}, "b": {"x": 1}}],
    )


def test_tagged_union_parameter() -> None:
    def tool(pet: Cat | Dog) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    assert sig.bind({"pet": {"type": "Dog", "good": True}}) == {"pet": Dog(True)}
    assert_parity(
        sig,
        valid=[{"pet": {"type": "Cat", "lives": 9}}],
        invalid=[{"pet": {"type": "Cow"}}, {"pet": {"type": "Cat", "lives": "9"}}],
    )


def test_other_msgspec_types() -> None:
    def tool(when: datetime.datetime, ident: uuid.UUID, blob: bytes) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    check_schema(sig.input_schema)
    bound = sig.bind(
        {
            "when": "2025-11-25T10:00:00Z",
            "ident": "12345678-1234-5678-1234-567812345678",
            "blob": "aGk=",
        }
    )
    assert bound["when"] == datetime.datetime(2025, 11, 25, 10, tzinfo=datetime.UTC)
    assert bound["ident"] == uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert bound["blob"] == b"hi"
    assert bind_error(sig, {**bound, "when": "yesterday"}).path == "$.when"


def test_date_and_time_parameters_carry_their_json_schema_format() -> None:
    """datetime, date, time and timedelta parameters (also nested) say their format, so a
    client knows to send RFC 3339 / ISO 8601 text."""

    def tool(
        when: datetime.datetime,
        day: datetime.date,
        at: datetime.time,
        span: datetime.timedelta,
        history: list[datetime.datetime] | None = None,
        start: Annotated[datetime.datetime, "Start time"] | None = None,
    ) -> datetime.datetime:
        return when

    sig = ToolSignature.from_function(tool)
    props = sig.input_schema["properties"]
    assert props["when"] == {"type": "string", "format": "date-time"}
    assert props["day"] == {"type": "string", "format": "date"}
    assert props["at"] == {"type": "string", "format": "time"}
    assert props["span"] == {"type": "string", "format": "duration"}
    assert props["history"]["anyOf"][0]["items"] == {"type": "string", "format": "date-time"}
    assert props["start"]["anyOf"][0] == {
        "type": "string",
        "format": "date-time",
        "description": "Start time",
    }
    assert sig.output_schema is not None
    assert sig.output_schema["properties"]["result"] == {"type": "string", "format": "date-time"}
    check_schema(sig.input_schema)
    bound = sig.bind(
        {
            "when": "2025-11-25T10:00:00+01:00",
            "day": "2025-11-25",
            "at": "10:30:00Z",
            "span": "PT1H",
        }
    )
    assert bound["at"] == datetime.time(10, 30, tzinfo=datetime.UTC)
    assert bound["span"] == datetime.timedelta(hours=1)
    when = datetime.datetime(2025, 11, 25, 10, tzinfo=datetime.UTC)
    assert sig.structured(when) == {"result": "2025-11-25T10:00:00Z"}


def test_path_parameters_are_strings_bound_to_paths() -> None:
    """A ``pathlib`` parameter is a non-empty string in the schema and arrives as the annotated
    path class (also nested in a dataclass, also from raw JSON); a returned path is a string."""

    @dataclasses.dataclass
    class Copy:
        source: pathlib.Path
        target: pathlib.PurePosixPath

    def tool(
        path: pathlib.Path,
        copies: list[Copy] | None = None,
        base: pathlib.Path = pathlib.Path("/tmp"),
    ) -> pathlib.Path:
        return path

    sig = ToolSignature.from_function(tool)
    props = sig.input_schema["properties"]
    assert props["path"] == {"type": "string", "minLength": 1}
    assert props["base"] == {"type": "string", "minLength": 1, "default": "/tmp"}
    assert sig.input_schema["$defs"]["Copy"]["properties"]["target"] == {
        "type": "string",
        "minLength": 1,
    }
    bound = sig.bind({"path": "notes/a.txt", "copies": [{"source": "a", "target": "b"}]})
    assert bound["path"] == pathlib.Path("notes/a.txt")
    assert bound["base"] == pathlib.Path("/tmp")
    assert bound["copies"] == [Copy(pathlib.Path("a"), pathlib.PurePosixPath("b"))]
    assert type(bound["copies"][0].target) is pathlib.PurePosixPath
    raw = sig.bind(msgspec.Raw(b'{"path": "/etc/hosts"}'))
    assert raw["path"] == pathlib.Path("/etc/hosts")
    assert_parity(sig, valid=[{"path": "x"}], invalid=[{"path": ""}, {"path": 3}, {}])
    assert bind_error(sig, {"path": ""}).path == "$.path"
    assert sig.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "string", "minLength": 1}},
        "required": ["result"],
    }
    assert sig.structured(pathlib.Path("/x/y")) == {"result": "/x/y"}


# --------------------------------------------------------------------------------------
# errors: messages name the path


def test_error_messages_name_the_path() -> None:
    def tool(count: int, name: str = "") -> None:
        pass

    sig = ToolSignature.from_function(tool)
    err = bind_error(sig, {"count": "3"})
    assert str(err) == err.message == "Expected `int`, got `str` - at `$.count`"
    assert err.path == "$.count"
    assert isinstance(err, ValueError)

    err = bind_error(sig, {"name": "x"})
    assert err.message == "Object missing required field `count`"
    assert err.path == "$"

    err = bind_error(sig, None)
    assert err.message == "Object missing required field `count`"

    err = bind_error(sig, ["count", 1])
    assert err.message == "Expected `object`, got `array`"
    assert err.path == "$"


def test_int_accepts_no_integral_float_documented_divergence() -> None:
    # JSON Schema "integer" accepts 1.0; bind() is stricter (see the module docstring).
    def tool(n: int) -> None:
        pass

    sig = ToolSignature.from_function(tool)
    assert not list(check_schema(sig.input_schema).iter_errors({"n": 1.0}))
    assert bind_error(sig, {"n": 1.0}).path == "$.n"


# --------------------------------------------------------------------------------------
# skipped parameters (the handler context)


def test_skip_by_name() -> None:
    def tool(ctx: Context, query: str, *, limit: int = 10) -> None:
        pass

    sig = ToolSignature.from_function(tool, skip={"ctx", "not_a_parameter"})
    assert sig.skipped == ("ctx",)
    assert sig.parameters == ("query", "limit")
    assert list(sig.input_schema["properties"]) == ["query", "limit"]
    assert sig.bind({"query": "q"}) == {"query": "q", "limit": 10}
    # the context is not an argument a client may send
    assert bind_error(sig, {"query": "q", "ctx": {}}).message == (
        "Object contains unknown field `ctx`"
    )


def test_skip_by_predicate() -> None:
    def tool(a: int, _private: int = 0, ctx: Context | None = None) -> None:
        pass

    seen: list[Any] = []

    def predicate(p: inspect.Parameter) -> bool:
        seen.append(p.annotation)
        return p.name.startswith("_") or p.annotation == Context | None

    sig = ToolSignature.from_function(tool, skip=predicate)
    assert sig.skipped == ("_private", "ctx")
    assert sig.parameters == ("a",)
    assert seen == [int, int, Context | None]  # annotations are resolved
    with pytest.raises(TypeError, match="parameter `ctx`: type not supported"):
        ToolSignature.from_function(tool)


@pytest.mark.parametrize(
    "annotation",
    [
        Context,
        SubContext,
        SubContext[int],
        Optional[Context],  # noqa: UP045
        Context | None,
        Annotated[Context, "the context"],
    ],
)
def test_skip_by_context_type(annotation: Any) -> None:
    def tool(x: int, context=None) -> None:  # type: ignore[no-untyped-def]
        pass

    tool.__annotations__["context"] = annotation
    sig = ToolSignature.from_function(tool, context_type=Context)
    assert sig.skipped == ("context",)
    assert sig.parameters == ("x",)


def test_context_type_does_not_skip_other_parameters() -> None:
    def tool(x: int, y: list[int], z: Point) -> None:
        pass

    assert ToolSignature.from_function(tool, context_type=Context).skipped == ()


# --------------------------------------------------------------------------------------
# rejected signatures


def test_var_args_rejected() -> None:
    def star(a: int, *args: int) -> None:
        pass

    def double_star(a: int, **kwargs: int) -> None:
        pass

    with pytest.raises(TypeError, match=r"tool `star`: \*args is not supported"):
        ToolSignature.from_function(star)
    with pytest.raises(TypeError, match=r"tool `double_star`: \*\*kwargs is not supported"):
        ToolSignature.from_function(double_star)


def test_positional_only_and_reserved_names_rejected() -> None:
    def posonly(a: int, /, b: int) -> None:
        pass

    def dunder(__weird__: int) -> None:
        pass

    with pytest.raises(TypeError, match="positional-only parameter `a`"):
        ToolSignature.from_function(posonly)
    with pytest.raises(TypeError, match="`__weird__` is reserved"):
        ToolSignature.from_function(dunder)


def test_unsupported_types_rejected_at_decoration() -> None:
    class Opaque:
        pass

    def tool(a: int, b: Opaque) -> None:
        pass

    with pytest.raises(TypeError, match="tool `tool`: parameter `b`: type not supported"):
        ToolSignature.from_function(tool)

    def untagged(a: Point | Address) -> None:
        pass

    with pytest.raises(TypeError, match="tool `untagged`"):
        ToolSignature.from_function(untagged)


def test_unresolvable_annotation_rejected() -> None:
    def tool(a: "DoesNotExist") -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(TypeError, match="cannot resolve annotations"):
        ToolSignature.from_function(tool)


def test_string_annotations_are_resolved() -> None:
    def tool(a: "Point", b: "list[Color]" = []) -> "Weather":  # noqa: B006
        raise NotImplementedError

    sig = ToolSignature.from_function(tool)
    assert sig.bind({"a": {"x": 1}, "b": ["red"]}) == {"a": Point(1), "b": [Color.RED]}
    assert sig.output_schema is not None
    assert sig.output_schema["title"] == "Weather"


# --------------------------------------------------------------------------------------
# description, name, kinds of callables


def test_description_is_docstring_first_paragraph() -> None:
    def tool() -> None:
        """Get current weather information
        for a location.

        Args:
            nothing: really.
        """

    assert ToolSignature.from_function(tool).description == (
        "Get current weather information for a location."
    )

    def undocumented() -> None:
        pass

    assert ToolSignature.from_function(undocumented).description is None


def test_callables_methods_partials_and_coroutines() -> None:
    class Service:
        """A service (class docstring)."""

        def lookup(self, key: str) -> int:
            """Look a key up."""
            return 0

        def __call__(self, key: str) -> None:
            pass

    method = ToolSignature.from_function(Service().lookup)
    assert method.name == "lookup"
    assert method.parameters == ("key",)
    assert method.description == "Look a key up."

    instance = ToolSignature.from_function(Service())
    assert instance.name == "Service"
    assert instance.parameters == ("key",)

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    partial = ToolSignature.from_function(functools.partial(add, 1))
    assert partial.name == "add"
    assert partial.description == "Add two numbers."
    assert partial.parameters == ("b",)

    async def fetch(url: str) -> Weather:
        raise NotImplementedError

    coroutine = ToolSignature.from_function(fetch)
    assert coroutine.parameters == ("url",)
    assert coroutine.output_schema is not None
    assert repr(coroutine) == "<ToolSignature fetch(url)>"


def test_tool_names() -> None:
    for name in ("getUser", "DATA_EXPORT_v2", "admin.tools.list", "a-b", "x" * 128):
        assert is_valid_tool_name(name), name
    for name in ("", "x" * 129, "get user", "a,b", "caf\u00e9", "<lambda>", "a/b"):
        assert not is_valid_tool_name(name), name


# --------------------------------------------------------------------------------------
# §Output Schema and §Structured Content


def test_struct_output_schema_is_inlined_object() -> None:
    def get_weather_data(location: str) -> Weather:
        return Weather(22.5, "Partly cloudy", 65)

    sig = ToolSignature.from_function(get_weather_data)
    assert sig.output_schema == {
        "title": "Weather",
        "type": "object",
        "properties": {
            "temperature": {"type": "number", "description": "Temperature in celsius"},
            "conditions": {"type": "string"},
            "humidity": {"type": "number"},
        },
        "required": ["temperature", "conditions", "humidity"],
    }
    assert not sig.output_wrapped
    content = sig.structured(get_weather_data("x"))
    assert content == {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}
    check_schema(sig.output_schema).validate(content)


@pytest.mark.parametrize(
    ("annotation", "value", "content"),
    [
        (Address, Address("Main", "12345"), {"street": "Main", "zip_code": "12345", "tags": []}),
        (Options, Options(verbose=True, level=1), {"verbose": True, "level": 1}),
        (dict[str, int], {"a": 1}, {"a": 1}),
        (dict[int, str], {1: "a"}, {"1": "a"}),
        (Page[Point], Page([Point(1)]), {"items": [{"x": 1, "y": 0}], "next_cursor": None}),
        (Dog, Dog(True), {"type": "Dog", "good": True}),
        (Annotated[Point, "described"], Point(1, 2), {"x": 1, "y": 2}),
    ],
)
def test_object_output_types_are_not_wrapped(annotation: Any, value: Any, content: Any) -> None:
    def tool() -> None:
        pass

    tool.__annotations__["return"] = annotation
    sig = ToolSignature.from_function(tool)
    assert sig.output_schema is not None
    assert sig.output_schema["type"] == "object"
    assert "$ref" not in sig.output_schema
    assert not sig.output_wrapped
    assert sig.structured(value) == content
    check_schema(sig.output_schema).validate(content)


@pytest.mark.parametrize(
    ("annotation", "value", "result"),
    [
        (int, 3, 3),
        (str, "hi", "hi"),
        (float, 1.5, 1.5),
        (bool, False, False),
        (list[str], ["a"], ["a"]),
        (tuple[int, str], (1, "a"), (1, "a")),
        (Point | None, None, None),
        (Point | None, Point(1), {"x": 1, "y": 0}),
        (Cat | Dog, Cat(9), {"type": "Cat", "lives": 9}),
        (Pair, Pair(1, 2), [1, 2]),
        (list[Point], [Point(3)], [{"x": 3, "y": 0}]),
        (Color, Color.RED, "red"),
        (datetime.date, datetime.date(2025, 11, 25), "2025-11-25"),
        (Literal["a", "b"], "b", "b"),
        (Any | None, 1, 1),
    ],
)
def test_non_object_output_types_are_wrapped_in_result(
    annotation: Any, value: Any, result: Any
) -> None:
    def tool() -> None:
        pass

    tool.__annotations__["return"] = annotation
    sig = ToolSignature.from_function(tool)
    schema = sig.output_schema
    assert schema is not None
    assert sig.output_wrapped
    assert schema["type"] == "object"
    assert schema["required"] == ["result"]
    assert list(schema["properties"]) == ["result"]
    content = sig.structured(value)
    assert content == {"result": result}
    validator = check_schema(schema)
    validator.validate(json.loads(msgspec.json.encode(content)))  # tuples stay tuples
    assert list(validator.iter_errors({}))


def test_wrapped_int_schema_exactly() -> None:
    def count() -> int:
        return 1

    sig = ToolSignature.from_function(count)
    assert sig.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }


def test_recursive_output_struct_keeps_its_definition() -> None:
    def tree() -> Node:
        return Node(1, [Node(2)])

    sig = ToolSignature.from_function(tree)
    schema = sig.output_schema
    assert schema is not None
    assert schema["type"] == "object"
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert "Node" in schema["$defs"]
    validator = check_schema(schema)
    validator.validate(sig.structured(tree()))
    assert list(validator.iter_errors({"value": 1, "children": [{"value": "x"}]}))


def test_output_defs_only_hold_what_is_referenced() -> None:
    def tool() -> Page[Point]:
        raise NotImplementedError

    sig = ToolSignature.from_function(tool)
    assert sig.output_schema is not None
    assert set(sig.output_schema["$defs"]) == {"Point"}
    check_schema(sig.output_schema)


@pytest.mark.parametrize("annotation", [None, type(None), Any, "<no annotation>"])
def test_no_output_schema_without_structured_return(annotation: Any) -> None:
    def tool() -> None:
        pass

    if annotation == "<no annotation>":
        del tool.__annotations__["return"]
    else:
        tool.__annotations__["return"] = annotation
    sig = ToolSignature.from_function(tool)
    assert sig.output_schema is None
    assert sig.structured("anything") is None
    with pytest.raises(TypeError, match="needs a return annotation"):
        ToolSignature.from_function(tool, structured_output=True)


def test_structured_output_switch() -> None:
    class Opaque:
        pass

    def opaque() -> Opaque:
        return Opaque()

    def number() -> int:
        return 1

    assert ToolSignature.from_function(opaque).output_schema is None
    with pytest.raises(TypeError, match="return type not supported"):
        ToolSignature.from_function(opaque, structured_output=True)
    sig = ToolSignature.from_function(number, structured_output=False)
    assert sig.output_schema is None
    assert sig.structured(1) is None
    assert ToolSignature.from_function(number, structured_output=True).output_wrapped


def test_structured_rejects_non_object_for_object_schema() -> None:
    def tool() -> Weather:
        raise NotImplementedError

    sig = ToolSignature.from_function(tool)
    with pytest.raises(ToolOutputError, match="Expected an object"):
        sig.structured([1, 2])


def test_validate_output() -> None:
    def tool() -> Weather:
        raise NotImplementedError

    def numbers() -> list[int]:
        raise NotImplementedError

    lax = ToolSignature.from_function(tool)
    strict = ToolSignature.from_function(tool, validate_output=True)
    bad = Weather("hot", "sunny", 1)  # type: ignore[arg-type]
    assert lax.structured(bad) == {"temperature": "hot", "conditions": "sunny", "humidity": 1}
    with pytest.raises(ToolOutputError) as info:
        strict.structured(bad)
    assert info.value.message == "Expected `float`, got `str` - at `$.temperature`"
    assert info.value.path == "$.temperature"
    good = Weather(1.0, "sunny", 2.0)
    assert strict.structured(good) == lax.structured(good)

    checked = ToolSignature.from_function(numbers, validate_output=True)
    assert checked.structured([1]) == {"result": [1]}
    with pytest.raises(ToolOutputError) as info:
        checked.structured([1, "2"])
    assert info.value.path == "$[1]"


def test_input_and_output_schemas_are_independent() -> None:
    def tool(p: Point) -> Weather:
        raise NotImplementedError

    sig = ToolSignature.from_function(tool)
    assert set(sig.input_schema["$defs"]) == {"Point"}
    assert sig.output_schema is not None
    assert "$defs" not in sig.output_schema
