"""RFC 6570 syntax: parse a template into literals and expressions, and expand it (Appendix A)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from string import ascii_letters, digits
from typing import Final, TypeAlias
from urllib.parse import quote

__all__ = [
    "DEFAULT_MAX_TEMPLATE_LENGTH",
    "DEFAULT_MAX_URI_LENGTH",
    "DEFAULT_MAX_VARIABLES",
    "PCT_MALFORMED",
    "Expression",
    "UriTemplateError",
    "UriTemplateMatch",
    "UriTemplateValue",
    "VarSpec",
    "expand_expression",
    "parse_template",
]

DEFAULT_MAX_TEMPLATE_LENGTH: Final = 2048
DEFAULT_MAX_URI_LENGTH: Final = 8192
DEFAULT_MAX_VARIABLES: Final = 64

UriTemplateValue: TypeAlias = str | Sequence[str] | Mapping[str, str] | None
"""A value for :meth:`UriTemplate.expand`; ``None``, ``[]`` and ``{}`` are undefined."""

UriTemplateMatch: TypeAlias = dict[str, str | list[str]]
"""Variables recovered by :meth:`UriTemplate.match`: ``str``, or ``list[str]`` if exploded."""


class UriTemplateError(ValueError):
    """An invalid URI template, or values that the template cannot expand."""


_UNRESERVED: Final = frozenset(ascii_letters + digits + "-._~")
_RESERVED_STR: Final = ":/?#[]@!$&'()*+,;="
_RESERVED: Final = frozenset(_RESERVED_STR)
# RFC 6570 §2.1: literals are any character except CTL, SP, DQUOTE, "'", "%" (aside
# from pct-encoded), "<", ">", "\", "^", "`", "{", "|", "}".
_LITERAL_FORBIDDEN: Final = frozenset(" \"'<>\\^`{|}\x7f" + "".join(map(chr, range(0x20))))
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_RESERVED_OPERATORS: Final = frozenset("=,!@|")
_VARNAME: Final = re.compile(
    r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*"
)
_PREFIX_LENGTH: Final = re.compile(r"[1-9][0-9]{0,3}")
_PCT_TRIPLET: Final = re.compile(r"%[0-9A-Fa-f]{2}")
PCT_MALFORMED: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True, slots=True)
class _Operator:
    """One row of the RFC 6570 Appendix A table, plus the matcher's character class."""

    char: str
    first: str
    sep: str
    named: bool
    ifemp: str
    allow_reserved: bool
    match_chars: frozenset[str]  # ASCII characters a matched value run may contain


def _operator(
    char: str, first: str, sep: str, named: bool, ifemp: str, allow_reserved: bool, extra: str
) -> _Operator:
    chars = _UNRESERVED | {"%"} | set(extra) | (_RESERVED if allow_reserved else frozenset())
    return _Operator(char, first, sep, named, ifemp, allow_reserved, frozenset(chars))


_OPERATORS: Final[dict[str, _Operator]] = {
    "": _operator("", "", ",", False, "", False, ","),
    "+": _operator("+", "", ",", False, "", True, ""),
    "#": _operator("#", "#", ",", False, "", True, ""),
    ".": _operator(".", ".", ".", False, "", False, ","),
    "/": _operator("/", "/", "/", False, "", False, "/,"),
    ";": _operator(";", ";", ";", True, "", False, ";=,"),
    "?": _operator("?", "?", "&", True, "=", False, "&=,"),
    "&": _operator("&", "&", "&", True, "=", False, "&=,"),
}


@dataclass(frozen=True, slots=True)
class VarSpec:
    name: str
    prefix: int | None
    explode: bool


@dataclass(frozen=True, slots=True)
class Expression:
    op: _Operator
    varspecs: tuple[VarSpec, ...]


def _encode(value: str, allow_reserved: bool) -> str:
    """Percent-encode ``value`` for the U (unreserved) or U+R (reserved) allow set."""
    if not allow_reserved:
        return quote(value, safe="")
    if "%" not in value:
        return quote(value, safe=_RESERVED_STR)
    out: list[str] = []
    pos = 0
    for triplet in _PCT_TRIPLET.finditer(value):
        out.append(quote(value[pos : triplet.start()], safe=_RESERVED_STR))
        out.append(triplet.group())
        pos = triplet.end()
    out.append(quote(value[pos:], safe=_RESERVED_STR))
    return "".join(out)


# ---------------------------------------------------------------------- parsing


def parse_template(template: str, max_variables: int) -> tuple[str | Expression, ...]:
    parts: list[str | Expression] = []
    literal: list[str] = []
    count = 0
    i = 0
    n = len(template)
    while i < n:
        ch = template[i]
        if ch == "{":
            close = template.find("}", i + 1)
            if close < 0:
                raise UriTemplateError(f"unclosed '{{' at position {i} in {template!r}")
            nested = template.find("{", i + 1, close)
            if nested >= 0:
                raise UriTemplateError(f"nested '{{' at position {nested} in {template!r}")
            if literal:
                parts.append(_encode("".join(literal), allow_reserved=True))
                literal.clear()
            expr = _parse_expression(template, i, close)
            count += len(expr.varspecs)
            if count > max_variables:
                raise UriTemplateError(
                    f"URI template has more than {max_variables} variables: {template!r}"
                )
            parts.append(expr)
            i = close + 1
        elif ch == "}":
            raise UriTemplateError(f"unmatched '}}' at position {i} in {template!r}")
        elif ch == "%":
            if i + 2 >= n or template[i + 1] not in _HEX or template[i + 2] not in _HEX:
                raise UriTemplateError(
                    f"'%' at position {i} is not a percent-encoded triplet in {template!r}"
                )
            literal.append(template[i : i + 3])
            i += 3
        elif ch in _LITERAL_FORBIDDEN:
            raise UriTemplateError(
                f"character {ch!r} at position {i} is not allowed in a URI template: {template!r}"
            )
        else:
            literal.append(ch)
            i += 1
    if literal:
        parts.append(_encode("".join(literal), allow_reserved=True))
    return tuple(parts)


def _parse_expression(template: str, start: int, close: int) -> Expression:
    body = template[start + 1 : close]
    where = f"expression {template[start : close + 1]!r} at position {start}"
    if not body:
        raise UriTemplateError(f"empty {where}")
    if body[0] in _OPERATORS:
        op = _OPERATORS[body[0]]
        body = body[1:]
    elif body[0] in _RESERVED_OPERATORS:
        raise UriTemplateError(f"operator {body[0]!r} is reserved by RFC 6570 in {where}")
    else:
        op = _OPERATORS[""]
    specs: list[VarSpec] = []
    for raw in body.split(","):
        explode = raw.endswith("*")
        if explode:
            raw = raw[:-1]
        name, colon, length = raw.partition(":")
        prefix: int | None = None
        if colon:
            if explode:
                raise UriTemplateError(f"prefix and explode modifiers combined in {where}")
            if _PREFIX_LENGTH.fullmatch(length) is None:
                raise UriTemplateError(
                    f"prefix length must be an integer from 1 to 9999, not {length!r}, in {where}"
                )
            prefix = int(length)
        if not name:
            raise UriTemplateError(f"empty variable name in {where}")
        if _VARNAME.fullmatch(name) is None:
            raise UriTemplateError(f"invalid variable name {name!r} in {where}")
        specs.append(VarSpec(name, prefix, explode))
    return Expression(op, tuple(specs))


# -------------------------------------------------------------------- expansion


def expand_expression(expr: Expression, values: Mapping[str, UriTemplateValue]) -> str:
    op = expr.op
    reserved = op.allow_reserved
    pieces: list[str] = []
    for spec in expr.varspecs:
        value = values.get(spec.name)
        if value is None:
            continue
        if isinstance(value, str):
            if spec.prefix is not None:
                value = value[: spec.prefix]
            if op.named:
                pieces.append(
                    f"{spec.name}={_encode(value, reserved)}" if value else spec.name + op.ifemp
                )
            else:
                pieces.append(_encode(value, reserved))
            continue
        pairs: list[tuple[str, str]] | None = None
        items: list[str] = []
        if isinstance(value, Mapping):
            pairs = [(_check_str(k, spec), _check_str(v, spec)) for k, v in value.items()]
            if not pairs:
                continue
        elif isinstance(value, Sequence):
            items = [_check_str(item, spec) for item in value]
            if not items:
                continue
        else:
            raise TypeError(
                f"value for {spec.name!r} must be str, a sequence of str or a mapping of "
                f"str to str, not {type(value).__name__}"
            )
        if spec.prefix is not None:
            raise UriTemplateError(
                f"prefix modifier {{{spec.name}:{spec.prefix}}} needs a string value"
            )
        if spec.explode:
            if pairs is not None:
                pieces.extend(
                    _encode(k, reserved)
                    + (f"={_encode(v, reserved)}" if v or not op.named else op.ifemp)
                    for k, v in pairs
                )
            elif op.named:
                pieces.extend(
                    f"{spec.name}={_encode(v, reserved)}" if v else spec.name + op.ifemp
                    for v in items
                )
            else:
                pieces.extend(_encode(v, reserved) for v in items)
        else:
            if pairs is not None:
                joined = ",".join(
                    f"{_encode(k, reserved)},{_encode(v, reserved)}" for k, v in pairs
                )
            else:
                joined = ",".join(_encode(v, reserved) for v in items)
            pieces.append(f"{spec.name}={joined}" if op.named else joined)
    if not pieces:
        return ""
    return op.first + op.sep.join(pieces)


def _check_str(value: object, spec: VarSpec) -> str:
    if not isinstance(value, str):
        raise TypeError(f"members of {spec.name!r} must be str, not {type(value).__name__}")
    return value
