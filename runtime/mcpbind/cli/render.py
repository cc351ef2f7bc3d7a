"""Turning protocol results into text a person reads in a terminal.

Text is shown as is, binary content is summarised (type and size, never dumped), structured
tool output is pretty JSON, and ``--json`` gives the exact wire form for scripts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import json_object, json_value

__all__ = [
    "call_result_lines",
    "content_lines",
    "pretty_json",
    "prompt_lines",
    "resource_contents_lines",
    "size_text",
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
    """A tool result: its content blocks, then structured content as pretty JSON (a text
    block that is only the JSON of the structured content is not repeated)."""
    structured: Any = msgspec.UNSET
    if _set(result.structured_content):
        structured = json_value(result.structured_content)
    # The text form of structured output (the spec's backwards-compatible copy), including
    # the ``{"result": value}`` wrapping of a non-object output, is not shown twice.
    copies = [structured]
    if isinstance(structured, dict) and list(structured) == ["result"]:
        copies.append(structured["result"])
    for block in result.content:
        if structured is not msgspec.UNSET and isinstance(block, t.TextContent):
            try:
                if json.loads(block.text) in copies:
                    continue
            except ValueError:
                pass
        yield from content_lines(block)
    if structured is not msgspec.UNSET:
        yield pretty_json(structured)


def prompt_lines(result: t.GetPromptResult) -> Iterator[str]:
    if _set(result.description):
        yield f"# {result.description}"
    for message in result.messages:
        lines = list(content_lines(message.content))
        yield f"{message.role}: {lines[0]}" if lines else f"{message.role}:"
        yield from lines[1:]


def tool_signature(tool: t.Tool) -> str:
    """``name(a, b?, c?)``: the tool's arguments from its input schema, optional ones with ``?``."""
    schema = json_object(tool.input_schema)
    properties = schema.get("properties")
    names = list(properties) if isinstance(properties, dict) else []
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    args = ", ".join(name if name in needed else f"{name}?" for name in names)
    return f"{tool.name}({args})"
