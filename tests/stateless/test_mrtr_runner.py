"""basic/patterns/mrtr.mdx §InputRequests, the server's runner: a handler run either ends
with a result or with every request it made concurrently (one round)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest

from mcpbind import McpError
from mcpbind.server import mrtr
from mcpbind_types.unified import methods as m

pytestmark = pytest.mark.anyio

CAPS: dict[str, Any] = {"elicitation": {}, "roots": {}}
Runner = Callable[[Callable[[], Awaitable[Any]], mrtr.InputRound], Awaitable[mrtr.Outcome]]
RUNNERS: dict[str, Runner] = {
    "asyncio": mrtr.run_with_inputs,  # trio is not supported: the one runner
}


@pytest.fixture(params=sorted(RUNNERS))
def runner(request: pytest.FixtureRequest) -> Runner:
    return RUNNERS[request.param]


async def test_concurrent_asks_join_one_round(runner: Runner) -> None:
    """mrtr.mdx §InputRequests: several requests in one InputRequiredResult."""
    round_ = mrtr.InputRound({}, CAPS)

    async def handler() -> str:
        await asyncio.gather(
            round_.ask(m.S2C_LIST_ROOTS, None, "a"), round_.ask(m.S2C_LIST_ROOTS, None, "b")
        )
        return "never"

    outcome = await runner(handler, round_)
    assert outcome.asked is not None and sorted(outcome.asked) == ["a", "b"]


async def test_answers_are_returned_and_results_pass(runner: Runner) -> None:
    """mrtr.mdx §Basic Workflow: with the answer available the ask returns it."""
    raw = msgspec.Raw(b'{"roots": [{"uri": "file:///x"}]}')
    round_ = mrtr.InputRound({"a": raw}, CAPS)

    async def handler() -> int:
        roots = await round_.ask(m.S2C_LIST_ROOTS, None, "a")
        return len(roots.roots)

    outcome = await runner(handler, round_)
    assert outcome.result == 1 and outcome.asked is None
    assert round_.consumed == {"a": raw}


async def test_handler_errors_propagate(runner: Runner) -> None:
    """mrtr.mdx §Server Requirements 7: an undeclared capability is -32021, not an ask."""
    round_ = mrtr.InputRound({}, {})

    async def handler() -> None:
        await round_.ask(m.S2C_CREATE_MESSAGE, None, "s")

    with pytest.raises(McpError) as caught:
        await runner(handler, round_)
    assert caught.value.code == -32021


@pytest.mark.parametrize(
    ("caps", "method", "params", "missing"),
    [
        (
            {"elicitation": {}},
            m.S2C_ELICIT,
            {"mode": "url", "url": "https://x", "message": "m", "elicitationId": "e"},
            {"elicitation": {"url": {}}},
        ),
        (
            {"sampling": {}},
            m.S2C_CREATE_MESSAGE,
            {"maxTokens": 1, "messages": [], "tools": []},
            {"sampling": {"tools": {}}},
        ),
    ],
)
async def test_undeclared_subcapability_is_not_asked(
    runner: Runner,
    caps: dict[str, Any],
    method: Any,
    params: dict[str, Any],
    missing: dict[str, Any],
) -> None:
    """mrtr.mdx §Server Requirements 7 with client/elicitation.mdx §Capabilities and
    client/sampling.mdx §Tools in Sampling: a URL-mode elicitation for a form-only client, or
    tools for a client without ``sampling.tools``, is -32021 naming the sub-capability."""
    round_ = mrtr.InputRound({}, caps)

    async def handler() -> None:
        await round_.ask(method, params, "k")

    with pytest.raises(McpError) as caught:
        await runner(handler, round_)
    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": missing}
