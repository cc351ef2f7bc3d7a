"""What every generated module shares, and the seam the runtime plugs into.

Hand-written, not generated: the one source of these helpers, kept beside the generated modules
(as lsprotocol keeps ``_hooks.py``). Every generated module imports it as
``mcpbind_types._common``, also the packages ``mcpbind_codegen generate`` writes elsewhere, so
their stubs and method tables plug into the same runtime. ``make gen`` never writes it and
``make gen-check`` never compares it.

- ``untagged_union``: msgspec decodes tagged unions natively; for the few unions the schema leaves
  untagged (text vs blob contents, JSON-RPC messages, ...) the field's runtime type is a marker
  class resolved by ``dec_hook``: by a discriminating key where the spec defines one, else by
  the member that decodes with no key left over.
- ``decoder``: one msgspec decoder per type, built on first use and reused.
- ``MethodInfo``: one row of a method table, typed by its params and result.
- ``RequestSender``: the abstract ``send_request``/``send_notification`` that the generated stubs
  funnel into and the runtime implements.
"""

from __future__ import annotations

import abc
import functools
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeAlias, TypeVar

import msgspec
import msgspec.inspect
from msgspec import UNSET, UnsetType

__all__ = [
    "UNSET",
    "JSONObjectRaw",
    "JSONValueRaw",
    "Discriminator",
    "MethodInfo",
    "ProgressCallback",
    "RequestOptions",
    "RequestSender",
    "UnsetType",
    "check_object",
    "convert",
    "dec_hook",
    "decode",
    "decoder",
    "encode",
    "join_error_path",
    "json_object",
    "json_value",
    "present_fields",
    "raw_repr",
    "untagged_union",
]

P = TypeVar("P")
R = TypeVar("R")
T = TypeVar("T")
_MISSING: Any = object()


if TYPE_CHECKING:
    JSONObjectRaw: TypeAlias = dict[str, Any] | msgspec.Raw
    JSONValueRaw: TypeAlias = Any
else:
    JSONObjectRaw = msgspec.Raw
    JSONValueRaw = msgspec.Raw
"""Free-form JSON the protocol carries but mcpbind does not look into (tool schemas, arguments,
structured content). Build it from a ``dict`` (or any JSON value); a decoded message holds the
raw JSON (``msgspec.Raw``): read it with :func:`json_object` / :func:`json_value`, or forward it
as is without it ever becoming Python objects."""

_OBJECT_DECODER = msgspec.json.Decoder(dict[str, Any])
_ENCODER = msgspec.json.Encoder()


_KIND_OF_FIRST_BYTE = {
    ord("["): "array",
    ord('"'): "str",
    ord("t"): "bool",
    ord("f"): "bool",
    ord("n"): "null",
}


def check_object(value: Any, wire_name: str) -> None:
    """Run on decode (``__post_init__``): a raw JSON object field must hold an object."""
    if isinstance(value, msgspec.Raw):
        first = memoryview(value)[:1].tobytes()
        if first != b"{":
            got = _KIND_OF_FIRST_BYTE.get(first[0], "number") if first else "nothing"
            raise ValueError(f"Expected `object`, got `{got}` at `.{wire_name}`")


def present_fields(obj: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The named attributes of ``obj`` that are set (not ``UNSET``), as keyword arguments."""
    return {n: v for n in names if (v := getattr(obj, n)) is not UNSET}


def raw_repr(self: Any) -> str:
    """``__repr__`` of a struct with raw JSON fields: msgspec's own form (defaults left out),
    each ``msgspec.Raw`` shown as its JSON text, ``Raw('{"a":1}')``, not ``<msgspec.Raw object
    at 0x...>``."""
    omit = self.__struct_config__.repr_omit_defaults
    parts = []
    for field in msgspec.structs.fields(self):
        value = getattr(self, field.name)
        if omit and _is_default(value, field):
            continue
        parts.append(f"{field.name}={_raw_text(value)}")
    return f"{type(self).__name__}({', '.join(parts)})"


def _is_default(value: Any, field: msgspec.structs.FieldInfo) -> bool:
    if field.default is not msgspec.NODEFAULT:
        return value is field.default or (
            type(value) is type(field.default) and value == field.default
        )
    if field.default_factory is not msgspec.NODEFAULT:
        return bool(value == field.default_factory())
    return False


def _raw_text(value: Any) -> str:
    if isinstance(value, msgspec.Raw):
        return f"Raw({bytes(value).decode('utf-8', 'replace')!r})"
    if type(value) is dict:
        return "{" + ", ".join(f"{k!r}: {_raw_text(v)}" for k, v in value.items()) + "}"
    if type(value) is list:
        return "[" + ", ".join(_raw_text(v) for v in value) + "]"
    return repr(value)


def json_value(value: Any) -> Any:
    """The Python value of a :data:`JSONValueRaw` (decoding it if it is raw JSON)."""
    return msgspec.json.decode(value) if isinstance(value, msgspec.Raw) else value


def json_object(value: dict[str, Any] | msgspec.Raw) -> dict[str, Any]:
    """The ``dict`` of a :data:`JSONObjectRaw` value (decoding it if it is raw JSON)."""
    if isinstance(value, msgspec.Raw):
        decoded: dict[str, Any] = _OBJECT_DECODER.decode(value)
        return decoded
    return value


# The small records below are msgspec Structs, not dataclasses: defining a dataclass compiles
# generated source at import time (about 30 times the cost of a Struct), and this module is
# imported by everything.
class Discriminator(msgspec.Struct, frozen=True):
    """Pick a union member by the value of one key; ``default`` when absent or unknown."""

    field: str
    by_value: tuple[tuple[object, str], ...]
    default: str | None


class _UntaggedUnion(abc.ABC):
    __mcpbind_members__: ClassVar[Callable[[], tuple[Any, ...]]]
    __mcpbind_discriminator__: ClassVar[Discriminator | None]
    __mcpbind_table__: ClassVar[tuple[tuple[str, Any, frozenset[str] | None], ...] | None] = None

    @classmethod
    def _table(cls) -> tuple[tuple[str, Any, frozenset[str] | None], ...]:
        table = cls.__mcpbind_table__
        if table is None:
            rows = []
            for tp in cls.__mcpbind_members__():
                runtime = getattr(tp, "__origin__", tp)
                if isinstance(runtime, type):
                    cls.register(runtime)
                keys: frozenset[str] | None = None
                if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
                    info = tp.__struct_config__
                    names = {f.encode_name for f in msgspec.structs.fields(tp)}
                    if isinstance(info.tag_field, str):
                        names.add(info.tag_field)
                    keys = frozenset(names)
                rows.append((getattr(tp, "__name__", repr(tp)), tp, keys))
            table = cls.__mcpbind_table__ = tuple(rows)
        return table

    @classmethod
    def _by_value(cls) -> dict[object, str]:
        cached: dict[object, str] | None = cls.__dict__.get("_by_value_cache")
        if cached is None:
            disc = cls.__mcpbind_discriminator__
            cached = dict(disc.by_value) if disc is not None else {}
            cls._by_value_cache = cached  # type: ignore[attr-defined]
        return cached

    @classmethod
    def _members_by_name(cls) -> dict[str, Any]:
        cached: dict[str, Any] | None = cls.__dict__.get("_by_name_cache")
        if cached is None:
            cached = {name: tp for name, tp, _ in cls._table()}
            cls._by_name_cache = cached  # type: ignore[attr-defined]
        return cached

    @classmethod
    def __mcpbind_resolve__(cls, obj: Any) -> Any:
        table = cls._table()
        disc = cls.__mcpbind_discriminator__
        if disc is not None and isinstance(obj, dict):
            value = obj.get(disc.field, _MISSING)
            by_value = cls._by_value()
            wanted = by_value.get(value) if value is not _MISSING else None
            if wanted is None and value is not _MISSING:
                wanted = by_value.get("*")
            member = cls._members_by_name().get(wanted or disc.default or "")
            if member is not None:
                return _convert_member(obj, member, wanted or disc.default or "")
        best: tuple[int, Any] | None = None
        errors: list[str] = []
        for name, tp, keys in table:
            try:
                value = _convert(obj, tp)
            except msgspec.ValidationError as exc:
                errors.append(f"{name}: {_relative(exc)}")
                continue
            if keys is None or not isinstance(obj, dict):
                return value
            lost = sum(1 for k in obj if k not in keys)
            if lost == 0:
                return value
            if best is None or lost < best[0]:
                best = (lost, value)
        if best is not None:
            return best[1]
        raise ValueError(f"matches no variant of `{cls.__name__}` ({'; '.join(errors)})")


@functools.cache
def _needs_hook(tp: Any) -> bool:
    """Whether converting to ``tp`` can meet one of our union markers (msgspec.convert is
    several times slower with a ``dec_hook`` argument, so it is passed only when needed)."""
    seen: set[int] = set()

    def walk(node: Any) -> bool:
        if id(node) in seen:
            return False
        seen.add(id(node))
        if isinstance(node, msgspec.inspect.CustomType):
            return True
        if isinstance(node, msgspec.inspect.Type):
            for value in vars(node).values() if hasattr(node, "__dict__") else ():
                if walk(value):
                    return True
            for name in getattr(type(node), "__struct_fields__", ()):
                if walk(getattr(node, name)):
                    return True
        elif isinstance(node, tuple | list):
            return any(walk(item) for item in node)
        elif isinstance(node, msgspec.inspect.Field):
            return walk(node.type)
        return False

    return walk(msgspec.inspect.type_info(tp))


def _convert(obj: Any, tp: Any) -> Any:
    try:
        if _needs_hook(tp):
            return msgspec.convert(obj, tp, dec_hook=dec_hook)
        return msgspec.convert(obj, tp)
    except msgspec.ValidationError as exc:
        if "Expected `raw`" not in str(exc):
            raise
    # A member with raw-JSON fields cannot be built from decoded builtins: go back to JSON.
    return decoder(tp).decode(_ENCODER.encode(obj))


# Patterns of error messages only: compiled on first use (re caches them), not at import.
_AT = r"^(?P<msg>.*?) - at `\$(?P<path>[^`]*)`$"
_SPLIT = r"^(?P<msg>.*?) at `(?P<rel>[.\[][^`]*)`(?P<tail>.*?) - at `(?P<abs>\$[^`]*)`$"
_ROOTED = r"^(?P<msg>.*?) at `(?P<rel>[.\[][^`]*)`(?P<tail>[^`]*)$"


def _relative(exc: Exception) -> str:
    """msgspec's message with its ``- at `$.x``` turned into `` at `.x``` (relative to here)."""
    m = re.match(_AT, str(exc), re.DOTALL)
    if m is None:
        return str(exc)
    return f"{m['msg']} at `{m['path']}`" if m["path"] else m["msg"]


def join_error_path(message: str) -> str:
    """Join the two halves of a path that msgspec reports for errors raised inside a hook or a
    ``__post_init__`` ("X at `.a` - at `$.b`" -> "X - at `$.b.a`"); other messages unchanged."""
    m = re.match(_SPLIT, message, re.DOTALL)
    if m is not None:
        return f"{m['msg']}{m['tail']} - at `{m['abs']}{m['rel']}`"
    m = re.match(_ROOTED, message, re.DOTALL)  # raised at the top level: msgspec adds no "- at `$`"
    if m is not None:
        return f"{m['msg']}{m['tail']} - at `${m['rel']}`"
    return message


def _convert_member(obj: Any, tp: Any, name: str) -> Any:
    try:
        return _convert(obj, tp)
    except msgspec.ValidationError as exc:
        # A ValueError lets msgspec append where this union sits; the member's own path comes
        # first, relative ("at `.message`"): join_error_path() makes one path of the two.
        raise ValueError(f"{_relative(exc)} (as `{name}`)") from None


def untagged_union(
    name: str, members: Callable[[], tuple[Any, ...]], discriminator: Discriminator | None
) -> type:
    """The runtime stand-in for an untagged union type alias (see module docstring)."""
    return type(
        name,
        (_UntaggedUnion,),
        {
            "__mcpbind_members__": staticmethod(members),
            "__mcpbind_discriminator__": discriminator,
            "__module__": __name__,
        },
    )


def dec_hook(tp: Any, obj: Any) -> Any:
    """msgspec's hook for types it cannot decode itself: our untagged-union markers."""
    resolve = getattr(tp, "__mcpbind_resolve__", None)
    if resolve is None:
        raise NotImplementedError(f"cannot decode type {tp!r}")
    return resolve(obj)


@functools.cache
def decoder(tp: Any) -> msgspec.json.Decoder[Any]:
    """The one JSON decoder for ``tp``, built on first use."""
    return msgspec.json.Decoder(tp, dec_hook=dec_hook)


def decode(data: bytes | str, tp: type[T]) -> T:
    """Decode JSON into ``tp`` with the cached decoder."""
    dec: msgspec.json.Decoder[Any] = decoder(tp)  # type: ignore[arg-type]  # types hash
    result: T = dec.decode(data)
    return result


def convert(obj: Any, tp: type[T]) -> T:
    """Convert already-decoded builtins (e.g. a ``dict``) into ``tp``."""
    result: T = msgspec.convert(obj, tp, dec_hook=dec_hook)
    return result


def encode(obj: Any) -> bytes:
    """Encode any generated type (or builtins) to JSON bytes."""
    return _ENCODER.encode(obj)


class MethodInfo(msgspec.Struct, Generic[P, R], frozen=True, kw_only=True):
    """One row of a method table. ``P`` and ``R`` type the stubs; the fields drive the runtime."""

    method: str
    direction: Literal["client_to_server", "server_to_client"]
    kind: Literal["request", "notification", "input_request"]
    message_type: Any
    params_type: Any
    params_required: bool
    result_type: Any
    #: What ``result`` decodes as on the wire (wider than ``result_type`` for MRTR methods).
    wire_result_type: Any
    #: Whose declared capabilities gate the method, and the path inside them.
    capability_owner: Literal["client", "server"] | None
    capability: tuple[str, ...] | None
    versions: tuple[str, ...]


ProgressCallback = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""``(progress, total, message)``, awaited for each progress notification of a request."""


class RequestOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Per-call options a stub passes through to the runtime."""

    timeout: float | None = None
    on_progress: ProgressCallback | None = None
    reset_timeout_on_progress: bool = False
    max_total_timeout: float | None = None


class RequestSender(abc.ABC):
    """The funnel of every generated stub; the runtime's Client and Server implement it."""

    __slots__ = ()

    @abc.abstractmethod
    async def send_request(
        self, method: MethodInfo[P, R], params: P | None, options: RequestOptions | None = None
    ) -> R:
        """Send a request and wait for its typed result."""

    @abc.abstractmethod
    async def send_notification(self, method: MethodInfo[P, None], params: P | None) -> None:
        """Send a notification."""
