"""The typed internal model between the JSON schema and the emitters.

The loader turns a schema into these plain values; the emitters only read them. Keeping the model
small and explicit is what lets the per-version modules and the unified superset share one emitter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

LitValue = str | int | bool


@dataclass(frozen=True)
class Prim:
    """A JSON primitive. ``number`` is any JSON number (``int | float``); ``raw`` is a JSON
    object kept undecoded (``msgspec.Raw``) until the application reads it; ``rawany`` is any
    JSON value kept undecoded."""

    kind: Literal["str", "int", "number", "bool", "none", "any", "raw", "rawany"]


@dataclass(frozen=True)
class Lit:
    """One or more constant values (``const`` or ``enum``)."""

    values: tuple[LitValue, ...]


@dataclass(frozen=True)
class ListOf:
    item: TypeExpr


@dataclass(frozen=True)
class MapOf:
    """A JSON object with arbitrary string keys: ``dict[str, value]``."""

    value: TypeExpr


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class UnionOf:
    members: tuple[TypeExpr, ...]


TypeExpr = Prim | Lit | ListOf | MapOf | Ref | UnionOf

ANY = Prim("any")
OPEN_OBJECT = MapOf(ANY)


@dataclass
class Field:
    wire: str
    py: str
    type: TypeExpr
    required: bool
    doc: str | None = None
    #: Value used when the field is absent on the wire (an override: "tolerate when absent").
    default: LitValue | None = None


@dataclass
class StructDef:
    name: str
    fields: list[Field]
    doc: str | None = None
    tag_field: str | None = None
    tag: LitValue | None = None


@dataclass
class AliasDef:
    """A named type that is not a struct: primitives, maps, unions, refs."""

    name: str
    type: TypeExpr
    doc: str | None = None


@dataclass(frozen=True)
class Discriminator:
    """How to pick the member of an untagged union: by a key's value, with a default."""

    field: str
    by_value: tuple[tuple[LitValue, str], ...]
    default: str | None


@dataclass
class UnionDef:
    """A named union that msgspec cannot decode natively: resolved by a generated hook."""

    name: str
    members: tuple[TypeExpr, ...]
    doc: str | None = None
    discriminator: Discriminator | None = None


Definition = StructDef | AliasDef | UnionDef

Direction = Literal["client_to_server", "server_to_client"]
Kind = Literal["request", "notification", "input_request"]


@dataclass(frozen=True)
class MethodDef:
    method: str
    direction: Direction
    kind: Kind
    #: Name of the Struct (or alias) of the JSON-RPC message itself, e.g. ``CallToolRequest``.
    message_type: str
    params_type: str | None
    params_required: bool
    result_type: str | None
    #: The type of the response's ``result`` where it is wider than ``result_type``.
    wire_result_type: str | None
    #: Whose capability gates the method and the path in that side's capabilities object.
    capability_owner: Literal["client", "server"] | None
    capability: tuple[str, ...] | None
    #: Protocol versions that define the method (one entry for per-version models).
    versions: tuple[str, ...] = ()

    @property
    def stub_name(self) -> str:
        from .naming import stub_method_name

        if self.message_type in _GROUP_NAMES:  # a message defined in place of its group
            return "notify_" + self.method.rsplit("/", 1)[-1]
        return stub_method_name(self.message_type, self.kind)


_GROUP_NAMES = frozenset(
    {"ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification", "InputRequest"}
)


@dataclass
class Model:
    """Everything one emitted package needs."""

    version: str
    #: Versions merged into this model (one for a per-version model).
    versions: tuple[str, ...]
    source_path: str
    sha256: str
    definitions: dict[str, Definition] = field(default_factory=dict)
    methods: list[MethodDef] = field(default_factory=list)

    def struct(self, name: str) -> StructDef | None:
        d = self.definitions.get(name)
        return d if isinstance(d, StructDef) else None
