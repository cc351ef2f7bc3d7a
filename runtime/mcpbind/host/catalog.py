"""The aggregated catalog: every server's tools, resources, templates and prompts in one place.

Each entry names the server it comes from. Tools and prompts get host names from
:mod:`mcpbind.host.naming`; resources keep their URIs (a URI means the same thing everywhere),
and a URI two servers could serve (by listing or template) is read from the one named by the
caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpbind_types import unified as t
from mcpbind_types._common import json_object

from .naming import assign_names

__all__ = [
    "Catalog",
    "PromptEntry",
    "ResourceEntry",
    "ServerLists",
    "TemplateEntry",
    "ToolEntry",
    "llm_tools",
]


@dataclass(slots=True)
class ServerLists:
    """One server's full lists, as last fetched (every page)."""

    tools: list[t.Tool] = field(default_factory=list)
    resources: list[t.Resource] = field(default_factory=list)
    templates: list[t.ResourceTemplate] = field(default_factory=list)
    prompts: list[t.Prompt] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ToolEntry:
    name: str
    server: str
    tool: t.Tool

    @property
    def description(self) -> str:
        return self.tool.description if isinstance(self.tool.description, str) else ""

    @property
    def annotations(self) -> t.ToolAnnotations | None:
        found = self.tool.annotations
        return found if isinstance(found, t.ToolAnnotations) else None

    def input_schema(self) -> dict[str, Any]:
        return json_object(self.tool.input_schema)


@dataclass(frozen=True, slots=True)
class PromptEntry:
    name: str
    server: str
    prompt: t.Prompt


@dataclass(frozen=True, slots=True)
class ResourceEntry:
    server: str
    resource: t.Resource


@dataclass(frozen=True, slots=True)
class TemplateEntry:
    server: str
    template: t.ResourceTemplate


@dataclass(slots=True)
class Catalog:
    """A snapshot; the host builds a new one whenever a server's lists change."""

    tools: dict[str, ToolEntry] = field(default_factory=dict)
    prompts: dict[str, PromptEntry] = field(default_factory=dict)
    resources: list[ResourceEntry] = field(default_factory=list)
    templates: list[TemplateEntry] = field(default_factory=list)

    @classmethod
    def build(cls, lists: Mapping[str, ServerLists]) -> Catalog:
        tool_names = assign_names((s, tool.name) for s, ls in lists.items() for tool in ls.tools)
        prompt_names = assign_names((s, p.name) for s, ls in lists.items() for p in ls.prompts)
        catalog = cls()
        for server in sorted(lists):
            found = lists[server]
            for tool in found.tools:
                name = tool_names[(server, tool.name)]
                catalog.tools.setdefault(name, ToolEntry(name, server, tool))
            for prompt in found.prompts:
                name = prompt_names[(server, prompt.name)]
                catalog.prompts.setdefault(name, PromptEntry(name, server, prompt))
            catalog.resources.extend(ResourceEntry(server, r) for r in found.resources)
            catalog.templates.extend(TemplateEntry(server, r) for r in found.templates)
        return catalog

    def servers_listing(self, uri: str) -> list[str]:
        return sorted({e.server for e in self.resources if e.resource.uri == uri})


LlmFormat = Literal["openai", "anthropic", "plain"]


def llm_tools(catalog: Catalog, format: LlmFormat = "openai") -> list[dict[str, Any]]:
    """The tools in the shape LLM tool-calling APIs take (no LLM dependency).

    ``openai``: ``{"type": "function", "function": {"name", "description", "parameters"}}``;
    ``anthropic``: ``{"name", "description", "input_schema"}``; ``plain``: ``{"name",
    "description", "parameters", "server"}``. Names are host names, which these APIs accept
    (:mod:`.naming`): pass the model's tool call back to ``Host.call_tool`` unchanged.
    """
    out: list[dict[str, Any]] = []
    for name in sorted(catalog.tools):
        entry = catalog.tools[name]
        description = entry.description
        title = entry.tool.title
        if not description and isinstance(title, str):
            description = title
        schema = entry.input_schema()
        if format == "openai":
            function = {"name": name, "description": description, "parameters": schema}
            out.append({"type": "function", "function": function})
        elif format == "anthropic":
            out.append({"name": name, "description": description, "input_schema": schema})
        else:
            out.append(
                {
                    "name": name,
                    "description": description,
                    "parameters": schema,
                    "server": entry.server,
                }
            )
    return out
