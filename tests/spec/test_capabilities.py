"""basic/lifecycle.mdx §Capability Negotiation and §Operation (2024-11-05, 2025-03-26,
2025-11-25): capabilities follow what each side offers, and neither side uses a capability
the other did not declare -- unless enforcement is switched off, in which case the peer
answers -32601."""

from __future__ import annotations

import pytest

from mcpbind import ClientHandlers, McpError, json_value
from mcpbind import types as t
from mcpbind.protocol import METHOD_NOT_FOUND, LocalProtocolError

from .conftest import Connect
from .helpers import memory_session

pytestmark = pytest.mark.anyio


async def _sample(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
    return t.CreateMessageResult(content=t.TextContent(text=""), model="m", role="assistant")


async def _elicit(params: object) -> t.ElicitResult:
    return t.ElicitResult(action="cancel")


@pytest.mark.memory_only
async def test_server_capabilities_follow_registrations(connect: Connect) -> None:
    """lifecycle.mdx §Capability Negotiation: a server declares tools, resources, prompts and
    completions only when it offers them (logging always, listChanged on every list)."""
    async with connect("tools-only") as client:
        assert client.server_capabilities == t.ServerCapabilities(
            logging={}, tools=t.ServerCapabilitiesTools(list_changed=True)
        )
    async with connect("paged") as client:
        caps = client.server_capabilities
    assert caps is not None
    assert caps.prompts == t.ServerCapabilitiesPrompts(list_changed=True)
    assert caps.resources == t.ServerCapabilitiesResources(list_changed=True, subscribe=True)
    assert not isinstance(caps.completions, dict)


async def test_client_capabilities_follow_handlers(connect: Connect) -> None:
    """lifecycle.mdx §Capability Negotiation: the client declares roots (with listChanged),
    sampling and elicitation exactly when it can answer them; the server sees them."""
    handlers = ClientHandlers(
        sampling=_sample, elicitation=_elicit, roots=[t.Root(uri="file:///x")]
    )
    async with connect("full", handlers=handlers) as client:
        seen = json_value((await client.call("whoami")).structured_content)
    assert isinstance(seen, dict)
    assert seen["capabilities"] == {
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
        "roots": {"listChanged": True},
    }


@pytest.mark.memory_only
async def test_client_refuses_undeclared_server_features_before_sending() -> None:
    """lifecycle.mdx §Operation: "Only use capabilities that were successfully negotiated" --
    prompts, resources and completion requests to a tools-only server raise locally and never
    reach the wire."""
    async with memory_session("tools-only") as (client, _session, wire):
        calls = [
            client.get_prompt(t.GetPromptRequestParams(name="greet")),
            client.list_prompts(),
            client.list_resources(),
            client.read_resource(t.ReadResourceRequestParams(uri="file:///x")),
            client.subscribe(t.SubscribeRequestParams(uri="file:///x")),
            client.complete(
                t.CompleteRequestParams(
                    ref=t.PromptReference(name="greet"),
                    argument=t.CompleteRequestParamsArgument(name="a", value=""),
                )
            ),
        ]
        for call in calls:
            with pytest.raises(LocalProtocolError, match="did not declare"):
                await call
        await client.ping()
    assert wire.received_methods() == ["initialize", "notifications/initialized", "ping"]


@pytest.mark.memory_only
async def test_opting_out_lets_the_server_answer_method_not_found(connect: Connect) -> None:
    """lifecycle.mdx §Operation, server side: with ``enforce_capabilities=False`` the request is
    sent, and the server refuses a method of a capability it did not declare with -32601."""
    async with connect("tools-only", enforce_capabilities=False) as client:
        with pytest.raises(McpError) as caught:
            await client.get_prompt(t.GetPromptRequestParams(name="greet"))
        assert caught.value.code == METHOD_NOT_FOUND
        assert "prompts" in caught.value.message
        with pytest.raises(McpError) as caught:
            await client.list_resources()
        assert caught.value.code == METHOD_NOT_FOUND
