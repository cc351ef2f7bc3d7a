"""Hypothesis strategies for the JSON-schema subset of the official MCP schemas.

Each strategy draws a ``wire`` JSON value valid under the *receiver's* view of the official schema:
the official schema with the ``tolerate`` overrides applied (a tolerated field may be absent).
``expected(wire)`` is what mcpbind must re-encode after decoding it: ``wire`` plus the documented
override effects (an absent ``resultType`` comes back as ``"complete"``). Objects that take such a
default are drawn as ``Defaults`` (a ``dict`` that remembers them), so no pairs are drawn.

Supported keywords: ``type`` (also lists), ``properties``/``required``, ``additionalProperties``
(bool or schema), ``items``, ``minItems``/``maxItems``, ``anyOf``/``oneOf``, ``allOf`` (merged),
``const``, ``enum``, ``$ref`` (to ``definitions``/``$defs``), ``minimum``/``maximum`` and boolean
schemas; ``format`` is ignored (plain strings). Anything else fails loudly.

Which objects get keys the schema does not declare:

- ``additionalProperties: {}``/``true`` or a schema: a few extra keys (open maps, e.g. ``Result``);
- an object with no ``properties`` at all (``{"type": "object"}``): decoded as an open map;
- the ``open`` overrides (``*._meta``, ``Tool.inputSchema``, ``Tool.outputSchema``);
- the ``inherit`` override: message params lacking ``_meta`` may carry the base params' ``_meta``.

Every other object gets only its declared keys: the schema does not forbid others, but mcpbind
drops undeclared keys of closed-in-practice structs by design.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.protocols import Validator

from mcpbind_codegen.overrides import OVERRIDES

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schema"
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

#: Containers nested deeper than this get only their required content.
MAX_DEPTH = 3
#: Largest array / number of extra keys drawn (``maxItems`` may lower it).
MAX_ITEMS = 2
#: JSON numbers that every JSON implementation round-trips exactly as integers.
MAX_SAFE_INT = 2**53 - 1

_ANNOTATIONS = frozenset({"description", "title", "$schema", "$comment", "default", "examples"})
_HANDLED = frozenset(
    {
        "$ref",
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "anyOf",
        "oneOf",
        "allOf",
        "const",
        "enum",
        "format",
        "minimum",
        "maximum",
        *_ANNOTATIONS,
    }
)


@dataclass(frozen=True)
class Hint:
    """A constraint the spec states in prose but the JSON schema leaves out.

    The decoder relies on it to pick a union member, so instances must respect it: ``schema``
    replaces the property's schema; ``required`` drops a ``tolerate`` override's leniency where
    the absent value would contradict the shape (absent ``resultType`` means "complete").
    """

    schema: dict[str, Any]
    reason: str
    required: bool = False


_MRTR = "2026-07-28 basic/patterns/mrtr.mdx"

#: ``(version, definition, property) -> Hint``.
SEMANTIC_HINTS: dict[tuple[str, str, str], Hint] = {
    **{
        ("2026-07-28", d, "resultType"): Hint(
            {"const": "complete", "type": "string"},
            f"{_MRTR}: a final result is 'complete'; 'input_required' selects InputRequiredResult",
        )
        for d in ("CallToolResult", "GetPromptResult", "ReadResourceResult")
    },
    ("2026-07-28", "InputRequiredResult", "resultType"): Hint(
        {"const": "input_required", "type": "string"},
        f"{_MRTR}: an InputRequiredResult says 'input_required'; absent would mean 'complete'",
        required=True,
    ),
}

_TEXT = st.text(st.characters(codec="utf-8"), max_size=5)


def _json_scalars() -> SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-MAX_SAFE_INT, MAX_SAFE_INT),
        st.floats(allow_nan=False, allow_infinity=False),
        _TEXT,
    )


JSON_VALUES: SearchStrategy[Any] = st.recursive(
    _json_scalars(),
    lambda inner: st.one_of(
        st.lists(inner, max_size=MAX_ITEMS),
        st.dictionaries(_TEXT, inner, max_size=MAX_ITEMS),
    ),
    max_leaves=4,
)


class Defaults(dict[str, Any]):
    """A drawn object whose decoder fills ``defaults`` for absent keys (``tolerate``)."""

    defaults: dict[str, Any]


def _with_defaults(defaults: dict[str, Any]) -> Callable[[dict[str, Any]], Defaults]:
    def mark(value: dict[str, Any]) -> Defaults:
        out = Defaults(value)
        out.defaults = defaults
        return out

    return mark


def _plain(value: Any) -> Any:
    """``value`` with every ``Defaults`` mark removed: decoded as an open map, nothing is filled."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def expected(value: Any) -> Any:
    """The JSON value mcpbind must re-encode after decoding ``value``."""
    if isinstance(value, dict):
        out = {k: expected(v) for k, v in value.items()}
        if isinstance(value, Defaults):
            out = {**{k: v for k, v in value.defaults.items() if k not in out}, **out}
        return out
    if isinstance(value, list):
        return [expected(v) for v in value]
    return value


def _merge(parts: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    declared, extra = parts
    return {**extra, **declared}


@cache
def load_schema(version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / version / "schema.json").read_text())
    return data


def definitions(version: str) -> dict[str, Any]:
    root = load_schema(version)
    defs: dict[str, Any] = root.get("$defs") or root["definitions"]
    return defs


def tolerated(version: str) -> dict[str, dict[str, Any]]:
    """``definition -> {field: default or None}`` from the ``tolerate`` overrides."""
    out: dict[str, dict[str, Any]] = {}
    for o in OVERRIDES:
        if o.kind == "tolerate" and version in o.versions:
            d, _, f = o.target.partition(".")
            out.setdefault(d, {})[f] = o.value
    return out


def _open_targets(version: str) -> set[tuple[str, str]]:
    """``(definition or '*', property)`` pairs the ``open`` overrides declare open maps."""
    out: set[tuple[str, str]] = set()
    for o in OVERRIDES:
        if o.kind == "open" and version in o.versions:
            d, _, p = o.target.partition(".")
            out.add((d, p))
    return out


def _validator_class(version: str) -> type[Validator]:
    root = load_schema(version)
    cls: type[Validator] = Draft202012Validator if "$defs" in root else Draft7Validator
    return cls


@cache
def _relaxed_root(version: str) -> dict[str, Any]:
    """The official schema with the ``tolerate`` overrides' fields no longer required."""
    root = copy.deepcopy(load_schema(version))
    defs = root.get("$defs") or root["definitions"]
    for d, fields in tolerated(version).items():
        node = defs[d]
        node["required"] = [r for r in node.get("required", []) if r not in fields]
    return root


@cache
def validator(version: str, name: str, *, relaxed: bool = False) -> Validator:
    """A validator for one definition, refs resolved against the whole schema document."""
    root = _relaxed_root(version) if relaxed else load_schema(version)
    key = "$defs" if "$defs" in root else "definitions"
    schema = {"$schema": root["$schema"], key: root[key], "$ref": f"#/{key}/{name}"}
    return _validator_class(version)(schema)


class SchemaStrategies:
    """Builds the instance strategies for the definitions of one schema version."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.defs = definitions(version)
        self.tolerate = tolerated(version)
        self.open_targets = _open_targets(version)
        self.hints = {(d, p): h for (v, d, p), h in SEMANTIC_HINTS.items() if v == version}
        self._inherit_defs, self._inherit_ids = self._inherit_meta_targets()
        self._refs: dict[tuple[str, int, bool], SearchStrategy[Any]] = {}

    # ------------------------------------------------------------------ public
    def definition(self, name: str) -> SearchStrategy[Any]:
        return self._ref(name, 0, force_open=False)

    # ------------------------------------------------------------------ helpers
    def _resolve(self, node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            node = self.defs[_ref_name(node["$ref"])]
        return self._merge_all_of(node) if isinstance(node, dict) else node

    def _merge_all_of(self, node: dict[str, Any]) -> dict[str, Any]:
        """``allOf`` of object schemas as one object (later parts refine earlier ones)."""
        if "allOf" not in node:
            return node
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        props: dict[str, Any] = dict(merged.get("properties", {}))
        required: list[str] = list(merged.get("required", []))
        for part in node["allOf"]:
            part = self._resolve(part)
            for k, v in part.get("properties", {}).items():
                props[k] = {**self._resolve(props[k]), **v} if k in props else v
            required += [r for r in part.get("required", []) if r not in required]
            for k in ("type", "additionalProperties"):
                if k in part:
                    merged.setdefault(k, part[k])
        merged["properties"] = props
        merged["required"] = required
        merged.setdefault("type", "object")
        return merged

    def _is_open_map(self, node: Any) -> bool:
        """Decoded as a plain ``dict`` (mirrors the generator's struct-or-map decision)."""
        node = self._resolve(node)
        if node is True or node == {}:
            return True
        if not isinstance(node, dict) or node.get("type", "object") != "object":
            return False
        if "anyOf" in node or "oneOf" in node or "const" in node or "enum" in node:
            return False
        ap = node.get("additionalProperties", False)
        return not node.get("properties") or ap is not False

    def _inherit_meta_targets(self) -> tuple[set[str], set[int]]:
        """Message params without ``_meta`` (the ``inherit`` override adds the base one)."""
        if not any(o.kind == "inherit" and self.version in o.versions for o in OVERRIDES):
            return set(), set()
        names: set[str] = set()
        ids: set[int] = set()
        groups = (
            "ClientRequest",
            "ServerRequest",
            "InputRequest",
            "ClientNotification",
            "ServerNotification",
        )
        for group in groups:
            for member in self.defs.get(group, {}).get("anyOf", []):
                msg = self._resolve(member)
                params = msg.get("properties", {}).get("params")
                if params is None:
                    continue
                candidates = params.get("anyOf", [params])
                for c in candidates:
                    target = self._resolve(c)
                    if not isinstance(target, dict) or not target.get("properties"):
                        continue
                    if "_meta" in target["properties"] or self._is_open_map(target):
                        continue
                    if "$ref" in c:
                        names.add(_ref_name(c["$ref"]))
                    else:
                        ids.add(id(c))
        return names, ids

    # ------------------------------------------------------------------ builders
    def _ref(self, name: str, depth: int, *, force_open: bool) -> SearchStrategy[Any]:
        depth = min(depth, MAX_DEPTH)  # past the limit every level draws the same
        key = (name, depth, force_open)
        if key not in self._refs:
            # Registered first so that a (depth-bounded) cycle finds the deferred stand-in.
            self._refs[key] = st.deferred(lambda: self._refs[key])
            node = self.defs[name]
            self._refs[key] = self._build(
                node, depth, owner=name, force_open=force_open, inherit=name in self._inherit_defs
            )
        return self._refs[key]

    def _build(
        self,
        node: Any,
        depth: int,
        *,
        owner: str | None = None,
        force_open: bool = False,
        inherit: bool = False,
    ) -> SearchStrategy[Any]:
        if node is True:
            return self._any(depth)
        if node is False:
            raise ValueError("cannot generate an instance of the `false` schema")
        unknown = set(node) - _HANDLED
        if unknown:
            raise ValueError(f"unsupported keywords {sorted(unknown)} in {json.dumps(node)[:200]}")
        if "$ref" in node:
            extra = set(node) - _ANNOTATIONS - {"$ref"}
            if extra:
                raise ValueError(f"$ref with sibling constraints {sorted(extra)}")
            return self._ref(_ref_name(node["$ref"]), depth, force_open=force_open)
        if "allOf" in node:
            return self._build(
                self._merge_all_of(node), depth, owner=owner, force_open=force_open, inherit=inherit
            )
        if "anyOf" in node or "oneOf" in node:
            return self._union(node, depth, force_open)
        if "const" in node:
            return st.just(node["const"])
        if "enum" in node:
            return st.sampled_from(node["enum"])
        t = node.get("type")
        if isinstance(t, list):
            return st.one_of(
                [
                    self._build({**node, "type": x}, depth, owner=owner, force_open=force_open)
                    for x in t
                ]
            )
        if t is None:
            t = "object" if "properties" in node else "array" if "items" in node else None
        if t is None:
            return self._any(depth)
        if t == "object":
            return self._object(node, depth, owner, force_open, inherit)
        if t == "array":
            return self._array(node, depth)
        scalar = self._scalar(t, node)
        return scalar

    def _union(self, node: dict[str, Any], depth: int, force_open: bool) -> SearchStrategy[Any]:
        # ``oneOf`` draws like ``anyOf``; the schema check of every instance enforces exclusivity.
        members: list[Any] = node["anyOf"] if "anyOf" in node else node["oneOf"]
        branches = [self._build(m, depth, force_open=force_open) for m in members]
        strategy = st.one_of(branches)
        # Union members are tried in order; an open map first accepts every value as is.
        return strategy.map(_plain) if self._is_open_map(members[0]) else strategy

    def _scalar(self, t: str, node: dict[str, Any]) -> SearchStrategy[Any]:
        lo, hi = node.get("minimum"), node.get("maximum")
        if t == "string":
            return _TEXT
        if t == "boolean":
            return st.booleans()
        if t == "null":
            return st.none()
        ints = st.integers(
            -MAX_SAFE_INT if lo is None else int(lo), MAX_SAFE_INT if hi is None else int(hi)
        )
        if t == "integer":
            return ints
        if t == "number":
            return st.one_of(
                ints, st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)
            )
        raise ValueError(f"unsupported type {t!r}")

    def _any(self, depth: int) -> SearchStrategy[Any]:
        return JSON_VALUES if depth < MAX_DEPTH else _json_scalars()

    def _array(self, node: dict[str, Any], depth: int) -> SearchStrategy[Any]:
        lo = node.get("minItems", 0)
        if depth >= MAX_DEPTH and lo == 0:
            return st.just([])
        hi = lo if depth >= MAX_DEPTH else max(lo, min(MAX_ITEMS, node.get("maxItems", MAX_ITEMS)))
        items = self._build(node.get("items", True), depth + 1)
        return st.lists(items, min_size=lo, max_size=hi)

    def _object(
        self,
        node: dict[str, Any],
        depth: int,
        owner: str | None,
        force_open: bool,
        inherit: bool,
    ) -> SearchStrategy[Any]:
        props: dict[str, Any] = dict(node.get("properties", {}))
        required = set(node.get("required", []))
        tolerate = dict(self.tolerate.get(owner, {})) if owner else {}
        hints = {k: h for (d, k), h in self.hints.items() if d == owner}
        for key, hint in hints.items():
            props[key] = hint.schema
            if hint.required:
                tolerate.pop(key, None)
        shallow = depth >= MAX_DEPTH
        if inherit or id(node) in self._inherit_ids:
            props.setdefault("_meta", {"type": "object"})

        strategies: dict[str, SearchStrategy[Any]] = {}
        for key, sub in props.items():
            is_open = (owner or "", key) in self.open_targets or ("*", key) in self.open_targets
            strategies[key] = self._build(sub, depth + 1, force_open=is_open)
        must = {k: s for k, s in strategies.items() if k in required and k not in tolerate}
        may = {} if shallow else {k: s for k, s in strategies.items() if k not in must}
        body = st.fixed_dictionaries(must, optional=may)

        extras = None if shallow else self._extras(node, depth, force_open)
        if extras is not None:
            declared = set(props)
            keys = _TEXT.filter(lambda k: k not in declared)
            body = st.tuples(body, st.dictionaries(keys, extras, max_size=MAX_ITEMS)).map(_merge)

        defaults = {f: v for f, v in tolerate.items() if v is not None}
        return body.map(_with_defaults(defaults)) if defaults else body

    def _extras(
        self, node: dict[str, Any], depth: int, force_open: bool
    ) -> SearchStrategy[Any] | None:
        ap = node.get("additionalProperties")
        if ap is False:
            return None
        if ap is True or ap == {}:
            return self._any(depth + 1)
        if isinstance(ap, dict):
            return self._build(ap, depth + 1)
        if force_open or not node.get("properties"):
            return self._any(depth + 1)
        return None


def _ref_name(ref: str) -> str:
    prefix, _, name = ref.rpartition("/")
    if prefix not in ("#/definitions", "#/$defs"):
        raise ValueError(f"unsupported $ref {ref!r}")
    return name


@cache
def strategies_for(version: str) -> SchemaStrategies:
    return SchemaStrategies(version)
