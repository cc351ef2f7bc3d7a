"""Tools' ``x-mcp-header`` parameters on the client side (streamable-http.mdx §Schema
Extension): over HTTP, each listed tool's header paths go to the transport, which mirrors those
arguments into ``Mcp-Param-*`` headers on its calls; a tool with invalid annotations is left
out of the list. Other transports MAY ignore ``x-mcp-header``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import json_value

from ..protocol.mcp_headers import InvalidToolHeaders, header_paths

if TYPE_CHECKING:
    from .cache import ResultCache

__all__ = ["reread_tools", "vet_tools"]

logger = logging.getLogger("mcpbind.client")


def vet_tools(registry: object, result: t.ListToolsResult) -> t.ListToolsResult:
    """Keep each tool's header paths for its calls in ``registry`` (the transport's
    ``tool_headers``, on a transport that takes them) and leave out tools whose annotations
    are invalid."""
    if not isinstance(registry, dict):
        return result  # other transports MAY ignore x-mcp-header
    kept: list[t.Tool] = []
    for tool in result.tools:
        try:
            paths = header_paths(json_value(tool.input_schema))
        except InvalidToolHeaders as exc:
            registry.pop(tool.name, None)
            logger.warning("leaving out tool %r: %s", tool.name, exc)
            continue
        if paths:
            registry[tool.name] = paths
        else:
            registry.pop(tool.name, None)
        kept.append(tool)
    if len(kept) == len(result.tools):
        return result
    return msgspec.structs.replace(result, tools=kept)


async def reread_tools(
    cache: ResultCache | None, iter_tools: Callable[[], AsyncIterator[t.Tool]]
) -> None:
    """Every page of tools/list (``iter_tools()``), past the ``cache``, to learn the current
    header rules (§Client Behavior of Custom Headers: after a HeaderMismatch)."""
    if cache is not None:
        cache.invalidate(("tools/list",))
    async for _ in iter_tools():
        pass
