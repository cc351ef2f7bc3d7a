"""The usual 2026-07-28 request read without decoding its ``_meta`` again.

Every 2026-07-28 request carries its protocol fields in ``params._meta`` (basic/index.mdx,
General fields), and a client sends the same ``_meta`` on request after request. Decoding
that object (its keys are longer than msgspec caches) and checking its fields cost more than
the rest of a ``tools/call``'s params. So the usual request is decoded into a *wire view* of
its params type: the same fields with the same names and types, but ``_meta`` kept as raw
JSON. The raw ``_meta`` is then looked up among the few this era has checked before
(:class:`KnownMetas`); a new one is decoded and checked once, and remembered when it holds
nothing but the protocol fields (a ``progressToken`` or a key of the caller's own makes it
per-request). The handler gets its own copy of the ``_meta`` object (the context copies
``RequestMeta.raw``); the objects inside it
(the client's capabilities and info) are shared by the requests that sent the same bytes, as
a handshake-era session's client capabilities are shared by its requests: read them, don't
change them.

A view becomes the real params (:meth:`WireParams.materialize`, a decode of the original
bytes) for every handler but the server's own ``tools/call``, which reads only the tool's
name and arguments.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import msgspec
from msgspec import UNSET, UnsetType

from mcpbind_types._common import decoder

from .errors import INVALID_PARAMS, McpError, validation_message
from .meta import RequestMeta, usual_request_meta

__all__ = ["KnownMetas", "WireParams", "wire_decoder"]

_PROTOCOL_PREFIX: Final = "io.modelcontextprotocol/"

_MAX_KNOWN: Final = 8
"""Distinct ``_meta`` objects remembered per era (one per client implementation and version,
usually one)."""


class WireParams(msgspec.Struct, kw_only=True, gc=False, omit_defaults=True):
    """A request's params with ``_meta`` raw (see the module docstring); one subclass per
    params type, made by :func:`wire_decoder`."""

    real_type: ClassVar[type[msgspec.Struct]]
    """The params type this is a view of."""

    meta: msgspec.Raw | UnsetType = msgspec.field(default=UNSET, name="_meta")

    def materialize(self) -> Any:
        """The real params, validated by the real type: the view's fields encoded again
        (``_meta`` and the raw fields as they came) and decoded as that type."""
        try:
            return decoder(self.real_type).decode(msgspec.json.encode(self))
        except msgspec.ValidationError as exc:  # as decode_params says it
            message = f"Invalid params: {validation_message(exc, 'params')}"
            raise McpError(INVALID_PARAMS, message) from None


_WIRE_DECODERS: dict[type, msgspec.json.Decoder[Any] | None] = {}


def wire_decoder(params_type: Any) -> msgspec.json.Decoder[Any] | None:
    """The decoder of ``params_type``'s wire view (``None``: a type without ``_meta``, or
    not a Struct), made once per type."""
    try:
        return _WIRE_DECODERS[params_type]
    except KeyError:
        pass
    found = None
    if isinstance(params_type, type) and issubclass(params_type, msgspec.Struct):
        infos = msgspec.structs.fields(params_type)
        config = params_type.__struct_config__
        if any(f.name == "meta" and f.encode_name == "_meta" for f in infos):
            fields: list[tuple[str, Any, Any]] = []
            for f in infos:
                if f.name == "meta":
                    continue
                if f.name in ("materialize", "real_type"):
                    break  # a field named like the view's own: no view
                if f.required:
                    spec = msgspec.field(name=f.encode_name)
                elif f.default_factory is not msgspec.NODEFAULT:
                    spec = msgspec.field(default_factory=f.default_factory, name=f.encode_name)
                else:
                    spec = msgspec.field(default=f.default, name=f.encode_name)
                fields.append((f.name, f.type, spec))
            else:
                view: Any = msgspec.defstruct(
                    f"{params_type.__name__}WireView",
                    fields,
                    bases=(WireParams,),
                    kw_only=True,
                    gc=False,
                    forbid_unknown_fields=config.forbid_unknown_fields,
                    module=__name__,
                )
                view.real_type = params_type
                found = msgspec.json.Decoder(view)
    _WIRE_DECODERS[params_type] = found
    return found


class KnownMetas:
    """The checked ``_meta`` objects an era has seen, by their raw bytes (a handful, each
    compared in one ``memcmp``)."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: list[tuple[msgspec.Raw, RequestMeta]] = []

    def lookup(self, raw: msgspec.Raw) -> RequestMeta | None:
        """The checked ``_meta`` that ``raw`` holds (shared: its ``raw`` dict is copied before
        a handler sees it); ``None`` for one that is not well-formed (the caller takes the
        path that says why)."""
        for seen, parsed in self._entries:
            if seen == raw:
                return parsed
        try:
            meta = msgspec.json.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            return None
        found = usual_request_meta(meta) if type(meta) is dict else None
        if found is not None and all(key.startswith(_PROTOCOL_PREFIX) for key in meta):
            if len(self._entries) >= _MAX_KNOWN:
                del self._entries[0]
            # Own bytes: the request's buffer is not kept alive by the entry.
            self._entries.append((msgspec.Raw(bytes(raw)), found))
        return found
