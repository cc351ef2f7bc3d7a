"""How a handler's return value becomes an MCP result: tool results (text, content blocks,
structured content), resource contents and prompt messages."""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import convert

from .._lazy import LazyModule
from .signature import ToolSignature, encode_hook

if TYPE_CHECKING:
    import base64
    import json
else:  # imported at first use, not with mcpbind (issue 15, cold start)
    base64 = LazyModule("base64", globals())
    json = LazyModule("json", globals())

__all__ = ["prompt_result", "resource_contents", "returns_content", "tool_result"]


def returns_content(fn: Callable[..., Any]) -> bool:
    """Whether the return annotation is MCP content (blocks, a list of them, a CallToolResult)."""
    try:
        hint = typing.get_type_hints(fn).get("return")
    except Exception:
        return False
    if hint is None:
        return False
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin is list and args:
        return _is_content_type(args[0])
    if args and origin not in (list, dict, tuple):
        return all(_is_content_type(a) or a is type(None) for a in args)
    return _is_content_type(hint)


def _is_content_type(tp: Any) -> bool:
    members = typing.get_args(tp) or (tp,)
    return all(
        isinstance(m, type) and issubclass(m, t.ContentBlock | t.CallToolResult) for m in members
    )


def tool_result(value: Any, sig: ToolSignature) -> t.CallToolResult:
    if type(value) is t.TextContent:  # the usual async tool's value: one type test
        return t.CallToolResult(content=[value])
    if isinstance(value, str):  # the usual plain tool's value: no content-type checks first
        result = t.CallToolResult(content=[t.TextContent(text=value)])
        if sig.output_schema is not None:
            result.structured_content = sig.structured(value)
        return result
    if isinstance(value, t.CallToolResult):
        return value
    if isinstance(value, t.ContentBlock):
        return t.CallToolResult(content=[value])
    if isinstance(value, list) and value and all(isinstance(v, t.ContentBlock) for v in value):
        return t.CallToolResult(content=list(value))
    structured = sig.structured(value) if sig.output_schema is not None else None
    if value is None:
        result = t.CallToolResult(content=[])
    else:
        text = msgspec.json.encode(value, enc_hook=encode_hook).decode()
        result = t.CallToolResult(content=[t.TextContent(text=text)])
    if structured is not None:
        result.structured_content = structured
    return result


def resource_contents(uri: str, value: Any, mime: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, t.TextResourceContents | t.BlobResourceContents):
        return [value]
    if isinstance(value, bytes):
        blob = t.BlobResourceContents(blob=base64.b64encode(value).decode(), uri=uri)
        if isinstance(mime, str):
            blob.mime_type = mime
        return [blob]
    text = t.TextResourceContents(
        text=value if isinstance(value, str) else json.dumps(value), uri=uri
    )
    if isinstance(mime, str):
        text.mime_type = mime
    return [text]


def prompt_result(value: Any, prompt: t.Prompt) -> t.GetPromptResult:
    if isinstance(value, t.GetPromptResult):
        return value
    items: Iterable[Any] = value if isinstance(value, list) else [value]
    messages = []
    for item in items:
        if isinstance(item, t.PromptMessage):
            messages.append(item)
        elif isinstance(item, str):
            messages.append(t.PromptMessage(content=t.TextContent(text=item), role="user"))
        else:
            messages.append(convert(item, t.PromptMessage))
    result = t.GetPromptResult(messages=messages)
    if isinstance(prompt.description, str):
        result.description = prompt.description
    return result
