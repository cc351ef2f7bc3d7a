"""server/prompts.mdx (2024-11-05, 2025-03-26, 2025-11-25): listing prompts with their
arguments, getting a prompt with arguments, errors, list_changed."""

from __future__ import annotations

import anyio
import pytest

from mcpbind import ClientHandlers, McpError, json_value
from mcpbind import types as t
from mcpbind.protocol import INVALID_PARAMS

from .conftest import Connect
from .helpers import Notes, settle

pytestmark = pytest.mark.anyio

LIST_CHANGED = "notifications/prompts/list_changed"


@pytest.mark.memory_only
async def test_list_prompts_with_arguments(connect: Connect) -> None:
    """prompts.mdx §Listing Prompts / §Prompt: name, title, description, and arguments with
    name, description and required."""
    async with connect("full") as client:
        prompts = {p.name: p async for p in client.iter_prompts()}
    greet = prompts["greet"]
    assert (greet.title, greet.description) == ("Greeting", "Greet someone.")
    assert greet.arguments == [
        t.PromptArgument(name="name", required=True),
        t.PromptArgument(name="style", required=False),
    ]
    review = prompts["review"]
    assert review.description == "Review some code."
    assert review.arguments == [
        t.PromptArgument(name="code", required=True, description="the code to review"),
        t.PromptArgument(name="language", required=True, description="its language"),
    ]


async def test_get_prompt_with_arguments(connect: Connect) -> None:
    """prompts.mdx §Getting a Prompt / §PromptMessage: arguments fill the template; the result
    has the description and role-tagged messages."""
    async with connect("full") as client:
        plain = await client.get_prompt(
            t.GetPromptRequestParams(name="greet", arguments={"name": "Ada"})
        )
        formal = await client.get_prompt(
            t.GetPromptRequestParams(name="greet", arguments={"name": "Ada", "style": "formal"})
        )
    assert plain.description == "Greet someone."
    assert plain.messages == [
        t.PromptMessage(role="user", content=t.TextContent(text="Hello Ada (plain)"))
    ]
    assert formal.messages[0].content == t.TextContent(text="Hello Ada (formal)")


@pytest.mark.memory_only
async def test_prompt_with_several_messages(connect: Connect) -> None:
    """prompts.mdx §PromptMessage: a prompt may return a conversation (user and assistant)."""
    async with connect("full") as client:
        result = await client.get_prompt(
            t.GetPromptRequestParams(name="review", arguments={"code": "x=1", "language": "py"})
        )
    assert [(m.role, m.content) for m in result.messages] == [
        ("user", t.TextContent(text="Review this py:")),
        ("assistant", t.TextContent(text="x=1")),
    ]


@pytest.mark.memory_only
async def test_prompt_errors_are_invalid_params(connect: Connect) -> None:
    """prompts.mdx §Error Handling: "Invalid prompt name: -32602", "Missing required arguments:
    -32602"."""
    async with connect("full") as client:
        for params, where in [
            (t.GetPromptRequestParams(name="nope"), "nope"),
            (t.GetPromptRequestParams(name="greet", arguments={}), "`name`"),
            (t.GetPromptRequestParams(name="review", arguments={"code": "x"}), "`language`"),
        ]:
            with pytest.raises(McpError) as caught:
                await client.get_prompt(params)
            assert caught.value.code == INVALID_PARAMS
            assert where in caught.value.message


@pytest.mark.memory_only
async def test_prompt_list_changed(connect: Connect) -> None:
    """prompts.mdx §List Changed Notification: a server that declared ``listChanged`` SHOULD
    notify when the list changes; the new prompt is then listed."""
    notes = Notes()
    async with connect("full", handlers=ClientHandlers(notification=notes)) as client:
        await client.call("add_prompt", {"name": "later"})
        await settle(client, notes, LIST_CHANGED)
        names = {p.name async for p in client.iter_prompts()}
    assert notes.count(LIST_CHANGED) == 1
    assert "later" in names


@pytest.mark.memory_only
async def test_registering_a_prompt_later_does_not_break_the_session(connect: Connect) -> None:
    """prompts.mdx §Capabilities / §List Changed Notification + lifecycle.mdx §Operation ("Only
    use capabilities that were successfully negotiated"): a session that started without the
    prompts capability sends no prompts/list_changed -- and keeps working."""
    notes = Notes()
    async with connect("tools-only", handlers=ClientHandlers(notification=notes)) as client:
        await client.call("add_prompt", {"name": "late"})
        await anyio.sleep(0.2)
        await client.ping()
        assert json_value((await client.call("echo", {"text": "still"})).structured_content) == {
            "result": "still"
        }
    assert LIST_CHANGED not in notes.methods()
