"""Schema -> model: resolve references, name inline shapes, classify unions.

The official schemas are JSON Schema draft-07 (2024-11-05 .. 2025-06-18) or 2020-12 (later);
both use the same small subset of keywords, so one walker serves both.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from .constructs import REF_PREFIXES, check_constructs
from .model import (
    ANY,
    OPEN_OBJECT,
    AliasDef,
    Definition,
    Discriminator,
    Field,
    ListOf,
    Lit,
    MapOf,
    Prim,
    Ref,
    StructDef,
    TypeExpr,
    UnionDef,
    UnionOf,
)
from .naming import field_name, pascal
from .overrides import OverrideError, OverrideTracker

_ABSENT = object()
_TAG_PREFERENCE = ("method", "type", "kind", "mode")
_PRIMS: dict[str, TypeExpr] = {
    "string": Prim("str"),
    "integer": Prim("int"),
    "number": Prim("number"),
    "boolean": Prim("bool"),
    "null": Prim("none"),
}


def schema_definitions(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs", schema.get("definitions"))
    if not isinstance(defs, dict) or not defs:
        raise ValueError("schema has no `$defs` / `definitions`")
    return defs


def _ref_name(ref: str) -> str:
    for prefix in REF_PREFIXES:
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    raise ValueError(f"unsupported $ref {ref!r}")


def _strip_docs(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_docs(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_strip_docs(v) for v in node]
    return node


def apply_patches(defs: dict[str, Any], tracker: OverrideTracker) -> dict[str, Any]:
    """Apply ``patch`` overrides to a copy of the definitions, checking each still matches."""
    defs = copy.deepcopy(defs)
    for index, o in tracker.of_kind("patch"):
        name, _, pointer = o.target.partition("/")
        node: Any = defs.get(name)
        parts = pointer.split("/")
        for part in parts[:-1]:
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                node = None
                break
        expected, replacement = o.value
        last = parts[-1]
        if not isinstance(node, dict) or node.get(last, _ABSENT) != expected:
            found = node.get(last, "<absent>") if isinstance(node, dict) else "<no such location>"
            tracker.mismatch(
                o, f"patch {o.target} ({tracker.version}): expected {expected!r}, found {found!r}"
            )
            continue
        node[last] = replacement
        tracker.use(index)
    return defs


class Builder:
    def __init__(self, schema: dict[str, Any], tracker: OverrideTracker) -> None:
        self.tracker = tracker
        self.src = apply_patches(schema_definitions(schema), tracker)
        check_constructs(self.src)
        self.defs: dict[str, Definition] = {}
        self._shapes: dict[str, str] = {}

    # ---------------------------------------------------------------- public
    def build(self) -> dict[str, Definition]:
        for name in sorted(self.src):
            if name not in self.defs:
                self._definition(name, self.src[name])
        self._inherit_meta()
        self.classify()
        return dict(sorted(self.defs.items()))

    def classify(self) -> None:
        """Decide every union's decoding and cut recursive aliases (also used by the merge)."""
        self._classify_unions()
        self._break_alias_cycles()

    @classmethod
    def for_defs(cls, defs: dict[str, Definition], tracker: OverrideTracker) -> Builder:
        """A builder over existing definitions (the unified merge re-classifies its unions)."""
        self = cls.__new__(cls)
        self.tracker, self.src, self.defs, self._shapes = tracker, {}, defs, {}
        return self

    def _inherit_meta(self) -> None:
        """Params of requests and notifications extend the base params, which declare `_meta`."""
        o = self.tracker.find("inherit", "*.params._meta")
        if o is None:
            return
        groups = (
            "ClientRequest",
            "ServerRequest",
            "InputRequest",
            "ClientNotification",
            "ServerNotification",
        )
        added = False
        for group in groups:
            node = self.src.get(group, {})
            refs = [m["$ref"] for m in node.get("anyOf", [])]
            for name in (_ref_name(r) for r in refs):
                msg = self.defs.get(name)
                if not isinstance(msg, StructDef):
                    continue
                for f in msg.fields:
                    if f.wire != "params":
                        continue
                    t = self._resolve_alias(f.type)
                    for member in t.members if isinstance(t, UnionOf) else (f.type,):
                        params = self.defs.get(member.name) if isinstance(member, Ref) else None
                        if isinstance(params, StructDef):
                            added |= self._add_meta(params)
        if not added:
            self.tracker.mismatch(
                o, f"inherit *.params._meta: nothing to add in {self.tracker.version}"
            )

    @staticmethod
    def _add_meta(params: StructDef) -> bool:
        if any(p.wire == "_meta" for p in params.fields):
            return False
        taken = {p.py for p in params.fields}
        doc = "Reserved for protocol metadata (inherited from the base params)."
        params.fields.append(Field("_meta", field_name("_meta", taken), OPEN_OBJECT, False, doc))
        return True

    # ---------------------------------------------------------------- definitions
    def _definition(self, name: str, node: dict[str, Any]) -> None:
        doc = node.get("description")
        node = self._merge_all_of(node)
        if self._is_struct_node(node) and not self._is_open(node):
            self._struct(name, node)
            return
        t = self._type(node, name, top=True)
        self.defs[name] = AliasDef(name, t, doc)

    @staticmethod
    def _is_struct_node(node: dict[str, Any]) -> bool:
        return bool(node.get("properties")) and (node.get("type", "object") == "object")

    @staticmethod
    def _is_open(node: dict[str, Any]) -> bool:
        ap = node.get("additionalProperties", _ABSENT)
        return ap is not _ABSENT and ap is not False

    def _merge_all_of(self, node: dict[str, Any]) -> dict[str, Any]:
        if "allOf" not in node:
            return node
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        props: dict[str, Any] = dict(merged.get("properties", {}))
        required: list[str] = list(merged.get("required", []))
        for part in node["allOf"]:
            if "$ref" in part:
                part = self._merge_all_of(self.src[_ref_name(part["$ref"])])
            for k, v in part.get("properties", {}).items():
                props[k] = {**props[k], **v} if k in props else v
            required += [r for r in part.get("required", []) if r not in required]
            for k in ("type", "additionalProperties"):
                if k in part:
                    merged.setdefault(k, part[k])
        merged["properties"] = props
        merged["required"] = required
        merged.setdefault("type", "object")
        return merged

    def _struct(self, name: str, node: dict[str, Any]) -> None:
        struct = StructDef(name, [], node.get("description"))
        self.defs[name] = struct  # registered first: self-references resolve
        taken: set[str] = set()
        required = set(node.get("required", []))
        for wire, sub in node.get("properties", {}).items():
            hint = name + pascal(wire)
            t = self._property_type(name, wire, sub, hint)
            req = wire in required
            default = None
            if req and isinstance(sub.get("default"), str | int | bool):
                req, default = False, sub["default"]  # the schema says what absent means
            tol = self.tracker.find("tolerate", f"{name}.{wire}")
            if tol is not None and not req:
                self.tracker.mismatch(
                    tol, f"tolerate {name}.{wire}: not required, or has a default, in the schema"
                )
            elif tol is not None:
                req, default = False, tol.value
            struct.fields.append(
                Field(wire, field_name(wire, taken), t, req, sub.get("description"), default)
            )

    def _property_type(self, owner: str, wire: str, sub: dict[str, Any], hint: str) -> TypeExpr:
        t = self._declared_type(owner, wire, sub, hint)
        lazy = self.tracker.find("lazy", f"{owner}.{wire}")
        if lazy is not None and t not in (OPEN_OBJECT, ANY):
            self.tracker.mismatch(lazy, f"lazy {owner}.{wire}: not free-form JSON")
        elif lazy is not None:
            return Prim("raw") if t == OPEN_OBJECT else Prim("rawany")
        return t

    def _declared_type(self, owner: str, wire: str, sub: dict[str, Any], hint: str) -> TypeExpr:
        for index, o in self.tracker.of_kind("open"):
            d, _, prop = o.target.partition(".")
            if prop == wire and d in ("*", owner):
                self.tracker.use(index)
                return OPEN_OBJECT
        named = self.tracker.find("name", f"{owner}.{wire}")
        if named is not None and not (isinstance(sub, dict) and sub.get("properties")):
            self.tracker.mismatch(named, f"name {owner}.{wire}: not an inline object")
        elif named is not None:
            return Ref(self._inline_struct(sub, hint, named.value))
        return self._type(sub, hint)

    # ---------------------------------------------------------------- types
    def _type(self, node: Any, hint: str, *, top: bool = False) -> TypeExpr:
        if node is True or node == {} or not isinstance(node, dict):
            return ANY
        node = self._merge_all_of(node)
        if "$ref" in node:
            return Ref(_ref_name(node["$ref"]))
        if "anyOf" in node or "oneOf" in node:
            members = node.get("anyOf", node.get("oneOf"))
            return _union([self._type(m, f"{hint}{i}") for i, m in enumerate(members)])
        if "const" in node:
            return Lit((node["const"],))
        if "enum" in node:
            return Lit(tuple(node["enum"]))
        t = node.get("type")
        if isinstance(t, list):
            return _union([self._type({**node, "type": x}, hint) for x in t])
        if t == "array":
            return ListOf(self._type(node.get("items", {}), hint + "Item"))
        if t == "object" or "properties" in node:
            return self._object(node, hint, top)
        if t in _PRIMS:
            return _PRIMS[t]
        if t is None:
            return ANY
        raise ValueError(f"unsupported schema node at {hint}: {json.dumps(node)[:200]}")

    def _object(self, node: dict[str, Any], hint: str, top: bool) -> TypeExpr:
        props = node.get("properties") or {}
        ap = node.get("additionalProperties", _ABSENT)
        if not props:
            if ap is _ABSENT or ap is True or ap is False or ap == {}:
                return OPEN_OBJECT
            return MapOf(self._type(ap, hint + "Value"))
        if self._is_open(node):
            return OPEN_OBJECT
        if top:
            raise AssertionError("top-level structs are built by _definition")
        return Ref(self._inline_struct(node, hint))

    def _inline_struct(self, node: dict[str, Any], hint: str, forced: str | None = None) -> str:
        # Identical shapes share a class only when an override names them: a shape that merely
        # happens to match another (``{listChanged}`` under tools and prompts) keeps its own
        # name, so the API reads ``ServerCapabilitiesTools``, not another property's class.
        shape = json.dumps(_strip_docs(node), sort_keys=True)
        if forced is None:
            shape = f"{hint}:{shape}"
        name = forced or hint
        if name in self._shapes.values():
            if self._shapes.get(shape) == name:
                return name
            raise OverrideError(f"inline shape {hint}: name {name!r} already used by another shape")
        if name in self.src or name in self.defs:
            name = hint + "Object"
            if name in self.src or name in self.defs:
                raise ValueError(f"cannot name inline object {hint}")
        self._shapes[shape] = name
        self._struct(name, node)
        return name

    # ---------------------------------------------------------------- unions
    def _classify_unions(self) -> None:
        """Tag unions msgspec can decode natively; name the rest for a resolver hook."""
        for name in sorted(self.defs):
            d = self.defs[name]
            if isinstance(d, StructDef):
                for f in d.fields:
                    f.type = self._walk(f.type, name + pascal(f.wire), f"{name}.{f.wire}")
            elif isinstance(d, AliasDef):
                t = self._walk(d.type, name, name, named=name)
                if self.defs.get(name) is d:
                    d.type = t

    def _walk(self, t: TypeExpr, hint: str, target: str, *, named: str | None = None) -> TypeExpr:
        if isinstance(t, ListOf):
            return ListOf(self._walk(t.item, hint + "Item", target))
        if isinstance(t, MapOf):
            return MapOf(self._walk(t.value, hint + "Value", target))
        if isinstance(t, UnionOf):
            normalized = _normalize_members(t.members, self._resolve_alias)
            members = tuple(self._walk(m, hint, target) for m in normalized)
            return self._fix_union(UnionOf(members), hint, named=named, target=target)
        return t

    def _fix_union(
        self, u: UnionOf, hint: str, *, named: str | None = None, target: str | None = None
    ) -> TypeExpr:
        members = _normalize_members(u.members, self._resolve_alias)
        if len(members) == 1:
            return members[0]
        if ANY in members:
            return ANY
        if self._native(members):
            return UnionOf(members)
        name = named or hint + "Union"
        disc = self._discriminator(named or target or name, members)
        base, n = name, 1
        while named is None and name in self.defs:
            existing = self.defs[name]
            if isinstance(existing, UnionDef) and existing.members == members:
                return Ref(name)
            n += 1
            name = f"{base}{n}"
        old = self.defs.get(name)
        self.defs[name] = UnionDef(name, members, old.doc if old else None, disc)
        return Ref(name)

    def _discriminator(self, target: str, members: tuple[TypeExpr, ...]) -> Discriminator | None:
        o = self.tracker.find("discriminate", target)
        if o is None:
            return None
        field, by_value, default = o.value
        names = {m.name for m in members if isinstance(m, Ref)}
        wanted = set(by_value.values()) | ({default} if default else set())
        if not wanted <= names:
            missing = sorted(wanted - names)
            self.tracker.mismatch(o, f"discriminate {target}: {missing} not in union")
            return None
        return Discriminator(field, tuple(sorted(by_value.items())), default)

    def _resolve_alias(self, t: TypeExpr) -> TypeExpr:
        seen: set[str] = set()
        while isinstance(t, Ref) and t.name not in seen:
            seen.add(t.name)
            d = self.defs.get(t.name)
            if isinstance(d, AliasDef):
                t = d.type
            else:
                break
        return t

    def _native(self, members: tuple[TypeExpr, ...]) -> bool:
        """Whether msgspec can decode the union itself, tagging struct members if needed."""
        kinds: dict[str, int] = {}
        structs: list[StructDef] = []
        for m in self._expand(members):
            r = self._resolve_alias(m)
            if isinstance(r, Ref):
                d = self.defs.get(r.name)
                if isinstance(d, StructDef):
                    structs.append(d)
                    continue
                return False  # a union inside a union
            k = _kind(r)
            kinds[k] = kinds.get(k, 0) + 1
        if any(n > 1 for n in kinds.values()):
            return False
        if len(structs) <= 1:
            return not (structs and "object" in kinds)
        if "object" in kinds:
            return False
        return self._tag(structs)

    def _expand(self, members: tuple[TypeExpr, ...]) -> list[TypeExpr]:
        """Members as msgspec sees them: aliases of native unions flattened."""
        out: list[TypeExpr] = []
        for m in members:
            r = self._resolve_alias(m)
            if isinstance(r, UnionOf):
                out.extend(x for x in self._expand(r.members) if x not in out)
            elif m not in out:
                out.append(m)
        return out

    def _tag(self, structs: list[StructDef]) -> bool:
        existing = {s.tag_field for s in structs if s.tag_field is not None}
        if len(existing) > 1:
            return False
        candidates: list[str] | None = None
        for s in structs:
            consts = {
                f.wire
                for f in s.fields
                if f.required and isinstance(f.type, Lit) and len(f.type.values) == 1
            }
            if s.tag_field is not None:
                consts.add(s.tag_field)
            candidates = (
                sorted(consts) if candidates is None else [c for c in candidates if c in consts]
            )
        candidates = candidates or []
        if existing:
            candidates = [c for c in candidates if c in existing]
        candidates.sort(key=lambda c: (_TAG_PREFERENCE.index(c) if c in _TAG_PREFERENCE else 99, c))
        for field in candidates:
            values = [s.tag if s.tag_field == field else _const(s, field) for s in structs]
            if len(set(values)) != len(values):
                continue
            for s, v in zip(structs, values, strict=True):
                if s.tag_field is None:
                    s.tag_field, s.tag = field, v
                    s.fields = [f for f in s.fields if f.wire != field]
            return True
        return False

    # ---------------------------------------------------------------- aliases
    def _break_alias_cycles(self) -> None:
        """A recursive alias (``JSONValue``) cannot exist at runtime: its self-reference is Any."""
        for name, d in self.defs.items():
            if isinstance(d, AliasDef):
                d.type = self._cut(d.type, {name})

    def _cut(self, t: TypeExpr, stack: set[str]) -> TypeExpr:
        if isinstance(t, Ref):
            if t.name in stack:
                return ANY
            d = self.defs.get(t.name)
            if isinstance(d, AliasDef) and self._reaches(d.type, stack | {t.name}):
                return ANY
            return t
        if isinstance(t, ListOf):
            return ListOf(self._cut(t.item, stack))
        if isinstance(t, MapOf):
            return MapOf(self._cut(t.value, stack))
        if isinstance(t, UnionOf):
            members = tuple(self._cut(m, stack) for m in t.members)
            return ANY if ANY in members else UnionOf(members)
        return t

    def _reaches(self, t: TypeExpr, stack: set[str]) -> bool:
        if isinstance(t, Ref):
            if t.name in stack:
                return True
            d = self.defs.get(t.name)
            return isinstance(d, AliasDef) and self._reaches(d.type, stack | {t.name})
        if isinstance(t, ListOf):
            return self._reaches(t.item, stack)
        if isinstance(t, MapOf):
            return self._reaches(t.value, stack)
        if isinstance(t, UnionOf):
            return any(self._reaches(m, stack) for m in t.members)
        return False


def _const(s: StructDef, wire: str) -> Any:
    for f in s.fields:
        if f.wire == wire and isinstance(f.type, Lit):
            return f.type.values[0]
    return None


def _kind(t: TypeExpr) -> str:
    if isinstance(t, Prim):
        return {"str": "str", "int": "num", "number": "num", "bool": "bool", "none": "none"}.get(
            t.kind, "any"
        )
    if isinstance(t, Lit):
        v = t.values[0]
        return "bool" if isinstance(v, bool) else "num" if isinstance(v, int) else "str"
    if isinstance(t, ListOf):
        return "array"
    if isinstance(t, MapOf):
        return "object"
    return "other"


def _union(members: list[TypeExpr]) -> TypeExpr:
    flat: list[TypeExpr] = []
    for m in members:
        for x in m.members if isinstance(m, UnionOf) else (m,):
            if x not in flat:
                flat.append(x)
    return flat[0] if len(flat) == 1 else UnionOf(tuple(flat))


def _normalize_members(
    members: tuple[TypeExpr, ...], resolve: Callable[[TypeExpr], TypeExpr]
) -> tuple[TypeExpr, ...]:
    """Merge members msgspec would see as the same kind: literals into their primitive,
    ``int`` into ``number``, several lists into one list of a union."""
    joined = _union(list(members))
    flat = list(joined.members) if isinstance(joined, UnionOf) else [joined]
    prims = {m.kind for m in flat if isinstance(m, Prim)}
    out: list[TypeExpr] = []
    lits: list[Any] = []
    lists: list[TypeExpr] = []
    for m in flat:
        if isinstance(m, Lit):
            k = _kind(m)
            if (
                (k == "str" and "str" in prims)
                or (k == "num" and prims & {"int", "number"})
                or (k == "bool" and "bool" in prims)
            ):
                continue
            lits.extend(v for v in m.values if v not in lits)
            continue
        if isinstance(m, Prim) and m.kind == "int" and "number" in prims:
            continue
        if isinstance(m, ListOf):
            lists.append(m.item)
            continue
        out.append(m)
    if lits:
        out.insert(0, Lit(tuple(lits)))
    if lists:
        item = _union(lists)
        out.append(ListOf(item))
    return tuple(out)
