"""2026-07-28 basic/patterns/mrtr.mdx §Client Requirements over Streamable HTTP: the
client answers inputRequests with the application's handlers and retries with a new id,
inputResponses and the exact requestState; a result without resultType is complete."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers, McpError, types

from ._support import Running


def test_input_required_round_trip(served: Running) -> None:
    """§Client Requirements: echo requestState exactly, send inputResponses keyed like the
    inputRequests, use a new JSON-RPC id for the retry. The official SDK's server seals the
    state (the handler reads ``opaque-state-1`` only if the echo was exact)."""
    mock = served
    asked: list[str] = []

    async def elicit(params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def go() -> str:
        async with Client(
            mock.url, protocol_version="auto", handlers=ClientHandlers(elicitation=elicit)
        ) as client:
            result = await client.call("ask", {})
            return result.content[0].text  # type: ignore[union-attr]

    mock.clear()
    assert anyio.run(go) == "hello Ada (opaque-state-1)"
    assert asked == ["Your name?"]
    first, retry = (e["body"] for e in mock.requests("tools/call"))
    assert first["id"] != retry["id"]
    assert "requestState" not in first["params"] and "inputResponses" not in first["params"]
    if served.kind == "mock":
        assert retry["params"]["requestState"] == "opaque-state-1"
    else:  # sealed by the server: opaque to the client, echoed as it came
        assert isinstance(retry["params"]["requestState"], str)
    assert retry["params"]["inputResponses"]["who"]["action"] == "accept"


def test_undeclared_input_is_refused_without_a_retry(served: Running) -> None:
    """mrtr.mdx: the client cannot answer an elicitation it did not declare; the call fails
    with an error and no retry is sent."""
    mock = served

    async def go() -> None:
        async with Client(mock.url, protocol_version="auto") as client:
            await client.call("ask", {})

    mock.clear()
    with pytest.raises(McpError, match="elicitation"):
        anyio.run(go)
    assert len(mock.requests("tools/call")) == 1


def test_result_without_result_type_is_complete(mock: Running) -> None:
    """changelog.mdx, major change 8: a result that omits resultType is "complete"."""

    async def go() -> str:
        async with Client(mock.url, protocol_version="auto") as client:
            result = await client.call("legacy", {})
            return result.content[0].text  # type: ignore[union-attr]

    mock.clear()
    assert anyio.run(go) == "no resultType"
    assert len(mock.requests("tools/call")) == 1
