"""The part of JSON Schema the generator understands, checked before anything is built.

A construct outside it stops generation with one line that names the definition, the place and
the construct, rather than bindings that silently decode something else.
"""

from __future__ import annotations

from typing import Any

#: Keywords that shape the generated types.
SHAPING = frozenset(
    {
        "$ref",
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "const",
        "enum",
    }
)
#: Keywords that annotate or constrain values only: kept as docstrings or not at all. A scalar
#: ``default`` of a required property is read too: absent means that value.
ANNOTATING = frozenset(
    {
        "description",
        "title",
        "$comment",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "contentMediaType",
        "contentEncoding",
    }
)
JSON_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
REF_PREFIXES = ("#/$defs/", "#/definitions/")


class UnsupportedSchema(ValueError):
    """A schema construct the generator cannot turn into types."""


def check_constructs(defs: dict[str, Any]) -> None:
    """Fail on the first construct of any definition that the generator cannot handle."""
    for name, node in defs.items():
        _Check(name, defs).node(node, name)


class _Check:
    def __init__(self, definition: str, defs: dict[str, Any]) -> None:
        self.definition = definition
        self.defs = defs

    def fail(self, where: str, construct: str) -> None:
        raise UnsupportedSchema(
            f"cannot generate `{self.definition}`: unsupported schema construct {construct} "
            f"at {where}"
        )

    def node(self, node: Any, where: str) -> None:
        if isinstance(node, bool):
            return
        if not isinstance(node, dict):
            self.fail(where, f"a schema that is a JSON {type(node).__name__}")
        unions = [k for k in ("anyOf", "oneOf") if k in node]
        if len(unions) > 1 or (unions and node.get("properties")):
            self.fail(
                where, f"`{unions[0]}` beside `{'oneOf' if len(unions) > 1 else 'properties'}`"
            )
        for key, value in node.items():
            if key in ANNOTATING:
                continue
            if key not in SHAPING:
                self.fail(where, f"`{key}`")
            self.keyword(key, value, f"{where}/{key}")

    def keyword(self, key: str, value: Any, at: str) -> None:
        if key == "properties":
            if not isinstance(value, dict):
                self.fail(at, "`properties` that is not an object")
            for name, sub in value.items():
                self.node(sub, f"{at}/{name}")
        elif key in ("additionalProperties", "items"):
            if isinstance(value, list):
                self.fail(at, f"`{key}` as a list (tuple validation)")
            self.node(value, at)
        elif key in ("anyOf", "oneOf", "allOf"):
            if not isinstance(value, list) or not value:
                self.fail(at, f"`{key}` that is not a non-empty list")
            for i, sub in enumerate(value):
                self.node(sub, f"{at}/{i}")
        elif key == "$ref":
            self.ref(value, at)
        elif key == "type":
            types = value if isinstance(value, list) else [value]
            for t in types:
                if t not in JSON_TYPES:
                    self.fail(at, f"`type` {t!r}")
        elif key in ("const", "enum"):
            values = value if key == "enum" and isinstance(value, list) else [value]
            for v in values:
                if not isinstance(v, str | int | bool) or isinstance(v, float):
                    self.fail(at, f"`{key}` value {v!r} (only strings, integers and booleans)")
        elif key == "required" and not (
            isinstance(value, list) and all(isinstance(r, str) for r in value)
        ):
            self.fail(at, "`required` that is not a list of names")

    def ref(self, ref: Any, at: str) -> None:
        if not isinstance(ref, str) or not ref.startswith(REF_PREFIXES):
            self.fail(at, f"`$ref` {ref!r} (only references to local definitions)")
        name = ref.split("/", 2)[2]
        if name not in self.defs:
            self.fail(at, f"`$ref` {ref!r} to an undefined definition")
