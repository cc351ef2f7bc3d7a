"""Elicitation forms in the terminal, following the requested schema (client/elicitation.mdx
§Requested Schema): each field shows its ``title`` (else its key) and ``description``; a
``default`` is taken on an empty answer; ``enum`` / ``oneOf`` choices (single select) and
``items.enum`` / ``items.anyOf`` (multi select) are answered by number, value or title;
numbers and integers are parsed and checked against ``minimum``/``maximum``; booleans take
y/n; strings are checked against ``minLength``/``maxLength`` and the ``email``, ``uri``,
``date`` and ``date-time`` formats. A wrong answer is explained and asked again; an optional
field left empty is left out of the content.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["FormField", "OMIT", "fields_of", "parse_answer"]

OMIT: Final = object()
"""An optional field the user left empty: not part of the content."""


@dataclass(slots=True)
class FormField:
    """One property of the requested schema, as the terminal asks it."""

    key: str
    kind: str  # string, number, integer, boolean or array
    label: str
    help: str = ""
    required: bool = False
    default: Any = OMIT
    choices: list[tuple[Any, str]] = field(default_factory=list)  # (value, title)
    limits: dict[str, Any] = field(default_factory=dict)

    @property
    def multi(self) -> bool:
        return self.kind == "array"

    def prompt(self) -> str:
        """``  Title (help) [1) A  2) B] (default: A): ``"""
        parts = [f"  {self.label}"]
        if self.help:
            parts.append(f" ({self.help})")
        if self.choices:
            listed = "  ".join(f"{i}) {title}" for i, (_, title) in enumerate(self.choices, 1))
            parts.append(f" [{listed}]" + (" (several: 1,3)" if self.multi else ""))
        elif self.kind == "boolean":
            parts.append(" [Y/n]" if self.default is True else " [y/N]")
        elif self.kind in ("number", "integer"):
            parts.append(f" ({self.kind}{_range(self.limits)})")
        if self.default is not OMIT and self.kind != "boolean":
            parts.append(f" (default: {self.show(self.default)})")
        if not self.required and self.default is OMIT:
            parts.append(" (optional)")
        return "".join(parts) + ": "

    def show(self, value: Any) -> str:
        titles = dict((repr(v), t) for v, t in self.choices)
        if isinstance(value, list):
            return ", ".join(titles.get(repr(v), str(v)) for v in value)
        return titles.get(repr(value), str(value))

    def words(self) -> list[str]:
        """What completion offers for this field."""
        if self.choices:
            return [title for _, title in self.choices]
        return ["yes", "no"] if self.kind == "boolean" else []


def _range(limits: dict[str, Any]) -> str:
    low, high = limits.get("minimum"), limits.get("maximum")
    if low is not None and high is not None:
        return f", {low}..{high}"
    if low is not None:
        return f", at least {low}"
    return f", at most {high}" if high is not None else ""


def fields_of(schema: dict[str, Any]) -> list[FormField]:
    """The fields of a ``requestedSchema`` (plain JSON), in the schema's order."""
    required = set(schema.get("required") or ())
    out = []
    for key, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        kind = prop.get("type", "string")
        item = FormField(
            key,
            kind if kind in ("string", "number", "integer", "boolean", "array") else "string",
            str(prop.get("title") or key),
            str(prop.get("description") or ""),
            key in required,
            prop.get("default", OMIT),
            _choices(prop),
            {k: prop[k] for k in _LIMITS if k in prop},
        )
        out.append(item)
    return out


_LIMITS = ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "format")


def _choices(prop: dict[str, Any]) -> list[tuple[Any, str]]:
    source = prop.get("items") if prop.get("type") == "array" else prop
    source = source if isinstance(source, dict) else {}
    titled = source.get("oneOf") or source.get("anyOf")
    if isinstance(titled, list):
        return [(o.get("const"), str(o.get("title", o.get("const")))) for o in titled]
    values = source.get("enum")
    if not isinstance(values, list):
        return []
    names = prop.get("enumNames")
    if isinstance(names, list) and len(names) == len(values):
        return [(v, str(n)) for v, n in zip(values, names, strict=True)]
    return [(v, str(v)) for v in values]


def parse_answer(item: FormField, reply: str) -> tuple[Any, str | None]:
    """The value for one answer, or an explanation of why it is not one."""
    text = reply.strip()
    if not text:
        if item.default is not OMIT:
            return item.default, None
        if item.kind == "boolean":
            return False, None
        if item.required:
            return OMIT, "an answer is required"
        return OMIT, None
    if item.choices:
        return _pick(item, text)
    if item.kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True, None
        if text.lower() in ("n", "no", "false", "0"):
            return False, None
        return OMIT, "answer y or n"
    if item.kind in ("number", "integer"):
        return _number(item, text)
    if item.kind == "array":
        return [part.strip() for part in text.split(",") if part.strip()], None
    return _string(item, text)


def _pick(item: FormField, text: str) -> tuple[Any, str | None]:
    wanted = [p.strip() for p in text.split(",")] if item.multi else [text]
    picked = []
    for word in wanted:
        value = _choice(item, word)
        if value is OMIT:
            return (
                OMIT,
                f"{word!r} is not one of the choices (a number from 1 to {len(item.choices)})",
            )
        picked.append(value)
    if not item.multi:
        return picked[0], None
    low, high = item.limits.get("minItems"), item.limits.get("maxItems")
    if low is not None and len(picked) < low:
        return OMIT, f"choose at least {low}"
    if high is not None and len(picked) > high:
        return OMIT, f"choose at most {high}"
    return picked, None


def _choice(item: FormField, word: str) -> Any:
    if word.isdigit() and 1 <= int(word) <= len(item.choices):
        return item.choices[int(word) - 1][0]
    for value, title in item.choices:
        if word.lower() in (str(value).lower(), title.lower()):
            return value
    return OMIT


def _number(item: FormField, text: str) -> tuple[Any, str | None]:
    try:
        value: float = int(text) if item.kind == "integer" else float(text)
    except ValueError:
        return OMIT, f"{text!r} is not {'a whole number' if item.kind == 'integer' else 'a number'}"
    if item.kind == "number" and value.is_integer() and "." not in text:
        value = int(value)
    low, high = item.limits.get("minimum"), item.limits.get("maximum")
    if low is not None and value < low:
        return OMIT, f"must be at least {low}"
    if high is not None and value > high:
        return OMIT, f"must be at most {high}"
    return value, None


_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def _string(item: FormField, text: str) -> tuple[Any, str | None]:
    low, high = item.limits.get("minLength"), item.limits.get("maxLength")
    if low is not None and len(text) < low:
        return OMIT, f"at least {low} characters"
    if high is not None and len(text) > high:
        return OMIT, f"at most {high} characters"
    form = item.limits.get("format")
    if form == "email" and not _EMAIL.fullmatch(text):
        return OMIT, "not an email address"
    if form == "uri" and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:\S", text):
        return OMIT, "not a URI (e.g. https://example.com)"
    if form in ("date", "date-time"):
        try:
            (dt.date if form == "date" else dt.datetime).fromisoformat(text)
        except ValueError:
            return (
                OMIT,
                f"not a {form} (e.g. {'2026-07-28' if form == 'date' else '2026-07-28T12:00'})",
            )
    return text, None
