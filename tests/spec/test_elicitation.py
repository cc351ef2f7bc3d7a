"""client/elicitation.mdx (2025-06-18, 2025-11-25): a server handler asks the user through
``elicitation/create`` (form and URL modes); only when the client declared ``elicitation``
and the negotiated version has it."""

from __future__ import annotations

from typing import Any

import pytest

from mcpbind import ClientHandlers, json_value
from mcpbind import types as t

from .conftest import Connect
from .helpers import text_of

pytestmark = pytest.mark.anyio


class Elicitor:
    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None) -> None:
        self.action = action
        self.content = content
        self.requests: list[Any] = []

    async def __call__(self, params: Any) -> t.ElicitResult:
        self.requests.append(params)
        result = t.ElicitResult(action=self.action)  # type: ignore[arg-type]
        if self.content is not None:
            result.content = self.content
        return result


async def test_form_mode_accept(connect: Connect) -> None:
    """elicitation.mdx §Form Mode Elicitation Requests / §Requested Schema / §Response Actions:
    the request carries a message and a flat requestedSchema; "accept" returns the content."""
    elicitor = Elicitor("accept", {"name": "Ada"})
    async with connect("full", handlers=ClientHandlers(elicitation=elicitor)) as client:
        result = await client.call("elicit_name")
    assert json_value(result.structured_content) == {"action": "accept", "content": {"name": "Ada"}}
    (request,) = elicitor.requests
    assert isinstance(request, t.ElicitRequestFormParams)
    assert request.message == "What is your name?"
    assert request.requested_schema.required == ["name"]
    assert request.requested_schema.properties["name"] == t.StringSchema(
        type="string", min_length=1
    )


@pytest.mark.memory_only
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_carry_no_content(connect: Connect, action: str) -> None:
    """elicitation.mdx §Response Actions: "decline" (explicit refusal) and "cancel" (dismissed)
    carry no content."""
    handlers = ClientHandlers(elicitation=Elicitor(action))
    async with connect("full", handlers=handlers) as client:
        result = await client.call("elicit_name")
    assert json_value(result.structured_content) == {"action": action, "content": None}


@pytest.mark.memory_only
async def test_url_mode(connect: Connect) -> None:
    """elicitation.mdx §URL Mode Elicitation Requests (2025-11-25): mode "url" with url and
    elicitationId; the client answers with an action only."""
    elicitor = Elicitor("accept")
    async with connect("full", handlers=ClientHandlers(elicitation=elicitor)) as client:
        assert text_of(await client.call("elicit_url")) == "accept"
    (request,) = elicitor.requests
    assert isinstance(request, t.ElicitRequestURLParams)
    assert (request.url, request.elicitation_id) == ("https://example.com/login", "e-1")


@pytest.mark.memory_only
async def test_elicitation_refused_without_the_capability(connect: Connect) -> None:
    """elicitation.mdx §Capabilities: "Clients that support elicitation MUST declare the
    elicitation capability" -- without it the server refuses locally; the tool reports it."""
    async with connect("full") as client:
        result = await client.call("elicit_name")
    assert result.is_error is True
    assert "elicitation" in text_of(result)


@pytest.mark.memory_only
async def test_elicitation_refused_before_it_existed(connect: Connect) -> None:
    """lifecycle.mdx §Operation ("Respect the negotiated protocol version"): elicitation was
    added in 2025-06-18, so a 2025-03-26 session refuses it even with a handler."""
    elicitor = Elicitor("accept", {"name": "Ada"})
    handlers = ClientHandlers(elicitation=elicitor)
    async with connect("full", handlers=handlers, protocol_version="2025-03-26") as client:
        result = await client.call("elicit_name")
    assert result.is_error is True
    assert "elicitation/create" in text_of(result)
    assert elicitor.requests == []
