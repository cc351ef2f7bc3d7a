"""server/utilities/pagination.mdx (2024-11-05, 2025-03-26, 2025-11-25): server-sized pages,
opaque ``nextCursor`` tokens, stable cursors, and -32602 for invalid cursors, on every
paginated list (tools, resources, resource templates, prompts)."""

from __future__ import annotations

import base64
import json

import pytest

from mcpbind import McpError
from mcpbind import types as t
from mcpbind.protocol import INVALID_PARAMS

from .conftest import Connect

pytestmark = pytest.mark.anyio


async def test_pages_of_two_follow_next_cursor(connect: Connect) -> None:
    """pagination.mdx §Response Format / §Request Format / §Pagination Flow: the page size is
    the server's (2 here); nextCursor is an opaque string present while more results exist, and
    passing it back returns the next page; its absence ends the listing."""
    async with connect("paged") as client:
        first = await client.list_tools()
        assert [tool.name for tool in first.tools] == ["tool0", "tool1"]
        cursor = first.next_cursor
        assert isinstance(cursor, str) and cursor
        second = await client.list_tools(t.PaginatedRequestParams(cursor=cursor))
        assert [tool.name for tool in second.tools] == ["tool2", "tool3"]
        assert isinstance(second.next_cursor, str)
        last = await client.list_tools(t.PaginatedRequestParams(cursor=second.next_cursor))
        assert [tool.name for tool in last.tools] == ["tool4"]
        assert not isinstance(last.next_cursor, str)
        again = await client.list_tools(t.PaginatedRequestParams(cursor=cursor))
        assert again.tools == second.tools  # §Implementation Guidelines: stable cursors
        with pytest.raises(McpError) as caught:  # §Error Handling
            await client.list_tools(t.PaginatedRequestParams(cursor=cursor[::-1]))
        assert caught.value.code == INVALID_PARAMS


@pytest.mark.memory_only
async def test_every_list_paginates(connect: Connect) -> None:
    """pagination.mdx §Operations Supporting Pagination: resources/list,
    resources/templates/list, prompts/list and tools/list; following every cursor yields each
    item once, in order."""
    async with connect("paged") as client:
        tools = [x.name async for x in client.iter_tools()]
        resources = [x.uri async for x in client.iter_resources()]
        templates = [x.uri_template async for x in client.iter_resource_templates()]
        prompts = [x.name async for x in client.iter_prompts()]
        first = await client.list_resource_templates()
    assert tools == [f"tool{i}" for i in range(5)]
    assert resources == [f"memo://item/{i}" for i in range(5)]
    assert templates == [f"memo://tpl{i}/{{x}}" for i in range(5)]
    assert prompts == [f"prompt{i}" for i in range(5)]
    assert len(first.resource_templates) == 2


@pytest.mark.memory_only
@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor",
        "",
        base64.urlsafe_b64encode(json.dumps({"o": -2}).encode()).decode(),
        base64.urlsafe_b64encode(b"[1, 2]").decode(),
    ],
    ids=["garbage", "empty", "negative", "not-an-object"],
)
async def test_invalid_cursor_is_invalid_params(connect: Connect, cursor: str) -> None:
    """pagination.mdx §Error Handling: "Invalid cursors SHOULD result in an error with code
    -32602 (Invalid params)" -- on each paginated method."""
    params = t.PaginatedRequestParams(cursor=cursor)
    async with connect("paged") as client:
        for method in (
            client.list_tools,
            client.list_resources,
            client.list_resource_templates,
            client.list_prompts,
        ):
            with pytest.raises(McpError) as caught:
                await method(params)
            assert caught.value.code == INVALID_PARAMS, method
