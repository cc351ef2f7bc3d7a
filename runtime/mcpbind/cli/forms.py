"""An elicitation form on a terminal, following the requested schema (client/elicitation.mdx).

One question per property, in order: its title (or name) and description, its choices
(``enum``, titled ``oneOf``/``anyOf``, multi-select arrays), its default (Enter keeps it), and
a reply converted to the property's type (``integer``, ``number``, ``boolean``, a list for
arrays). A reply that does not fit is asked again; Ctrl-D cancels the form. ``ask`` is the one
I/O step, so any line reader (click's prompt, a line editor) can drive it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from mcpbind_types import unified as t

__all__ = ["Ask", "choices_of", "convert_reply", "fill_form"]

#: Show a prompt, return the line typed (``None``: end of input, the user gave up).
Ask = Callable[[str], Awaitable[str | None]]

_TRUE, _FALSE = {"y", "yes", "true", "1"}, {"n", "no", "false", "0"}


def choices_of(schema: dict[str, Any]) -> list[str]:
    """The allowed values of an enum property (single or multi-select), else ``[]``."""
    source = schema.get("items", schema) if schema.get("type") == "array" else schema
    if isinstance(source.get("enum"), list):
        return [str(value) for value in source["enum"]]
    options = source.get("oneOf") or source.get("anyOf") or []
    return [str(o["const"]) for o in options if isinstance(o, dict) and "const" in o]


def convert_reply(schema: dict[str, Any], reply: str) -> Any:
    """``reply`` as the value the schema asks for; :class:`ValueError` when it does not fit."""
    kind = schema.get("type", "string")
    choices = choices_of(schema)
    if kind == "array":
        values = [part.strip() for part in reply.split(",") if part.strip()]
        wrong = [value for value in values if choices and value not in choices]
        if wrong:
            raise ValueError(f"not one of the choices: {', '.join(wrong)}")
        return values
    if choices and reply not in choices:
        if reply.isdigit() and 1 <= int(reply) <= len(choices):
            return choices[int(reply) - 1]
        raise ValueError(f"choose one of: {', '.join(choices)}")
    if kind == "boolean":
        lowered = reply.lower()
        if lowered not in _TRUE | _FALSE:
            raise ValueError("answer y or n")
        return lowered in _TRUE
    if kind == "integer":
        return int(reply)
    if kind == "number":
        return float(reply)
    return reply


def _question(name: str, schema: dict[str, Any], required: bool) -> str:
    label = str(schema.get("title") or name)
    notes = [str(schema["description"])] if schema.get("description") else []
    choices = choices_of(schema)
    if choices:
        many = " (several, comma-separated)" if schema.get("type") == "array" else ""
        notes.append("choices: " + ", ".join(f"{i}) {c}" for i, c in enumerate(choices, 1)) + many)
    elif schema.get("type", "string") != "string":
        notes.append(str(schema["type"]) + (" y/n" if schema.get("type") == "boolean" else ""))
    if "default" in schema:
        notes.append(f"Enter for {schema['default']!r}")
    elif not required:
        notes.append("optional, Enter to skip")
    return f"  {label}" + (f" [{'; '.join(notes)}]" if notes else "") + ": "


async def fill_form(
    params: t.ElicitRequestFormParams, ask: Ask, say: Callable[[str], object]
) -> t.ElicitResult:
    """Ask for every property of ``params.requested_schema``; accept with the answers, or
    cancel on end of input."""
    schema = msgspec.to_builtins(params.requested_schema)
    required = set(schema.get("required") or [])
    content: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        while True:
            reply = await ask(_question(name, prop, name in required))
            if reply is None:
                return t.ElicitResult(action="cancel")
            reply = reply.strip()
            if not reply:
                if "default" in prop:
                    content[name] = prop["default"]
                    break
                if name not in required:
                    break
                say("  an answer is required")
                continue
            try:
                content[name] = convert_reply(prop, reply)
                break
            except ValueError as exc:
                say(f"  {exc}")
    return t.ElicitResult(action="accept", content=content)
