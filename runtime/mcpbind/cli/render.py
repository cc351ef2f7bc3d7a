"""Turning protocol results into text a person reads in a terminal.

Text is shown as is, binary content is summarised (type and size, never dumped), structured
tool output is pretty JSON, and ``--json`` gives the exact wire form for scripts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import json_object, json_value

from .._lazy import LazyModule

if TYPE_CHECKING:
    import json
else:  # imported when a value is shown as JSON: ls lists without it (issue 15, cold start)
    json = LazyModule("json", globals())

__all__ = [
    "call_result_lines",
    "content_lines",
    "counted",
    "pretty_json",
    "prompt_lines",
    "resource_contents_lines",
    "schema_type",
    "size_text",
    "task_support",
    "tool_signature",
    "wire",
]


def wire(value: Any) -> Any:
    """The JSON (wire) form of a protocol struct, as plain Python values."""
    return msgspec.json.decode(msgspec.json.encode(value))


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _set(value: object) -> bool:
    return value is not msgspec.UNSET and value is not None


def size_text(n: int) -> str:
    """``812 B``, ``12.3 KiB``, ``4.0 MiB``."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"


def _base64_size(data: str) -> int:
    """Decoded size of a base64 string, without decoding it."""
    stripped = data.rstrip("=")
    return len(stripped) * 3 // 4


def content_lines(block: object) -> Iterator[str]:
    """One content block: text verbatim, media and links as a one-line summary."""
    if isinstance(block, t.TextContent):
        yield block.text
    elif isinstance(block, t.ImageContent | t.AudioContent):
        kind = "image" if isinstance(block, t.ImageContent) else "audio"
        yield f"[{kind}: {block.mime_type}, {size_text(_base64_size(block.data))}]"
    elif isinstance(block, t.ResourceLink):
        mime = f", {block.mime_type}" if _set(block.mime_type) else ""
        yield f"[resource link: {block.uri} ({block.name}{mime})]"
    elif isinstance(block, t.EmbeddedResource):
        yield from resource_contents_lines([block.resource], header=True)
    else:  # a block type from a newer protocol version: show its JSON
        yield pretty_json(wire(block))


def resource_contents_lines(contents: Iterable[Any], *, header: bool) -> Iterator[str]:
    """Resource contents: text (with a ``[uri]`` header when ``header``), blobs summarised."""
    for item in contents:
        mime = item.mime_type if _set(getattr(item, "mime_type", None)) else None
        if isinstance(item, t.TextResourceContents):
            if header:
                yield f"[resource: {item.uri}" + (f", {mime}]" if mime else "]")
            yield item.text
        elif isinstance(item, t.BlobResourceContents):
            size = size_text(_base64_size(item.blob))
            yield f"[blob: {item.uri}, {mime or 'application/octet-stream'}, {size}]"
        else:
            yield pretty_json(wire(item))


def call_result_lines(result: t.CallToolResult) -> Iterator[str]:
    """A tool result, each thing once: its content blocks, then structured content as pretty
    JSON. A text block that is only the JSON of the structured content is not repeated; for
    a non-object output wrapped as ``{"result": value}``, the value is shown in place of the
    text block that carries it, without the wrapping (a ``str`` tool prints its string once,
    a list tool its pretty JSON)."""
    structured: Any = msgspec.UNSET
    if _set(result.structured_content):
        structured = json_value(result.structured_content)
    wrapped = isinstance(structured, dict) and list(structured) == ["result"]
    shown_as_text = False
    for block in result.content:
        if structured is not msgspec.UNSET and isinstance(block, t.TextContent):
            value = structured["result"] if wrapped else None
            if wrapped and _carries(block.text, value):
                shown_as_text = True
                yield value if isinstance(value, str) else pretty_json(value)
                continue
            if _carries(block.text, structured):
                continue
        yield from content_lines(block)
    if structured is not msgspec.UNSET and not shown_as_text:
        yield pretty_json(structured)


def _carries(text: str, value: Any) -> bool:
    """Whether ``text`` is ``value`` itself (a string) or its JSON form."""
    if text == value:
        return True
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def prompt_lines(result: t.GetPromptResult) -> Iterator[str]:
    if _set(result.description):
        yield f"# {result.description}"
    for message in result.messages:
        lines = list(content_lines(message.content))
        yield f"{message.role}: {lines[0]}" if lines else f"{message.role}:"
        yield from lines[1:]


def counted(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 task``, ``2 tasks``, ``0 tasks``: a count with its noun in the right number
    (``nouns``: an irregular plural)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def task_support(tool: t.Tool) -> str | None:
    """The tool's ``execution.taskSupport`` when it declares one (``optional``,
    ``required``, ``forbidden``), else ``None``."""
    execution = tool.execution
    support = execution.task_support if isinstance(execution, t.ToolExecution) else None
    return support if isinstance(support, str) else None


def tool_signature(tool: t.Tool, *, types: bool = False) -> str:
    """``name(a, b?)``: the tool's arguments from its input schema, optional ones with ``?``;
    with ``types``, their JSON Schema types too: ``name(a: string, b?: integer)``."""
    schema = json_object(tool.input_schema)
    properties = schema.get("properties")
    props: dict[str, Any] = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    args = ", ".join(
        f"{name}{'' if name in needed else '?'}" + (f": {schema_type(prop)}" if types else "")
        for name, prop in props.items()
    )
    return f"{tool.name}({args})"


def schema_type(schema: object) -> str:
    """A short name for a JSON Schema's type: ``string``, ``integer|null``, ``string[]``,
    ``"a"|"b"`` for an enum, the definition's name for a ``$ref``."""
    if not isinstance(schema, dict):
        return "any"
    if isinstance(schema.get("enum"), list) and len(schema["enum"]) <= 4:
        return "|".join(json.dumps(value) for value in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"{schema_type(schema.get('items'))}[]"
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if isinstance(schema.get("$ref"), str):
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return "|".join(schema_type(option) for option in schema[key])
    return "any"
