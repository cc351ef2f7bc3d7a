"""The unified superset: one set of types that reads and writes every pinned version.

Application code is written against it; each per-version package stays strict for wire
validation. Rules: a definition has the fields of every version; a field is required only where
every version that has the definition requires it; field types widen to cover every version;
unions are then classified again exactly as for one version.
"""

from __future__ import annotations

import dataclasses

from .build import Builder, _normalize_members
from .model import (
    ANY,
    OPEN_OBJECT,
    AliasDef,
    Definition,
    Field,
    ListOf,
    Lit,
    MapOf,
    MethodDef,
    Model,
    Prim,
    Ref,
    StructDef,
    TypeExpr,
    UnionDef,
    UnionOf,
)
from .overrides import ALL, OVERRIDES, OverrideTracker

UNIFIED = "unified"


def merge_models(models: list[Model]) -> Model:
    names = sorted({n for m in models for n in m.definitions})
    kinds = {n: d for m in models for n, d in m.definitions.items()}
    defs: dict[str, Definition] = {}
    for name in names:
        versions = [m.definitions[name] for m in models if name in m.definitions]
        defs[name] = _merge_definition(name, versions, kinds)
    # Unions are re-decided over the merged members, as for a single version.
    discriminators = {
        n: d.discriminator
        for m in models
        for n, d in m.definitions.items()
        if isinstance(d, UnionDef) and d.discriminator is not None
    }
    for name, d in list(defs.items()):
        if isinstance(d, UnionDef):
            defs[name] = AliasDef(name, UnionOf(d.members), d.doc)
    table = [dataclasses.replace(o, versions=ALL) for o in OVERRIDES if o.kind == "discriminate"]
    builder = Builder.for_defs(defs, OverrideTracker(UNIFIED, table))
    builder.classify()
    defs = dict(sorted(builder.defs.items()))
    for name, disc in discriminators.items():
        u = defs.get(name)
        if isinstance(u, UnionDef) and u.discriminator is None:
            u.discriminator = disc
    return Model(
        version=models[-1].version,
        versions=tuple(m.version for m in models),
        source_path="(all pinned versions)",
        sha256="\n".join(f"{m.version}  sha256 {m.sha256}" for m in models),
        definitions=defs,
        methods=_merge_methods(models),
    )


def _merge_definition(
    name: str, versions: list[Definition], kinds: dict[str, Definition]
) -> Definition:
    newest = versions[-1]
    if isinstance(newest, StructDef):
        return _merge_struct([d for d in versions if isinstance(d, StructDef)], kinds)
    # The newest kind wins: an older struct that later became a union (2025-06-18's
    # ElicitRequestParams) is one of the union's members in the newer versions.
    t: TypeExpr | None = None
    for d in versions:
        if isinstance(d, StructDef):
            continue
        dt = UnionOf(d.members) if isinstance(d, UnionDef) else d.type
        t = dt if t is None else merge_types(dt, t, kinds)
    assert t is not None
    return AliasDef(name, t, newest.doc)


def _merge_struct(versions: list[StructDef], kinds: dict[str, Definition]) -> StructDef:
    newest = versions[-1]
    order: list[str] = []
    for d in reversed(versions):
        order += [f.wire for f in d.fields if f.wire not in order]
    tags = {(d.tag_field, d.tag) for d in versions if d.tag_field is not None}
    tag_field, tag = tags.pop() if len(tags) == 1 else (None, None)
    fields: list[Field] = []
    taken: set[str] = set()
    for wire in order:
        if wire == tag_field:
            continue
        present = [f for d in versions for f in d.fields if f.wire == wire]
        t = present[-1].type
        for f in reversed(present[:-1]):
            t = merge_types(t, f.type, kinds)
        required = len(present) == len(versions) and all(f.required for f in present)
        # A tolerated default ("resultType" -> "complete") belongs to the versions that define
        # the field; the superset must not put it on the wire of versions that lack it.
        everywhere = len(present) == len(versions)
        default = next((f.default for f in reversed(present) if f.default is not None), None)
        default = default if everywhere else None
        py = present[-1].py if present[-1].py not in taken else present[-1].py + "_"
        taken.add(py)
        fields.append(Field(wire, py, t, required, present[-1].doc, default))
    return StructDef(newest.name, fields, newest.doc, tag_field, tag)


def merge_types(newer: TypeExpr, older: TypeExpr, kinds: dict[str, Definition]) -> TypeExpr:
    """A type covering both; where both name a struct or a union, the newer one wins."""
    a, b = newer, older
    if a == b:
        return a
    if ANY in (a, b) and not {a, b} & {Prim("raw"), Prim("rawany")}:
        return ANY
    if isinstance(a, ListOf) and isinstance(b, ListOf):
        return ListOf(merge_types(a.item, b.item, kinds))
    if isinstance(a, MapOf) and isinstance(b, MapOf):
        return MapOf(merge_types(a.value, b.value, kinds))
    raws = {Prim("raw"), Prim("rawany")}
    if {a, b} & raws and {a, b} <= raws | {OPEN_OBJECT, ANY}:
        return Prim("rawany") if {a, b} & {Prim("rawany"), ANY} else Prim("raw")
    if a == OPEN_OBJECT and isinstance(b, Ref):
        return b
    if b == OPEN_OBJECT and isinstance(a, Ref):
        return a
    if (
        isinstance(a, Ref)
        and isinstance(b, Ref)
        and isinstance(kinds.get(a.name), StructDef)
        and isinstance(kinds.get(b.name), StructDef)
    ):
        return a  # a renamed or re-shaped struct: the newest shape reads the older wire
    ma, mb = _members(a, kinds), _members(b, kinds)
    if mb <= ma:
        return a
    if ma <= mb:
        return b
    if isinstance(a, Lit) and isinstance(b, Lit):
        return Lit(tuple(dict.fromkeys(a.values + b.values)))
    if {a, b} == {Prim("int"), Prim("number")}:
        return Prim("number")
    members = (a.members if isinstance(a, UnionOf) else (a,)) + (
        b.members if isinstance(b, UnionOf) else (b,)
    )
    merged = _normalize_members(members, lambda t: t)
    return merged[0] if len(merged) == 1 else UnionOf(merged)


def _members(t: TypeExpr, kinds: dict[str, Definition]) -> frozenset[TypeExpr]:
    """The members of a union type (expanding named unions); a one-element set otherwise."""
    if isinstance(t, Ref):
        d = kinds.get(t.name)
        if isinstance(d, UnionDef):
            return frozenset().union(*(_members(m, kinds) for m in d.members))
        if isinstance(d, AliasDef) and isinstance(d.type, UnionOf):
            return _members(d.type, kinds)
    if isinstance(t, UnionOf):
        return frozenset().union(*(_members(m, kinds) for m in t.members))
    return frozenset((t,))


def _merge_methods(models: list[Model]) -> list[MethodDef]:
    by_key: dict[tuple[str, str], list[MethodDef]] = {}
    for m in models:
        for md in m.methods:
            by_key.setdefault((md.direction, md.method), []).append(md)
    out: list[MethodDef] = []
    for rows in by_key.values():
        newest = rows[-1]
        # A server-to-client request of the handshake era is an MRTR input request in
        # 2026-07-28; application code calls it the same way on both, so it stays a request.
        kind = "request" if any(r.kind == "request" for r in rows) else newest.kind
        out.append(
            dataclasses.replace(
                newest,
                kind=kind,
                params_required=all(r.params_required for r in rows) and len(rows) == len(models),
                versions=tuple(v for r in rows for v in r.versions),
            )
        )
    out.sort(key=lambda m: (m.direction, m.kind, m.method))
    return out
