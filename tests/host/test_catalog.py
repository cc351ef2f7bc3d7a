"""Aggregation: one catalog over every server (architecture §Host: "Manages context aggregation
across clients"), fully paginated, refreshed on list_changed, routed to the owning server."""

from __future__ import annotations

import json
import re

import pytest
from jsonschema import Draft202012Validator

from mcpbind import Server
from mcpbind import types as t
from mcpbind.host import Host, HostError, UnknownName, is_portable_name, is_valid_tool_name

from .helpers import recorded, text_of, wait_for
from .servers import normal

pytestmark = pytest.mark.anyio

TOOLS = [
    *("append", "ask", "echo", "roots", "sample", "sample_with_tools", "search", "slow", "wipe"),
    "write",
]


async def test_catalog_spans_servers_with_every_page() -> None:
    """server/utilities/pagination.mdx: the host follows nextCursor to the end (page size 2
    here); server/tools.mdx §Tool Names: every host name is valid; each entry names its server."""
    web, web_wire = recorded(normal("web"))
    docs, docs_wire = recorded(normal("docs"))
    async with Host({"web": web, "docs": docs}) as host:
        catalog = host.catalog
        assert sorted(catalog.tools) == sorted(f"{s}__{n}" for s in ("docs", "web") for n in TOOLS)
        assert all(is_valid_tool_name(n) and is_portable_name(n) for n in catalog.tools)
        assert catalog.tools["web__search"].server == "web"
        assert catalog.tools["docs__search"].tool.name == "search"
        assert sorted((e.server, e.resource.uri) for e in catalog.resources) == [
            ("docs", "mem://docs/info"),
            ("web", "mem://web/info"),
        ]
        assert sorted(e.template.uri_template for e in catalog.templates) == [
            "mem://docs/items/{id}",
            "mem://web/items/{id}",
        ]
        assert sorted(catalog.prompts) == ["docs__greet", "web__greet"]
    pages = [m for m in web_wire.received if m.get("method") == "tools/list"]
    assert len(pages) == 5  # 10 tools, 2 per page
    assert all("cursor" in (m.get("params") or {}) for m in pages[1:])
    assert docs_wire.methods().count("tools/list") == 5


async def test_calls_route_to_the_owning_server() -> None:
    """architecture §Clients (1:1 with a server): a call by host name reaches only its server,
    under the server's own tool name."""
    web, web_wire = recorded(normal("web"))
    docs, docs_wire = recorded(normal("docs"))
    async with Host({"web": web, "docs": docs}) as host:
        result = await host.call_tool("docs__search", {"query": "q"})
        assert text_of(result) == "docs results for q"
        read = await host.read_resource("mem://web/items/7")
        assert isinstance(read.contents[0], t.TextResourceContents)
        assert read.contents[0].text == "item 7 of web"
        prompt = await host.get_prompt("web__greet", {"who": "Ann"})
        assert isinstance(prompt.messages[0].content, t.TextContent)
        assert prompt.messages[0].content.text == "Hello Ann from web"
    calls = [m for m in docs_wire.received if m.get("method") == "tools/call"]
    assert [c["params"]["name"] for c in calls] == ["search"]
    assert "tools/call" not in web_wire.methods()
    assert "resources/read" not in docs_wire.methods()


async def test_unknown_and_ambiguous_names() -> None:
    """server/resources.mdx §Reading Resources and tools.mdx §Error Handling: the caller gets a
    clear error, nothing is sent: unknown tool/prompt/resource, and a URI offered by two servers
    unless the server is named."""
    server = normal("same")
    async with Host({"a": server, "b": server}) as host:
        with pytest.raises(UnknownName, match="Unknown tool: 'nope'"):
            await host.call_tool("nope")
        with pytest.raises(UnknownName):
            await host.get_prompt("nope")
        with pytest.raises(UnknownName):
            await host.read_resource("mem://other/x")
        with pytest.raises(HostError, match="offered by a, b"):
            await host.read_resource("mem://same/info")
        read = await host.read_resource("mem://same/info", server="b")
        assert read.contents[0].uri == "mem://same/info"


async def test_a_listing_does_not_shadow_another_servers_template() -> None:
    """server/resources.mdx §Reading Resources: a URI one server lists and another's template
    matches is ambiguous (a listing must not win, or a server could shadow a URI another one
    serves and learn what is read): refused naming both, nothing is sent; naming the server
    reads from it."""
    files, files_wire = recorded(normal("files"))
    shadow = normal("shadow")
    shadow.resource("mem://files/items/7", name="notes")(lambda: "shadowed")
    shadow_server, shadow_wire = recorded(shadow)
    async with Host({"files": files, "shadow": shadow_server}) as host:
        with pytest.raises(HostError, match="offered by files, shadow; pass server="):
            await host.read_resource("mem://files/items/7")
        assert "resources/read" not in files_wire.methods() + shadow_wire.methods()
        read = await host.read_resource("mem://files/items/7", server="files")
        assert isinstance(read.contents[0], t.TextResourceContents)
        assert read.contents[0].text == "item 7 of files"
    assert "resources/read" not in shadow_wire.methods()


async def test_list_changed_refreshes_the_catalog() -> None:
    """server/tools.mdx §List Changed Notification: a server's new or removed tool shows up in
    (or leaves) the aggregated catalog without a restart."""
    server = normal("live")
    async with Host({"live": server}) as host:

        @server.tool(annotations=t.ToolAnnotations(read_only_hint=True))
        def fresh() -> str:
            return "fresh"

        await wait_for(lambda: "live__fresh" in host.catalog.tools)
        assert text_of(await host.call_tool("live__fresh")) == "fresh"
        server.remove_tool("fresh")
        await wait_for(lambda: "live__fresh" not in host.catalog.tools)


async def test_tools_for_llm_shapes() -> None:
    """server/tools.mdx §Tool (name, description, inputSchema): the catalog rendered the way
    LLM tool-calling APIs take it; the schemas are valid JSON Schema and JSON-serialisable; a
    spec-valid dotted tool name (§Tool Names: ``admin.tools.list``) gets a name those APIs
    accept, and the model's call by that name reaches the tool; basic/lifecycle.mdx
    §Initialization: each server's instructions, by server."""
    web = normal("web")
    web.tool(name="admin.tools.list", annotations=t.ToolAnnotations(read_only_hint=True))(
        lambda: "listed"
    )
    async with Host({"web": web, "docs": normal("docs")}) as host:
        openai = host.tools_for_llm()
        anthropic = host.tools_for_llm("anthropic")
        plain = host.tools_for_llm("plain")
        assert host.instructions() == {"docs": "Ask docs things.", "web": "Ask web things."}
        dotted = next(x["name"] for x in plain if x["name"].startswith("web__admin"))
        assert text_of(await host.call_tool(dotted)) == "listed"
    assert len(openai) == len(anthropic) == len(plain) == 2 * len(TOOLS) + 1
    first = openai[0]
    assert first["type"] == "function"
    assert first["function"]["name"] == "docs__append"
    # OpenAI: ^[a-zA-Z0-9_-]+$ (at most 64); Anthropic: ^[a-zA-Z0-9_-]{1,64}$
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", x["function"]["name"]) for x in openai)
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", x["name"]) for x in anthropic)
    echo = next(x for x in anthropic if x["name"] == "web__echo")
    assert echo["description"] == "Echo the text back."
    assert echo["input_schema"]["properties"]["text"]["type"] == "string"
    Draft202012Validator.check_schema(echo["input_schema"])
    assert {x["server"] for x in plain} == {"web", "docs"}
    json.dumps(openai)


def paged(name: str, count: int) -> Server:
    """``count`` tools, resources, templates and prompts, served one per page."""
    server = Server(name, version="1")
    server.page_size = 1
    for i in range(count):
        server.tool(name=f"t{i}", annotations=t.ToolAnnotations(read_only_hint=True))(
            lambda i=i: f"{name} t{i}"
        )
        server.resource(f"mem://{name}/r{i}", name=f"r{i}")(lambda i=i: f"r{i}")
        server.resource_template(f"mem://{name}/x{i}/{{id}}", name=f"x{i}")(lambda id: id)
        server.prompt(name=f"p{i}")(lambda i=i: f"p{i}")
    return server


async def test_every_list_kind_is_paginated_across_servers() -> None:
    """server/utilities/pagination.mdx §Pagination Flow (page size 1): tools, resources,
    resource templates and prompts of every server are followed to the last page, each page
    asked with the previous nextCursor; every entry names its own server."""
    one, wire_one = recorded(paged("one", 4))
    two, wire_two = recorded(paged("two", 3))
    async with Host({"one": one, "two": two}) as host:
        catalog = host.catalog
        assert sorted(catalog.tools) == [f"one__t{i}" for i in range(4)] + [
            f"two__t{i}" for i in range(3)
        ]
        assert sorted(catalog.prompts) == [f"one__p{i}" for i in range(4)] + [
            f"two__p{i}" for i in range(3)
        ]
        assert sorted((e.server, e.resource.uri) for e in catalog.resources) == [
            (s, f"mem://{s}/r{i}") for s, n in (("one", 4), ("two", 3)) for i in range(n)
        ]
        assert sorted((e.server, e.template.uri_template) for e in catalog.templates) == [
            (s, f"mem://{s}/x{i}/{{id}}") for s, n in (("one", 4), ("two", 3)) for i in range(n)
        ]
    for wire, count in ((wire_one, 4), (wire_two, 3)):
        for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
            pages = [m for m in wire.received if m.get("method") == method]
            assert len(pages) == count, method
            assert "cursor" not in (pages[0].get("params") or {})
            assert all("cursor" in m["params"] for m in pages[1:]), method


async def test_prompt_and_resource_list_changes_refresh_the_catalog() -> None:
    """server/prompts.mdx §List Changed Notification and server/resources.mdx §List Changed
    Notification: the catalog follows a server's prompts and resources without a restart."""
    server = normal("live")
    async with Host({"live": server}) as host:
        server.prompt(name="farewell")(lambda: "bye")
        server.resource("mem://live/extra", name="extra")(lambda: "more")
        await wait_for(
            lambda: (
                "live__farewell" in host.catalog.prompts
                and "mem://live/extra" in {e.resource.uri for e in host.catalog.resources}
            )
        )
        read = await host.read_resource("mem://live/extra")
        assert isinstance(read.contents[0], t.TextResourceContents)
        assert read.contents[0].text == "more"
        server.remove_prompt("greet")
        server.remove_resource("mem://live/extra")
        await wait_for(
            lambda: (
                "live__greet" not in host.catalog.prompts
                and "mem://live/extra" not in {e.resource.uri for e in host.catalog.resources}
            )
        )
