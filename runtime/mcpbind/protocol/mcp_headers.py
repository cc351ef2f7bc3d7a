"""Request metadata headers of the 2026-07-28 Streamable HTTP transport (streamable-http.mdx,
Request Metadata): ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and the
``Mcp-Param-{Name}`` headers a tool's ``x-mcp-header`` parameters are mirrored into -- the one
encoder and decoder of these values, for the client and the server.

Client side (§Custom Headers from Tool Parameters): ``header_paths`` validates a tool's
annotations (a tool that breaks them is left out of ``tools/list``), ``param_headers`` builds
a call's ``Mcp-Param-*`` headers. Server side (Server Validation): intermediaries route on
these headers while the server executes the body, so the server refuses any disagreement
between the two: ``check_headers`` returns the reason, the caller answers 400 with
``HeaderMismatch`` (-32020).

Pure functions over already-decoded values (no I/O): it lives in the protocol core because
the client, which sits below the HTTP package, validates tool annotations too.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, Final

import msgspec

from .classify import ParamsPeek

__all__ = [
    "HeaderPath",
    "InvalidToolHeaders",
    "McpHeaders",
    "check_header_values",
    "check_headers",
    "decode_value",
    "encode_value",
    "header_params",
    "header_paths",
    "param_headers",
    "param_values",
]

HeaderPath = tuple[tuple[str, ...], str]
"""The property path from the arguments root, and the header's name part."""

_NAMED: Final = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension (SEP-2663 §Streamable HTTP: Routing Headers).
    "tasks/get": "task_id",
    "tasks/update": "task_id",
    "tasks/cancel": "task_id",
}
"""Methods whose ``Mcp-Name`` is required, and the params field it mirrors."""

_PREFIX: Final = "=?base64?"
_SUFFIX: Final = "?="
_SENTINEL: Final = len(_PREFIX) + len(_SUFFIX)
_OWS: Final = " \t"
_PARAM: Final = "mcp-param-"
_TCHAR: Final = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_PRIMITIVES: Final = frozenset({"string", "integer", "boolean"})
_SAFE_INT: Final = 2**53 - 1
_KEY: Final = "x-mcp-header"


class McpHeaders:
    """The ``mcp-*`` headers of one request (names lower-cased; a repeated one is recorded)."""

    __slots__ = ("repeated", "values")

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        values: dict[str, str] = {}
        repeated: set[str] = set()
        for name, value in raw:
            if name[:4].lower() != b"mcp-":
                continue
            key = name.decode("latin-1").lower()
            if key in values:
                repeated.add(key)
            values[key] = value.decode("latin-1")
        self.values = values
        self.repeated = repeated

    def get(self, name: str) -> str | None:
        return self.values.get(name)


def _safe(value: str) -> bool:
    """RFC 9110 field-value characters: visible ASCII, space, tab."""
    if value.isascii() and value.isprintable():  # visible ASCII and space: the usual case
        return True
    return all(c == "\t" or " " <= c <= "~" for c in value)


def decode_value(raw: str) -> str | None:
    """A header value as the body would hold it: OWS stripped, the Base64 sentinel decoded
    (strictly: padding, alphabet and canonical form checked, UTF-8). ``None`` when it is
    not valid."""
    value = raw.strip(_OWS)
    if not (value.isascii() and value.isprintable()) and not _safe(value):
        return None  # (visible ASCII and space, the usual case, is told without a call)
    if value.startswith(_PREFIX) and value.endswith(_SUFFIX) and len(value) >= _SENTINEL:
        inner = value[len(_PREFIX) : -len(_SUFFIX)]
        try:
            data = base64.b64decode(inner.encode("ascii"), validate=True)
            text = data.decode("utf-8")
        except (binascii.Error, ValueError):
            return None
        if base64.b64encode(data).decode("ascii") != inner:
            return None  # non-canonical (non-zero pad bits): decoders disagree on such text
        return text
    return value


def encode_value(value: str) -> str:
    """The header form of ``value`` (Value Encoding): as-is when it is plain printable ASCII
    without surrounding whitespace and not sentinel-shaped, else ``=?base64?...?=`` of its
    UTF-8."""
    plain = (
        value == value.strip(_OWS)
        and all(" " <= c <= "~" for c in value)
        and not (value.startswith(_PREFIX) and value.endswith(_SUFFIX))
    )
    if plain:
        return value
    return _PREFIX + base64.b64encode(value.encode("utf-8")).decode("ascii") + _SUFFIX


def header_params(schema: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """``(property path, header name)`` for every ``x-mcp-header`` statically reachable from the
    schema root through ``properties`` only (streamable-http.mdx, Schema Extension)."""
    if not isinstance(schema, Mapping):
        return
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for key, sub in properties.items():
        if not isinstance(sub, Mapping):
            continue
        name = sub.get("x-mcp-header")
        if isinstance(name, str) and name:
            yield (*path, key), name
        yield from header_params(sub, (*path, key))


def param_values(arguments: Any, path: tuple[str, ...]) -> Any:
    """The instance value at ``path`` in the call's arguments, or ``None`` when absent."""
    value = arguments
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _same(raw: str, decoded: str, body: Any) -> bool:
    """Header vs body value (Value Encoding, Type conversion). Only the canonical form
    matches, so an intermediary that parses the header differently cannot be fooled: a
    boolean is ``true``/``false``, an integer its decimal string (``50``, ``-7``: no
    ``+50``, ``050``, ``5_0``, ``5e1`` or ``50.0``), both plain text (never Base64); a string
    is compared after decoding (``decode_value`` refuses non-canonical Base64). The spec's
    SHOULD of comparing integers numerically (``42.0`` equal to ``42``) is not followed:
    clients MUST send the decimal form, and the numeric reading is what gateways disagree on.
    ``raw`` is the header with OWS stripped, ``decoded`` the same after ``decode_value``."""
    if isinstance(body, bool):
        return raw == ("true" if body else "false")
    if isinstance(body, float) and body.is_integer():
        body = int(body)  # JSON ``50.0`` is the integer 50 (JSON Schema); its form is ``50``
    if isinstance(body, int):
        return raw == str(body)
    if isinstance(body, str):
        return decoded == body
    return False  # fractions, objects, arrays cannot be mirrored


# ---------------------------------------------------------------------- client side
class InvalidToolHeaders(ValueError):
    """A tool whose ``x-mcp-header`` annotations break §Schema Extension (the reason)."""


def header_paths(schema: Any) -> list[HeaderPath]:
    """Every ``x-mcp-header`` of ``schema`` with its property path; raise
    ``InvalidToolHeaders`` when one is malformed, misplaced or duplicated."""
    found: list[HeaderPath] = []
    _walk(schema, (), True, found)
    seen: set[str] = set()
    for _, name in found:
        if name.lower() in seen:
            raise InvalidToolHeaders(f"x-mcp-header {name!r} is not unique (case-insensitive)")
        seen.add(name.lower())
    return found


def _walk(node: Any, path: tuple[str, ...], reachable: bool, out: list[HeaderPath]) -> None:
    """Visit every subschema; only ``properties`` chains from the root are ``reachable``."""
    if isinstance(node, list):
        for item in node:
            _walk(item, path, False, out)
        return
    if not isinstance(node, Mapping):
        return
    if _KEY in node:
        if not reachable or not path:
            where = "/".join(path) or "the schema root"
            raise InvalidToolHeaders(f"x-mcp-header at {where} is not reachable by properties")
        out.append((path, _check_annotation(node, path)))
    for key, value in node.items():
        if key == "properties" and isinstance(value, Mapping):
            for prop, sub in value.items():
                _walk(sub, (*path, str(prop)), reachable, out)
        elif key not in (_KEY, "const", "enum", "default", "examples"):
            _walk(value, path, False, out)


def _check_annotation(node: Mapping[str, Any], path: tuple[str, ...]) -> str:
    name = node[_KEY]
    where = ".".join(path)
    if not isinstance(name, str) or not name:
        raise InvalidToolHeaders(f"x-mcp-header of {where} must be a non-empty string")
    if not all(c in _TCHAR for c in name):
        raise InvalidToolHeaders(f"x-mcp-header {name!r} of {where} is not an HTTP token")
    kind = node.get("type")
    if not isinstance(kind, str) or kind not in _PRIMITIVES:
        raise InvalidToolHeaders(
            f"x-mcp-header {name!r} is on {where} of type {kind!r}; only string, integer "
            "and boolean parameters may be mirrored"
        )
    return name


def param_headers(paths: list[HeaderPath], arguments: Any) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers for one call; absent (or null) values are omitted."""
    headers: dict[str, str] = {}
    for path, name in paths:
        text = _as_text(param_values(arguments, path))
        if text is not None:
            headers[_PARAM + name.lower()] = encode_value(text)
    return headers


def _as_text(value: Any) -> str | None:
    """§Value Encoding, type conversion: strings as is, integers in decimal, booleans in
    lowercase; anything else (null, objects, fractions, unsafe integers) is not mirrored."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return str(value) if -_SAFE_INT <= value <= _SAFE_INT else None
    if isinstance(value, str):
        return value
    return None


# ---------------------------------------------------------------------- server side
_NO_PARAMS: Final = ParamsPeek()


def check_headers(
    headers: McpHeaders,
    protocol_header: str | None,
    method: str | None,
    params: ParamsPeek | None,
    mirrored: Callable[[str], Sequence[HeaderPath]] | None = None,
) -> str | None:
    """Why the headers disagree with the request (a ``HeaderMismatch`` message), or ``None``:
    :func:`check_header_values` of ``headers``."""
    version = None if params is None else params.meta_version
    return check_header_values(
        headers.values, headers.repeated, protocol_header, method, params, version, mirrored
    )


def check_header_values(
    values: Mapping[str, str],
    repeated: Collection[str],
    protocol_header: str | None,
    method: str | None,
    params: ParamsPeek | None,
    body_version: str | None,
    mirrored: Callable[[str], Sequence[HeaderPath]] | None = None,
) -> str | None:
    """Why the headers disagree with the request (a ``HeaderMismatch`` message), or ``None``.

    ``values``: the request's ``mcp-*`` headers (lower-cased names, latin-1), ``repeated``:
    those given more than once (as :class:`McpHeaders` holds them; a transport that read
    the headers for its own checks passes what it collected, building nothing more).

    ``method`` and ``params`` are the request's, as the classifier decoded them (``params``
    that are no object compare as absent: the dispatcher rejects such a request anyway, but
    never with unchecked headers); ``body_version``: its ``params.meta_version``, which the
    classifier has read already (``Classified.meta_version``). ``mirrored(name)``: for ``tools/call``, the
    ``x-mcp-header`` parameters of the named tool (``header_params`` of its input schema;
    empty when the tool is unknown), checked against the arguments.
    """
    if params is None:
        params = _NO_PARAMS
    if repeated:
        return f"Header mismatch: {min(repeated)} header given more than once"
    if protocol_header is None:
        return "Header mismatch: MCP-Protocol-Version header is required"
    if body_version is not None and protocol_header.strip(_OWS) != body_version:
        return (
            f"Header mismatch: MCP-Protocol-Version header value {protocol_header.strip()!r} "
            f"does not match body value {body_version!r}"
        )
    raw_method = values.get("mcp-method")
    if raw_method is None:
        return "Header mismatch: Mcp-Method header is required"
    header_method = raw_method.strip(_OWS)
    if header_method != method:
        return (
            f"Header mismatch: Mcp-Method header value {header_method!r} does not match "
            f"body value {method!r}"
        )
    field = _NAMED.get(method or "")
    if field is not None:
        raw_name = values.get("mcp-name")
        body_name = getattr(params, field)
        if raw_name is None:
            return "Header mismatch: Mcp-Name header is required for " + str(method)
        name = decode_value(raw_name)
        if name is None:
            return "Header mismatch: Mcp-Name header value is not a valid header value"
        if name != body_name:
            return (
                f"Header mismatch: Mcp-Name header value {name!r} does not match "
                f"body value {body_name!r}"
            )
    if method == "tools/call" and mirrored is not None and isinstance(params.name, str):
        paths = mirrored(params.name)
        if paths:
            return _check_params(values, params.arguments, paths)
    return None


def _check_params(
    values: Mapping[str, str], raw_arguments: msgspec.Raw, mirrored: Sequence[HeaderPath]
) -> str | None:
    arguments = msgspec.json.decode(raw_arguments)  # valid JSON: the whole body decoded
    for path, name in mirrored:
        key = _PARAM + name.lower()
        raw = values.get(key)
        value = param_values(arguments, path)
        if raw is None:
            if value is not None:
                return f"Header mismatch: Mcp-Param-{name} header is required (value in body)"
            continue
        decoded = decode_value(raw)
        if decoded is None:
            return (
                f"Header mismatch: Mcp-Param-{name} header value has invalid characters or Base64"
            )
        if value is None or not _same(raw.strip(_OWS), decoded, value):
            return (
                f"Header mismatch: Mcp-Param-{name} header value {decoded!r} does not match "
                f"body value {value!r}"
            )
    return None
