"""Tool signatures: JSON schemas from Python functions, and argument binding.

This is the machinery behind ``@server.tool()`` (MCP 2025-11-25, ``server/tools.mdx``
§Tool, §Structured Content, §Output Schema). Everything is built once, when the tool is
declared:

* a msgspec Struct type is generated (``msgspec.defstruct``) with one field per tool
  parameter, so validating and converting a ``tools/call`` ``arguments`` object is a
  single ``msgspec.convert`` call;
* ``inputSchema`` is a JSON Schema 2020-12 object produced by
  ``msgspec.json.schema_components``: ``{"type": "object", "properties": ...,
  "required": [...], "additionalProperties": false, "$defs": ...}``, with references of
  the form ``#/$defs/<name>``;
* ``outputSchema`` comes from the return annotation. The MCP schema restricts output
  schemas to ``"type": "object"`` at the root, so a return type whose schema is not an
  object (``int``, ``str``, ``list[X]``, ``X | None``, unions, array-like Structs...) is
  wrapped as ``{"type": "object", "properties": {"result": <schema>}, "required":
  ["result"]}`` and its structured content is ``{"result": <value>}``, as other MCP
  SDKs do. Structs, dataclasses, TypedDicts and ``dict[str, X]`` are used as-is.

Decisions worth knowing:

* Unknown arguments are rejected (``"additionalProperties": false`` in the schema, and
  ``Object contains unknown field ...`` from :meth:`ToolSignature.bind`) so that a model
  misspelling an optional parameter gets told instead of being silently ignored. Pass
  ``allow_extra=True`` to ignore them (the schema then omits ``additionalProperties``).
  A tool without parameters gets ``{"type": "object", "additionalProperties": false}``,
  the form the spec recommends.
* Parameters with a default are not required; the property carries ``"default"`` when
  the default value is JSON-serializable. When an argument is absent the function's own
  default object is passed (the very same object, as a Python call would).
* Validation is strict, like JSON itself: no ``"1"`` -> ``1`` coercion. One known
  divergence from JSON Schema: for an ``int`` parameter JSON Schema accepts ``1.0``
  (``"integer"`` means "a number with zero fractional part"), :meth:`ToolSignature.bind`
  rejects it. Conversely ``bind`` may be stricter on ``format`` (uuid, date-time...) and
  laxer on ``uniqueItems`` (a ``set`` parameter de-duplicates).
* ``Annotated[T, "text"]`` is shorthand for ``Annotated[T, msgspec.Meta(description=
  "text")]``; an explicit ``Meta(description=...)`` wins over the string.
* ``datetime``/``time`` parameters get ``"format": "date-time"``/``"time"`` (``date`` and
  ``timedelta`` already have ``"date"``/``"duration"``); the formats are annotations for the
  model, ``bind`` also accepts a datetime or time without a UTC offset.
* ``pathlib`` paths are strings (``{"type": "string", "minLength": 1}``), bound to the
  annotated path class; returned paths become strings.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, NoReturn, get_args, get_origin

import msgspec
import msgspec.inspect as mi
from msgspec.structs import asdict

from .._lazy import LazyModule

if TYPE_CHECKING:
    import json
else:  # imported at first use, not with mcpbind (issue 15, cold start)
    json = LazyModule("json", globals())

__all__ = [
    "SkipPredicate",
    "encode_hook",
    "ToolArgumentsError",
    "ToolOutputError",
    "ToolSignature",
    "is_valid_tool_name",
]

_REF_TEMPLATE: Final = "#/$defs/{name}"
_REF_PREFIX: Final = "#/$defs/"
_TOOL_NAME_RE: Final = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
# msgspec error messages end with " - at `$.path`" (or " - at `key` in `$.path`").
_PATH_RE: Final = re.compile(r" - at (?:`key` in )?`(\$[^`]*)`$")
_MUTABLE_DEFAULTS: Final = (list, dict, set, bytearray)
_NO_OUTPUT: Final[tuple[Any, ...]] = (None, type(None), Any, NoReturn, typing.Never)

# Formats msgspec leaves out (it accepts values without a UTC offset, which RFC 3339 wants).
_FORMATS: Final = ((datetime.datetime, "date-time"), (datetime.time, "time"))
_PATH_SCHEMA: Final = {"type": "string", "minLength": 1}

SkipPredicate = Callable[[inspect.Parameter], bool]


def _pure_path() -> type | None:
    """``pathlib.PurePath`` once pathlib is imported, else None: a path type or value exists
    only once its maker imported pathlib, so mcpbind never imports it (with ``urllib.parse``
    and ``ipaddress``, about 4 ms of a cold start; issue 15)."""
    pathlib = sys.modules.get("pathlib")
    return None if pathlib is None else pathlib.PurePath


def _is_path(tp: Any) -> bool:
    base = _pure_path()
    return base is not None and isinstance(tp, type) and issubclass(tp, base)


def _schema_hook(tp: Any) -> dict[str, Any]:
    if _is_path(tp):
        return dict(_PATH_SCHEMA)
    raise NotImplementedError


def _dec_hook(tp: Any, value: Any) -> Any:
    if _is_path(tp):
        if not isinstance(value, str):
            raise TypeError(f"Expected `str`, got `{type(value).__name__}`")
        if not value:
            raise ValueError("Expected a non-empty path")
        return tp(value)
    raise NotImplementedError


def encode_hook(value: Any) -> Any:
    """msgspec ``enc_hook`` for the values tool signatures add: paths become strings."""
    base = _pure_path()
    if base is not None and isinstance(value, base):
        return str(value)
    raise TypeError(f"Encoding objects of type {type(value).__name__} is unsupported")


def is_valid_tool_name(name: str) -> bool:
    """Whether ``name`` follows the spec's tool-name rules (§Tool Names, all SHOULDs).

    1 to 128 characters, only ASCII letters, digits, ``_``, ``-`` and ``.``.
    """
    return _TOOL_NAME_RE.fullmatch(name) is not None


def _error_path(message: str) -> str:
    m = _PATH_RE.search(message)
    return m.group(1) if m else "$"


class ToolArgumentsError(ValueError):
    """The ``arguments`` of a ``tools/call`` do not match the tool's parameters.

    ``message`` is msgspec's, e.g. ``"Expected `int`, got `str` - at `$.count`"``;
    ``path`` is the JSON path of the offending value (``"$"`` for the arguments object
    itself, e.g. for a missing required field or an unknown one).
    Per the spec this is a tool execution error (``isError: true``) the model can fix.
    """

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class ToolOutputError(ValueError):
    """A tool's return value does not match its declared return type (output schema)."""

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message)
        self.message = message
        self.path = path


def _prepare_annotation(annotation: Any) -> Any:
    """Turn ``Annotated[T, "text"]`` into ``Annotated[T, Meta(description="text")]`` and
    give ``datetime``/``time`` their JSON Schema format, wherever they are nested (``X |
    None``, ``list[...]``, ``dict[str, ...]``...).

    Only public typing APIs: ``get_origin``/``get_args`` to take a type apart, and
    subscription (``Annotated[...]``, ``Union[...]``, ``origin[...]``) to rebuild it.
    """
    origin = get_origin(annotation)
    if origin is None:
        for tp, fmt in _FORMATS:
            if annotation is tp:
                return Annotated[annotation, msgspec.Meta(extra_json_schema={"format": fmt})]
        return annotation
    if origin is Literal:
        return annotation
    args = get_args(annotation)
    if origin is Annotated:
        base, *extras = args
        new_base = _prepare_annotation(base)
        texts = [e for e in extras if isinstance(e, str)]
        if not texts and new_base is base:
            return annotation
        others = [e for e in extras if not isinstance(e, str)]
        # Earlier Meta entries are overridden by later ones: an explicit Meta wins.
        metadata = (msgspec.Meta(description=texts[0]), *others) if texts else tuple(others)
        return Annotated[(new_base, *metadata)]
    new_args = tuple(_prepare_annotation(a) for a in args)
    if all(new is old for new, old in zip(new_args, args, strict=True)):
        return annotation
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[new_args]  # noqa: UP007 - built from a tuple at run time
    return origin[new_args]


def _is_context(annotation: Any, context_type: type | None) -> bool:
    if context_type is None or annotation is inspect.Parameter.empty:
        return False
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    origin = get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return any(_is_context(a, context_type) for a in get_args(annotation))
    candidate = origin if origin is not None else annotation
    return isinstance(candidate, type) and issubclass(candidate, context_type)


def _json_value(value: Any) -> tuple[bool, Any]:
    """``(True, json_value)`` if ``value`` round-trips through JSON, else ``(False, None)``."""
    try:
        builtins = msgspec.to_builtins(value, str_keys=True, enc_hook=encode_hook)
        text = json.dumps(builtins, allow_nan=False)
    except (TypeError, ValueError):  # unsupported type, NaN or infinity
        return False, None
    return True, json.loads(text)


def _needs_str_keys(t: mi.Type) -> bool:
    """Whether ``t`` is a dict with non-``str`` keys (``msgspec.convert(str_keys=True)``)."""
    return isinstance(t, mi.DictType) and not isinstance(t.key_type, mi.StrType)


def _is_path_type(t: mi.Type) -> bool:
    """Whether ``t`` is a path (converted by ``_dec_hook``)."""
    return isinstance(t, mi.CustomType) and _is_path(t.cls)


def _contains(t: mi.Type, test: Callable[[mi.Type], bool], seen: set[int]) -> bool:
    """Whether ``test`` holds for ``t`` or a type within it. Used to pass ``str_keys`` and
    ``dec_hook`` to msgspec only when needed: any keyword makes ``convert`` much slower."""
    if id(t) in seen:
        return False
    seen.add(id(t))
    if test(t):
        return True
    for name in t.__struct_fields__:
        value = getattr(t, name)
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            sub = item.type if isinstance(item, mi.Field) else item
            if isinstance(sub, mi.Type) and _contains(sub, test, seen):
                return True
    return False


def _check_type(t: Any) -> None:
    """Build msgspec's conversion info for ``t`` now; raises TypeError if unsupported."""
    with contextlib.suppress(msgspec.ValidationError):
        msgspec.convert(None, t)


def _referenced(node: Any, refs: set[str]) -> set[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            refs.add(ref[len(_REF_PREFIX) :])
        for value in node.values():
            _referenced(value, refs)
    elif isinstance(node, list):
        for value in node:
            _referenced(value, refs)
    return refs


def _first_paragraph(fn: Callable[..., Any]) -> str | None:
    target = fn.func if isinstance(fn, functools.partial) else fn
    doc = target.__doc__ if inspect.isroutine(target) else inspect.getdoc(target)
    if not doc:
        return None
    doc = inspect.cleandoc(doc)
    paragraph = re.split(r"\n\s*\n", doc, maxsplit=1)[0]
    return " ".join(paragraph.split()) or None


def _tool_name(fn: Callable[..., Any]) -> str:
    target = fn.func if isinstance(fn, functools.partial) else fn
    name = getattr(target, "__name__", None)
    return name if isinstance(name, str) else type(target).__name__


class ToolSignature:
    """Schemas and argument binding for one tool function; build with :meth:`from_function`.

    Attributes:
        name: the function's ``__name__`` (a default tool name).
        description: first paragraph of the docstring, whitespace-normalized, or None.
        input_schema: JSON Schema 2020-12 for ``arguments`` (root ``"type": "object"``).
        output_schema: JSON Schema for ``structuredContent``, or None.
        output_wrapped: True when the output schema wraps the return type in ``result``.
        parameters: names of the parameters filled from ``arguments``, in order.
        skipped: names of the parameters left for the caller to inject (e.g. the context).
    """

    __slots__ = (
        "_convert",
        "_return_type",
        "_validate_output",
        "description",
        "input_schema",
        "name",
        "output_schema",
        "output_wrapped",
        "parameters",
        "skipped",
    )

    name: str
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    output_wrapped: bool
    parameters: tuple[str, ...]
    skipped: tuple[str, ...]
    _convert: _Binder
    _return_type: Any
    _validate_output: bool

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        skip: Collection[str] | SkipPredicate = (),
        context_type: type | None = None,
        allow_extra: bool = False,
        structured_output: bool | None = None,
        validate_output: bool = False,
    ) -> ToolSignature:
        """Inspect ``fn`` once and build everything needed to call it as a tool.

        Args:
            fn: the tool handler (function, coroutine function, bound method,
                ``functools.partial`` or callable object).
            skip: parameter names (missing ones are ignored), or a predicate receiving
                each ``inspect.Parameter`` (annotation already resolved), for parameters
                that are not tool arguments; they are listed in ``skipped``.
            context_type: parameters annotated with this type (or a subclass, a
                parametrization of it, ``Annotated`` or ``X | None`` of it) are skipped.
            allow_extra: ignore unknown arguments instead of rejecting them.
            structured_output: None derives an output schema from the return annotation
                when possible (no annotation, ``None``, ``Any`` and unsupported types
                give none); False never produces one; True requires one (TypeError
                otherwise).
            validate_output: make :meth:`structured` check the returned value against the
                return type (raises :class:`ToolOutputError`). Costs a conversion per call.

        Raises:
            TypeError: ``*args``/``**kwargs``/positional-only parameters, unresolvable
                annotations, or parameter types msgspec cannot validate or describe.
        """
        name = _tool_name(fn)
        try:
            sig = inspect.signature(fn, eval_str=True)
        except NameError as exc:
            raise TypeError(f"tool `{name}`: cannot resolve annotations: {exc}") from exc

        params: list[tuple[str, Any, Any]] = []  # (name, annotation, default)
        skipped: list[str] = []
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                star = "*" if p.kind is p.VAR_POSITIONAL else "**"
                raise TypeError(
                    f"tool `{name}`: {star}{p.name} is not supported; "
                    "tool arguments are a JSON object with named properties"
                )
            if p.kind is p.POSITIONAL_ONLY:
                raise TypeError(
                    f"tool `{name}`: positional-only parameter `{p.name}` is not supported"
                )
            is_skipped = skip(p) if callable(skip) else p.name in skip
            if is_skipped or _is_context(p.annotation, context_type):
                skipped.append(p.name)
                continue
            if p.name.startswith("__") and p.name.endswith("__"):
                raise TypeError(f"tool `{name}`: parameter name `{p.name}` is reserved")
            annotation = Any if p.annotation is p.empty else _prepare_annotation(p.annotation)
            params.append((p.name, annotation, p.default))

        self = cls.__new__(cls)
        self.name = name
        self.description = _first_paragraph(fn)
        self.parameters = tuple(p[0] for p in params)
        self.skipped = tuple(skipped)
        self.input_schema = _input_schema(name, params, allow_extra)
        self._convert = _build_converter(name, params, allow_extra)
        self._return_type = None
        self._validate_output = validate_output
        self.output_schema = None
        self.output_wrapped = False
        if structured_output is not False:
            returns = _prepare_annotation(sig.return_annotation)
            self._init_output(name, returns, required=bool(structured_output))
        return self

    def _init_output(self, name: str, annotation: Any, *, required: bool) -> None:
        if annotation is inspect.Signature.empty or any(annotation is t for t in _NO_OUTPUT):
            if required:
                raise TypeError(f"tool `{name}`: structured output needs a return annotation")
            return
        try:
            (root,), components = msgspec.json.schema_components(
                (annotation,), schema_hook=_schema_hook, ref_template=_REF_TEMPLATE
            )
            if self._validate_output:
                _check_type(annotation)
        except TypeError as exc:
            if required:
                raise TypeError(f"tool `{name}`: return type not supported: {exc}") from exc
            return
        defs = dict(components)
        ref = root.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            # Inline the referenced definition at the root (kept in $defs if recursive).
            def_name = ref[len(_REF_PREFIX) :]
            siblings = {k: v for k, v in root.items() if k != "$ref"}
            root = {**defs[def_name], **siblings}
            if def_name not in _referenced(root, set()) | _referenced(
                [v for k, v in defs.items() if k != def_name], set()
            ):
                del defs[def_name]
        wrapped = root.get("type") != "object"
        schema: dict[str, Any]
        if wrapped:
            schema = {"type": "object", "properties": {"result": root}, "required": ["result"]}
        else:
            schema = dict(root)
        if defs:
            schema["$defs"] = defs
        self.output_schema = schema
        self.output_wrapped = wrapped
        self._return_type = annotation

    def bind(self, arguments: Mapping[str, Any] | msgspec.Raw | None) -> dict[str, Any]:
        """Validate ``arguments`` (decoded JSON) and return the keyword arguments for ``fn``.

        Skipped parameters are not included. Absent optional parameters get the
        function's default value.

        Raises:
            ToolArgumentsError: with msgspec's message and the offending path.
        """
        try:
            if arguments is None:
                return self._convert({})
            if isinstance(arguments, msgspec.Raw):
                return self._convert.from_json(arguments)  # one decode, into the struct
            if type(arguments) is not dict and isinstance(arguments, Mapping):
                arguments = dict(arguments)
            return self._convert(arguments)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            message = str(exc)
            raise ToolArgumentsError(message, _error_path(message)) from None

    def structured(self, value: Any) -> dict[str, Any] | None:
        """The ``structuredContent`` for a return value, or None without an output schema.

        The value is converted with ``msgspec.to_builtins`` (Structs, dataclasses, enums,
        datetimes... become JSON values) and wrapped as ``{"result": ...}`` when
        ``output_wrapped``.

        Raises:
            ToolOutputError: the value does not match the return type (non-object value
                for an object schema; any mismatch when ``validate_output`` is set).
        """
        if self.output_schema is None:
            return None
        builtins = msgspec.to_builtins(value, str_keys=True, enc_hook=encode_hook)
        if self._validate_output:
            try:
                msgspec.convert(builtins, self._return_type, str_keys=True, dec_hook=_dec_hook)
            except msgspec.ValidationError as exc:
                message = str(exc)
                raise ToolOutputError(message, _error_path(message)) from None
        if self.output_wrapped:
            return {"result": builtins}
        if not isinstance(builtins, dict):
            got = type(value).__name__
            raise ToolOutputError(f"Expected an object for the structured result, got `{got}`")
        return builtins

    def __repr__(self) -> str:
        return f"<ToolSignature {self.name}({', '.join(self.parameters)})>"


def _input_schema(
    name: str, params: list[tuple[str, Any, Any]], allow_extra: bool
) -> dict[str, Any]:
    try:
        roots, components = msgspec.json.schema_components(
            [p[1] for p in params], schema_hook=_schema_hook, ref_template=_REF_TEMPLATE
        )
    except TypeError:
        for pname, annotation, _ in params:  # find the culprit for a better message
            try:
                msgspec.json.schema(annotation, schema_hook=_schema_hook)
            except TypeError as exc:
                raise TypeError(
                    f"tool `{name}`: parameter `{pname}`: type not supported: {exc}"
                ) from exc
        raise
    properties: dict[str, Any] = {}
    required: list[str] = []
    for (pname, _, default), prop in zip(params, roots, strict=True):
        prop = dict(prop)
        if default is inspect.Parameter.empty:
            required.append(pname)
        else:
            ok, value = _json_value(default)
            if ok:
                prop["default"] = value
        properties[pname] = prop
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required
    if not allow_extra:
        schema["additionalProperties"] = False
    if components:
        schema["$defs"] = dict(components)
    return schema


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def _build_converter(name: str, params: list[tuple[str, Any, Any]], allow_extra: bool) -> _Binder:
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for pname, annotation, default in params:
        if default is inspect.Parameter.empty:
            fields.append((pname, annotation))
        elif isinstance(default, _MUTABLE_DEFAULTS):
            # msgspec copies (or refuses) mutable defaults; Python passes the same object.
            fields.append((pname, annotation, msgspec.field(default_factory=_constant(default))))
        else:
            fields.append((pname, annotation, default))
    struct = msgspec.defstruct(
        f"{name}_arguments", fields, kw_only=True, forbid_unknown_fields=not allow_extra
    )
    try:
        _check_type(struct)
    except TypeError as exc:
        raise TypeError(f"tool `{name}`: parameters not supported: {exc}") from exc
    info = mi.type_info(struct)
    return _Binder(
        struct, _contains(info, _needs_str_keys, set()), _contains(info, _is_path_type, set())
    )


class _Binder:
    """Arguments -> validated keyword arguments, through one generated Struct."""

    __slots__ = ("_decode", "_options", "_struct")

    def __init__(self, struct: type[msgspec.Struct], str_keys: bool, paths: bool) -> None:
        self._struct = struct
        # Keyword arguments make msgspec.convert much slower: pass none unless needed.
        self._options: dict[str, Any] = {}
        if str_keys:
            self._options["str_keys"] = True
        if paths:
            self._options["dec_hook"] = _dec_hook
        # Raw JSON from the wire decodes straight into the struct: no intermediate dict.
        hook = _dec_hook if paths else None
        self._decode = msgspec.json.Decoder(struct, dec_hook=hook).decode

    def __call__(self, arguments: Any) -> dict[str, Any]:
        if self._options:
            return asdict(msgspec.convert(arguments, self._struct, **self._options))
        return asdict(msgspec.convert(arguments, self._struct))

    def from_json(self, data: msgspec.Raw) -> dict[str, Any]:
        return asdict(self._decode(data))
