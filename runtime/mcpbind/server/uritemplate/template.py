"""RFC 6570 URI templates for MCP resource templates: parse once, expand, and match.

MCP servers advertise *resource templates* (``resources/templates/list``, spec 2025-11-25
``server/resources.mdx`` §Resource Templates) such as ``file:///{path}``. Clients then
send *concrete* URIs in ``resources/read``; the server has to find the template that
produced the URI and recover the template arguments. :class:`UriTemplate` does both
directions:

* **Expansion** (:meth:`UriTemplate.expand`) implements RFC 6570 levels 1-4 exactly as
  the RFC's Appendix A algorithm: operators ``+ # . / ; ? &``, prefix ``{x:3}`` and
  explode ``{x*}`` modifiers, string, list and associative-array values. A value of
  ``None``, an empty list or an empty mapping is *undefined* and is skipped.

* **Matching** (:meth:`UriTemplate.match`) is the inverse, which RFC 6570 leaves
  unspecified (expansion is not injective in general). The semantics here:

  - The whole URI must match the whole template (anchored at both ends). Literal text
    is compared exactly, in its expanded (percent-encoded) form, case-sensitively.
  - Each expression matches a run of the characters its expansion can produce:
    simple ``{x}`` matches unreserved characters, ``%XX`` triplets and ``,`` -- never
    ``/ ? # &`` and so never crosses a path segment; ``{+x}`` and ``{#x}`` also match
    the RFC 3986 reserved characters, including ``/ ? #``; ``{.x}``, ``{/x}``, ``{;x}``,
    ``{?x}`` and ``{&x}`` start with their operator character, and may be absent as a
    whole (then their variables are missing from the result). Non-ASCII characters
    (IRIs) are accepted inside values as they are.
  - When the split between expressions is ambiguous (``{+a}/{+b}`` against ``x/y/z``),
    expressions are resolved from the last to the first and each takes the *shortest*
    run that still lets everything before it match, so earlier expressions are greedy
    (``a="x/y"``, ``b="z"``). One exception: an optional prefixed expression is taken
    as *present* whenever the URI allows it, so ``{name}{.ext}`` splits ``a.tar.gz``
    as ``name="a.tar"``, ``ext="gz"`` (and ``{/a}{/b}`` against ``/p`` gives only
    ``b="p"``). The split is chosen from character classes alone and then decoded; if
    decoding fails the URI does not match (no other split is tried).
  - Values are percent-decoded (UTF-8). A malformed triplet (``%zz``, ``%4``) or
    invalid UTF-8 makes the URI not match, for every operator.
  - Within one expression, ``{x,y}`` items are assigned left to right; the last
    variable takes any remaining items (for ``{/x}`` a raw ``/`` is never part of one
    value, so extra segments make the URI not match). An exploded variable ``{x*}``
    always matches as a ``list[str]`` (``{/path*}`` gives the path segments) and takes
    as many items as it can while leaving one for each later variable. Non-exploded
    variables always match as ``str``: ``{list}`` against ``red,green`` gives
    ``"red,green"``.
  - Named operators (``{;x,y}``, ``{?x,y}``, ``{&x}``) are matched by name, in any
    order, and each parameter may be absent. Adjacent named expressions share one pool
    (``{?a}{&b}`` accepts ``?b=1&a=2``). ``name`` without ``=`` is the empty string;
    the first ``=`` separates name and value (``?x=a=b`` gives ``x="a=b"``).
    Parameters that are not template variables, or a non-exploded name given twice,
    make the URI not match; an exploded name may repeat and collects into a list.
    Associative-array values cannot be recovered: ``{?keys*}`` only matches parameters
    literally named ``keys``.
  - ``{x}`` (no operator) against an empty run gives ``x=""``; the server decides
    whether an empty argument is acceptable.
  - A prefix ``{x:3}`` limits the decoded value to 3 characters. A variable used more
    than once must match consistently (``{var:1}/{var}`` requires the first to be a
    prefix of the second).

* **Complexity and limits.** Matching is linear in ``len(uri)`` for any template: a
  bit-parallel (Shift-And style) simulation of the template's automaton (one bit per
  literal character or expression part) does a fixed number of big-integer operations
  per URI character -- one transition plus one epsilon-closure round per expression in
  the longest run of adjacent expressions -- then one backward pass over the recorded
  states picks the split. Nothing ever backtracks, so the worst case is
  O(len(uri) * len(template)) bit operations, with the template bounded by
  ``max_length``. URIs longer than ``max_uri_length`` (default 8 KiB) simply do not match;
  templates longer than ``max_length`` or with more than ``max_variables`` variables
  are rejected with :class:`UriTemplateError`, as is any template that is not valid
  RFC 6570 syntax.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from string import ascii_letters, digits
from typing import Final, TypeAlias
from urllib.parse import quote, unquote

__all__ = [
    "DEFAULT_MAX_TEMPLATE_LENGTH",
    "DEFAULT_MAX_URI_LENGTH",
    "DEFAULT_MAX_VARIABLES",
    "UriTemplate",
    "UriTemplateError",
    "UriTemplateMatch",
    "UriTemplateValue",
]

DEFAULT_MAX_TEMPLATE_LENGTH: Final = 2048
DEFAULT_MAX_URI_LENGTH: Final = 8192
DEFAULT_MAX_VARIABLES: Final = 64

UriTemplateValue: TypeAlias = str | Sequence[str] | Mapping[str, str] | None
"""A value for :meth:`UriTemplate.expand`; ``None``, ``[]`` and ``{}`` are undefined."""

UriTemplateMatch: TypeAlias = dict[str, str | list[str]]
"""Variables recovered by :meth:`UriTemplate.match`: ``str``, or ``list[str]`` if exploded."""


_Found: TypeAlias = dict[str, list[tuple[str | list[str], int | None]]]
# variable name -> every (value, prefix length) the matcher recovered for it


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
_PCT_MALFORMED: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")


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
class _VarSpec:
    name: str
    prefix: int | None
    explode: bool


@dataclass(frozen=True, slots=True)
class _Expression:
    op: _Operator
    varspecs: tuple[_VarSpec, ...]


# Kinds of automaton positions.
_START: Final = 0
_LITERAL: Final = 1  # one literal character
_FIRST: Final = 2  # the operator's leading character (".", "/", ";", "?", "&", "#")
_STAR: Final = 3  # a run of value characters (self-loop)
_EXIT: Final = 4  # epsilon-only node after a prefixed expression (lets it be absent)


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


def _decode(text: str) -> str | None:
    """Percent-decode a matched value; ``None`` if malformed or not UTF-8."""
    if "%" not in text:
        return text
    if _PCT_MALFORMED.search(text) is not None:
        return None
    try:
        return unquote(text, errors="strict")
    except UnicodeDecodeError:
        return None


class UriTemplate:
    """A parsed RFC 6570 URI template (levels 1-4) that can expand and match URIs.

    Construction validates the template and precompiles the matcher. Treat instances as
    immutable: they are hashable (by template text), and :meth:`match` and
    :meth:`expand` keep no state, so one instance can serve every request and thread.
    """

    __slots__ = (
        "_chain",
        "_char_masks",
        "_e1",
        "_e2",
        "_e3",
        "_expressions",
        "_head",
        "_kinds",
        "_loop",
        "_named_scopes",
        "_nonascii_mask",
        "_owners",
        "_parts",
        "_scope_of",
        "_tail",
        "max_uri_length",
        "template",
        "variables",
    )

    template: str
    variables: tuple[str, ...]
    max_uri_length: int

    def __init__(
        self,
        template: str,
        *,
        max_length: int = DEFAULT_MAX_TEMPLATE_LENGTH,
        max_variables: int = DEFAULT_MAX_VARIABLES,
        max_uri_length: int = DEFAULT_MAX_URI_LENGTH,
    ) -> None:
        """Parse and validate ``template``; raises :class:`UriTemplateError` if invalid.

        ``max_length`` bounds the template text, ``max_variables`` the number of
        variable specifiers, and ``max_uri_length`` the URIs :meth:`match` accepts.
        """
        if not isinstance(template, str):
            raise TypeError(f"URI template must be a str, not {type(template).__name__}")
        if len(template) > max_length:
            raise UriTemplateError(
                f"URI template is {len(template)} characters long; the limit is {max_length}"
            )
        self.template = template
        self.max_uri_length = max_uri_length
        self._parts: tuple[str | _Expression, ...] = _parse(template, max_variables)
        self._expressions = tuple(p for p in self._parts if isinstance(p, _Expression))
        names: dict[str, None] = {}
        for expr in self._expressions:
            for spec in expr.varspecs:
                names.setdefault(spec.name)
        self.variables = tuple(names)
        self._compile()

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __str__(self) -> str:
        return self.template

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UriTemplate):
            return self.template == other.template
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.template)

    # ------------------------------------------------------------------ expansion

    def expand(
        self, values: Mapping[str, UriTemplateValue] | None = None, /, **kwargs: UriTemplateValue
    ) -> str:
        """Expand the template (RFC 6570 §3) with ``values`` and/or keyword arguments.

        Missing variables, ``None``, empty lists and empty mappings are undefined and
        expand to nothing. Raises :class:`UriTemplateError` for a prefix modifier on a
        list or mapping value, and ``TypeError`` for values of other types.
        """
        merged: Mapping[str, UriTemplateValue]
        if kwargs:
            merged = {**values, **kwargs} if values else kwargs
        else:
            merged = values if values is not None else {}
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(_expand_expression(part, merged))
        return "".join(out)

    # ------------------------------------------------------------------- matching

    def match(self, uri: str) -> UriTemplateMatch | None:
        """Match a concrete URI; return the variables, or ``None`` if it doesn't match.

        See the module docstring for the exact semantics. Runs in time linear in
        ``len(uri)``; URIs longer than ``max_uri_length`` never match.
        """
        return self._match_counted(uri)[0]

    def _match_counted(self, uri: str) -> tuple[UriTemplateMatch | None, int]:
        """:meth:`match` plus a count of work units (a debug hook for complexity tests).

        The count is the number of automaton steps: per URI character, one transition
        plus one epsilon-closure round per adjacent expression, plus one step per
        backward-pass iteration.
        """
        n = len(uri)
        if n > self.max_uri_length:
            return None, 0
        head, tail = self._head, self._tail
        if n < len(head) + len(tail) or not uri.startswith(head) or not uri.endswith(tail):
            return None, 1
        if not self._expressions:
            return ({} if n == len(head) else None), 1
        begin, stop = len(head), n - len(tail)

        # Forward pass: bit j of states[i] means "uri[begin:begin+i] can be consumed by
        # automaton positions 1..j". Fixed work per character: no backtracking.
        kinds = self._kinds
        last = len(kinds) - 1
        loop, e1, e2, e3, chain = self._loop, self._e1, self._e2, self._e3, self._chain
        masks = self._char_masks.get
        nonascii = self._nonascii_mask
        d = 1
        for _ in range(chain):
            d |= ((d << 1) & e1) | ((d << 2) & e2) | ((d << 3) & e3)
        states = [d]
        append = states.append
        # Three copies of one loop, specialised for speed; they compute the same thing.
        if chain == 1 and not e2:  # one unprefixed expression between literals
            for ch in uri[begin:stop]:
                d = ((d << 1) | (d & loop)) & masks(ch, nonascii)
                if not d:
                    return None, len(states) * 2
                d |= (d << 1) & e1
                append(d)
        elif chain == 1:
            for ch in uri[begin:stop]:
                d = ((d << 1) | (d & loop)) & masks(ch, nonascii)
                if not d:
                    return None, len(states) * 2
                d |= ((d << 1) & e1) | ((d << 2) & e2) | ((d << 3) & e3)
                append(d)
        else:
            rounds = range(chain)
            for ch in uri[begin:stop]:
                d = ((d << 1) | (d & loop)) & masks(ch, nonascii)
                if not d:
                    return None, len(states) * (chain + 1)
                for _ in rounds:
                    d |= ((d << 1) & e1) | ((d << 2) & e2) | ((d << 3) & e3)
                append(d)
        steps = len(states) * (chain + 1)
        if not (d >> last) & 1:
            return None, steps

        # Backward pass: walk one accepting path from the end, choosing for each
        # expression the shortest run (prefixed expressions: present if possible).
        owners = self._owners
        spans: list[tuple[int, int] | None] = [None] * len(self._expressions)
        i = stop - begin
        j = last
        while j:
            steps += 1
            kind = kinds[j]
            if kind in (_LITERAL, _FIRST):
                i -= 1
                j -= 1
            elif kind == _EXIT:
                if (states[i] >> (j - 1)) & 1:
                    j -= 1  # present: continue with its value run
                else:
                    spans[owners[j]] = None  # absent
                    j -= 3
            else:  # _STAR
                end = i
                prev = j - 1
                while not (states[i] >> prev) & 1:
                    i -= 1
                    steps += 1
                spans[owners[j]] = (begin + i, begin + end)
                j = prev
        return self._interpret(uri, spans), steps

    def _interpret(self, uri: str, spans: list[tuple[int, int] | None]) -> UriTemplateMatch | None:
        """Decode the expression runs chosen by the automaton into variable values."""
        found: _Found = {}
        scope_texts: dict[int, list[str]] = {}
        for index, expr in enumerate(self._expressions):
            span = spans[index]
            if span is None:
                continue
            text = uri[span[0] : span[1]]
            if expr.op.named:
                scope_texts.setdefault(self._scope_of[index], []).append(text)
            elif not _assign_positional(expr, text, found):
                return None
        for scope_index, texts in scope_texts.items():
            sep = self._named_scopes[scope_index][0]
            scope = self._named_scopes[scope_index][1]
            if not _assign_named(sep.join(texts), sep, scope, found):
                return None
        result: UriTemplateMatch = {}
        for name in self.variables:
            occurrences = found.get(name)
            if occurrences is None:
                continue
            value = _reconcile(occurrences)
            if value is None:
                return None
            result[name] = value
        return result

    # ----------------------------------------------------------------- compilation

    def _compile(self) -> None:
        """Build the bit-parallel automaton for the part between head and tail literals."""
        parts = list(self._parts)
        head = parts[0] if parts else ""
        tail = parts[-1] if len(parts) > 1 else ""
        self._head: str = head if isinstance(head, str) else ""
        self._tail: str = tail if isinstance(tail, str) else ""
        parts = parts[1 if self._head else 0 : len(parts) - (1 if self._tail else 0)]

        kinds: list[int] = [_START]
        owners: list[int] = [-1]
        ascii_masks = [0] * 128
        nonascii = loop = e1 = e2 = e3 = 0
        chain = run = 0
        expr_index = -1
        for part in parts:
            if isinstance(part, str):
                run = 0
                for ch in part:  # expanded literals are ASCII
                    ascii_masks[ord(ch)] |= 1 << len(kinds)
                    kinds.append(_LITERAL)
                    owners.append(-1)
                continue
            run += 1
            chain = max(chain, run)
            expr_index += 1
            op = part.op
            if op.first:
                ascii_masks[ord(op.first)] |= 1 << len(kinds)
                kinds.append(_FIRST)
                owners.append(expr_index)
            star = 1 << len(kinds)
            for ch in op.match_chars:
                ascii_masks[ord(ch)] |= star
            nonascii |= star
            loop |= star
            e1 |= star  # entered without consuming (empty run) from its predecessor
            kinds.append(_STAR)
            owners.append(expr_index)
            if op.first:
                exit_bit = 1 << len(kinds)
                e1 |= exit_bit  # from the run
                e2 |= exit_bit  # from the leading character (empty run)
                e3 |= exit_bit  # from before the leading character (absent)
                kinds.append(_EXIT)
                owners.append(expr_index)
        self._kinds = tuple(kinds)
        self._owners = tuple(owners)
        self._char_masks = {chr(c): ascii_masks[c] for c in range(128)}
        self._nonascii_mask = nonascii
        self._loop, self._e1, self._e2, self._e3, self._chain = loop, e1, e2, e3, chain

        # Adjacent named expressions with the same separator share one parameter pool.
        scopes: list[tuple[str, dict[str, _VarSpec]]] = []
        scope_of: list[int] = []
        previous: _Expression | None = None
        for part in self._parts:
            if isinstance(part, str):
                previous = None
                continue
            if part.op.named:
                if previous is None or not previous.op.named or previous.op.sep != part.op.sep:
                    scopes.append((part.op.sep, {}))
                for spec in part.varspecs:
                    scopes[-1][1].setdefault(spec.name, spec)
            scope_of.append(len(scopes) - 1)
            previous = part
        self._named_scopes = tuple(scopes)
        self._scope_of = tuple(scope_of)


# ---------------------------------------------------------------------- parsing


def _parse(template: str, max_variables: int) -> tuple[str | _Expression, ...]:
    parts: list[str | _Expression] = []
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


def _parse_expression(template: str, start: int, close: int) -> _Expression:
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
    specs: list[_VarSpec] = []
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
        specs.append(_VarSpec(name, prefix, explode))
    return _Expression(op, tuple(specs))


# -------------------------------------------------------------------- expansion


def _expand_expression(expr: _Expression, values: Mapping[str, UriTemplateValue]) -> str:
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


def _check_str(value: object, spec: _VarSpec) -> str:
    if not isinstance(value, str):
        raise TypeError(f"members of {spec.name!r} must be str, not {type(value).__name__}")
    return value


# --------------------------------------------------------------------- matching


def _assign_positional(expr: _Expression, text: str, found: _Found) -> bool:
    """Split one unnamed expression's run among its variables (see module docstring)."""
    op = expr.op
    specs = expr.varspecs
    if not text and not op.first:
        # No leading character: an empty run is the empty string for the first variable.
        if not specs[0].explode:
            found.setdefault(specs[0].name, []).append(("", specs[0].prefix))
        return True
    items = text.split(op.sep) if len(specs) > 1 or specs[0].explode else [text]
    count = len(items)
    index = 0
    last = len(specs) - 1
    for k, spec in enumerate(specs):
        if index >= count:
            break
        if spec.explode:
            take = max(1, count - index - (last - k))
            values: list[str] = []
            for item in items[index : index + take]:
                decoded = _decode(item)
                if decoded is None:
                    return False
                values.append(decoded)
            found.setdefault(spec.name, []).append((values, None))
        else:
            take = count - index if k == last else 1
            raw = items[index] if take == 1 else op.sep.join(items[index:])
            if op.char == "/" and "/" in raw:
                return False
            value = _decode(raw)
            if value is None:
                return False
            found.setdefault(spec.name, []).append((value, spec.prefix))
        index += take
    return index >= count


def _assign_named(text: str, sep: str, scope: dict[str, _VarSpec], found: _Found) -> bool:
    """Assign the ``name=value`` parameters of a pool of named expressions, in any order."""
    lists: dict[str, list[str]] = {}
    seen: set[str] = set()
    for param in text.split(sep):
        if not param:
            continue
        name, _, raw = param.partition("=")
        spec = scope.get(name)
        if spec is None:
            return False
        value = _decode(raw)
        if value is None:
            return False
        if spec.explode:
            lists.setdefault(name, []).append(value)
        elif name in seen:
            return False
        else:
            seen.add(name)
            found.setdefault(name, []).append((value, spec.prefix))
    for name, values in lists.items():
        found.setdefault(name, []).append((values, None))
    return True


def _reconcile(occurrences: list[tuple[str | list[str], int | None]]) -> str | list[str] | None:
    """Combine every occurrence of one variable; ``None`` if they disagree."""
    full: str | list[str] | None = None
    prefixed: list[tuple[str, int]] = []
    for value, prefix in occurrences:
        if prefix is not None and isinstance(value, str):
            if len(value) > prefix:
                return None
            prefixed.append((value, prefix))
        elif full is None:
            full = value
        elif full != value:
            return None
    if full is None:
        # Only prefixed occurrences: the longest one is the best knowledge of the value.
        full = max(prefixed, key=lambda vp: len(vp[0]))[0]
    for value, prefix in prefixed:
        if not isinstance(full, str) or full[:prefix] != value:
            return None
    return full
