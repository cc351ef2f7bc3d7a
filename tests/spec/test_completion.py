"""server/utilities/completion.mdx (2024-11-05, 2025-03-26, 2025-11-25): completion of prompt
and resource-template arguments, context arguments, the 100-value cap with total/hasMore,
capability gating and errors."""

from __future__ import annotations

from typing import Any

import pytest

from mcpbind import McpError
from mcpbind import types as t
from mcpbind.protocol import INVALID_PARAMS, LocalProtocolError

from .conftest import Connect

pytestmark = pytest.mark.anyio


def _request(ref: Any, name: str, value: str, **context: str) -> t.CompleteRequestParams:
    params = t.CompleteRequestParams(
        ref=ref, argument=t.CompleteRequestParamsArgument(name=name, value=value)
    )
    if context:
        params.context = t.CompleteRequestParamsContext(arguments=context)
    return params


async def test_complete_prompt_argument(connect: Connect) -> None:
    """completion.mdx §Requesting Completions / §Reference Types (``ref/prompt``) /
    §Completion Results: values matching the partial input, with total and hasMore."""
    async with connect("full") as client:
        result = await client.complete(_request(t.PromptReference(name="greet"), "style", "f"))
    assert result.completion == t.CompleteResultCompletion(
        values=["formal", "friendly"], total=2, has_more=False
    )


@pytest.mark.memory_only
async def test_complete_resource_template_argument(connect: Connect) -> None:
    """completion.mdx §Reference Types: ``ref/resource`` completes a URI template variable."""
    ref = t.ResourceTemplateReference(uri="users://{user_id}/profile")
    async with connect("full") as client:
        result = await client.complete(_request(ref, "user_id", "al"))
    assert result.completion.values == ["alice", "albert"]


@pytest.mark.memory_only
async def test_complete_with_context_arguments(connect: Connect) -> None:
    """completion.mdx §Requesting Completions (2025-06-18+): ``context.arguments`` carries
    previously resolved arguments, which the server may use."""
    async with connect("full") as client:
        ref = t.PromptReference(name="review")
        result = await client.complete(_request(ref, "code", "", language="rust"))
    assert result.completion.values == ["rust:hello", "rust:world"]


@pytest.mark.memory_only
async def test_at_most_100_values_with_total_and_has_more(connect: Connect) -> None:
    """completion.mdx §Completion Results: "Maximum 100 items per response"; total and hasMore
    tell the client there are more."""
    async with connect("full") as client:
        result = await client.complete(_request(t.PromptReference(name="greet"), "many", ""))
    completion = result.completion
    assert len(completion.values) == 100
    assert (completion.total, completion.has_more) == (150, True)


@pytest.mark.memory_only
async def test_total_and_has_more_for_a_lazy_completion(connect: Connect) -> None:
    """completion.mdx §Completion Results: total and hasMore describe every available value,
    also when the handler returns an iterator rather than a list."""
    async with connect("full") as client:
        result = await client.complete(_request(t.PromptReference(name="greet"), "lazy", ""))
    completion = result.completion
    assert len(completion.values) == 100
    assert (completion.total, completion.has_more) == (150, True)


@pytest.mark.memory_only
async def test_completion_errors_and_capability(connect: Connect) -> None:
    """completion.mdx §Capabilities: servers that support completions MUST declare
    ``completions`` -- a client does not ask a server that did not (refused locally);
    §Error Handling: invalid arguments are -32602."""
    async with connect("full") as client:
        with pytest.raises(McpError) as caught:
            await client.complete(_request(t.PromptReference(name="greet"), "nope", ""))
        assert caught.value.code == INVALID_PARAMS
    async with connect("tools-only") as client:
        with pytest.raises(LocalProtocolError, match="completions"):
            await client.complete(_request(t.PromptReference(name="greet"), "style", ""))
