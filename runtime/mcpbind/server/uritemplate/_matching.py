"""Matching concrete URIs against a parsed template: a bit-parallel automaton, linear in the URI.

The semantics are described in the package's ``template`` module docstring.
"""

from __future__ import annotations

from typing import Final, TypeAlias
from urllib.parse import unquote

from ._syntax import PCT_MALFORMED, Expression, UriTemplateMatch, VarSpec

__all__ = ["Matcher"]

_Found: TypeAlias = dict[str, list[tuple[str | list[str], int | None]]]
# variable name -> every (value, prefix length) the matcher recovered for it

# Kinds of automaton positions.
_START: Final = 0
_LITERAL: Final = 1  # one literal character
_FIRST: Final = 2  # the operator's leading character (".", "/", ";", "?", "&", "#")
_STAR: Final = 3  # a run of value characters (self-loop)
_EXIT: Final = 4  # epsilon-only node after a prefixed expression (lets it be absent)


def _decode(text: str) -> str | None:
    """Percent-decode a matched value; ``None`` if malformed or not UTF-8."""
    if "%" not in text:
        return text
    if PCT_MALFORMED.search(text) is not None:
        return None
    try:
        return unquote(text, errors="strict")
    except UnicodeDecodeError:
        return None


class Matcher:
    """The compiled matcher of one template: automaton tables and named-parameter pools."""

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
        "variables",
    )

    def __init__(
        self,
        parts: tuple[str | Expression, ...],
        variables: tuple[str, ...],
        max_uri_length: int,
    ) -> None:
        self._parts = parts
        self._expressions = tuple(p for p in parts if isinstance(p, Expression))
        self.variables = variables
        self.max_uri_length = max_uri_length
        self._compile()

    def match_counted(self, uri: str) -> tuple[UriTemplateMatch | None, int]:
        """The match (see ``UriTemplate.match``) plus a count of work units (a debug hook for complexity tests).

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
        scopes: list[tuple[str, dict[str, VarSpec]]] = []
        scope_of: list[int] = []
        previous: Expression | None = None
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


# --------------------------------------------------------------------- matching


def _assign_positional(expr: Expression, text: str, found: _Found) -> bool:
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


def _assign_named(text: str, sep: str, scope: dict[str, VarSpec], found: _Found) -> bool:
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
