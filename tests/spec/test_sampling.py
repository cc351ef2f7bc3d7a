"""client/sampling.mdx (2024-11-05, 2025-03-26, 2025-11-25): a server handler asks the
client's LLM through ``sampling/createMessage``; only when the client declared ``sampling``."""

from __future__ import annotations

import pytest

from mcpbind import ClientHandlers, McpError
from mcpbind import types as t
from mcpbind.protocol import INTERNAL_ERROR, METHOD_NOT_FOUND, SessionOptions

from .conftest import Connect
from .helpers import memory_session, text_of

pytestmark = pytest.mark.anyio


class Sampler:
    def __init__(self) -> None:
        self.requests: list[t.CreateMessageRequestParams] = []

    async def __call__(self, params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        self.requests.append(params)
        (message,) = params.messages
        assert isinstance(message.content, t.TextContent)
        reply = t.TextContent(text=f"echo {message.content.text}")
        return t.CreateMessageResult(
            content=reply, model="model-x", role="assistant", stop_reason="endTurn"
        )


async def test_tool_samples_through_the_client(connect: Connect) -> None:
    """sampling.mdx §Creating Messages: the request carries messages, maxTokens and an optional
    systemPrompt; the client answers with role, content, model and stopReason."""
    sampler = Sampler()
    async with connect("full", handlers=ClientHandlers(sampling=sampler)) as client:
        result = await client.call("sample", {"prompt": "hi"})
    assert text_of(result) == "model-x: echo hi"
    (request,) = sampler.requests
    assert (request.max_tokens, request.system_prompt) == (32, "be brief")
    assert request.messages == [t.SamplingMessage(role="user", content=t.TextContent(text="hi"))]


@pytest.mark.memory_only
async def test_sampling_is_refused_locally_without_the_capability(connect: Connect) -> None:
    """sampling.mdx §Capabilities: "Clients that support sampling MUST declare the sampling
    capability" -- the server does not send the request to a client that did not; the refusal
    (LocalProtocolError in the handler) reaches the caller as a tool execution error."""
    async with connect("full") as client:
        result = await client.call("sample", {"prompt": "hi"})
    assert result.is_error is True
    assert "sampling" in text_of(result)


@pytest.mark.memory_only
async def test_nothing_is_sent_when_refused_locally() -> None:
    """sampling.mdx §Capabilities + lifecycle.mdx §Operation: the refusal is local, nothing
    reaches the wire."""
    async with memory_session("full") as (client, _session, wire):
        await client.call("sample", {"prompt": "hi"})
    assert "sampling/createMessage" not in wire.sent_methods()


@pytest.mark.memory_only
async def test_client_answers_method_not_found_without_the_capability() -> None:
    """sampling.mdx §Capabilities / roots.mdx §Error Handling analogue: a client that did not
    declare sampling answers a sampling request (from a server not enforcing capabilities)
    with -32601; a rejecting user gives -1 (sampling.mdx §Error Handling)."""
    options = SessionOptions(enforce_capabilities=False)
    async with memory_session("full", session_options=options) as (client, _session, wire):
        result = await client.call("sample", {"prompt": "hi"})
        assert result.is_error is True  # the tool's nested request failed: a tool error
    (request,) = [m for m in wire.sent if m.get("method") == "sampling/createMessage"]
    (answer,) = [m for m in wire.received if m.get("id") == request["id"] and "method" not in m]
    assert answer["error"]["code"] == METHOD_NOT_FOUND

    async def reject(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        raise McpError(-1, "User rejected sampling request")

    handlers = ClientHandlers(sampling=reject)
    async with memory_session("full", handlers=handlers) as (client, _session, wire):
        result = await client.call("sample", {"prompt": "hi"})
        assert result.is_error is True
    (request,) = [m for m in wire.sent if m.get("method") == "sampling/createMessage"]
    (answer,) = [m for m in wire.received if m.get("id") == request["id"] and "method" not in m]
    assert answer["error"] == {"code": -1, "message": "User rejected sampling request"}


@pytest.mark.memory_only
async def test_nested_request_error_is_not_the_tool_call_error() -> None:
    """tools.mdx §Error Handling + sampling.mdx §Error Handling: when the client refuses the
    nested sampling request, the tools/call fails as a tool execution error (isError) or an
    internal error (-32603) -- not with the nested request's -32601."""
    options = SessionOptions(enforce_capabilities=False)
    async with memory_session("full", session_options=options) as (client, _session, _wire):
        try:
            result = await client.call("sample", {"prompt": "hi"})
        except McpError as exc:
            assert exc.code == INTERNAL_ERROR, exc
        else:
            assert result.is_error is True


# ------------------------------------------------------------------ §Tools in Sampling
@pytest.mark.memory_only
async def test_tools_are_not_sent_to_a_client_without_sampling_tools(connect: Connect) -> None:
    """sampling.mdx §Tools in Sampling: "Servers MUST NOT send tool-enabled sampling requests
    to Clients that have not declared support for tool use via the sampling.tools
    capability": refused before anything is sent; the client's sampler never sees it."""
    sampler = Sampler()
    async with connect("full", handlers=ClientHandlers(sampling=sampler)) as client:
        assert client.capabilities().sampling == t.ClientCapabilitiesSampling()
        assert text_of(await client.call("supports", {"path": ["sampling", "tools"]})) == "false"
        result = await client.call("sample_with_tools")
    assert result.is_error is True
    assert "needs the client capability 'sampling.tools'" in text_of(result)
    assert sampler.requests == []


async def test_tools_reach_a_client_that_declares_sampling_tools(connect: Connect) -> None:
    """sampling.mdx §Tools in Sampling and §Capabilities ("With tool use support"): a client
    declaring ``sampling.tools`` (``ClientHandlers(sampling_tools=True)``) gets the tools and
    the tool choice."""
    sampler = Sampler()
    handlers = ClientHandlers(sampling=sampler, sampling_tools=True)
    async with connect("full", handlers=handlers) as client:
        assert client.capabilities().sampling == t.ClientCapabilitiesSampling(tools={})
        assert text_of(await client.call("sample_with_tools")) == "model-x"
    (request,) = sampler.requests
    assert isinstance(request.tools, list) and [tool.name for tool in request.tools] == [
        "get_weather"
    ]
    assert request.tool_choice == t.ToolChoice(mode="auto")
