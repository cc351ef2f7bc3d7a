"""basic/patterns/mrtr.mdx §Client Requirements: the client answers InputRequiredResult with
the application's handlers and retries; the same handlers serve the handshake era's requests."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpbind import Client, ClientHandlers, McpError, Server
from mcpbind import types as t

from .app import build
from .helpers import client

pytestmark = pytest.mark.anyio


class Answers:
    """Application handlers that count what they were asked."""

    def __init__(self, word: str = "yes") -> None:
        self.word = word
        self.asked: list[str] = []

    async def elicit(self, params: Any) -> t.ElicitResult:
        self.asked.append(params.message)
        return t.ElicitResult(
            action="accept", content={"name": "Alice", "color": "blue", "word": self.word}
        )

    async def sample(self, params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        self.asked.append("sample")
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(text="Paris"), model="test-model"
        )

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(
            elicitation=self.elicit, sampling=self.sample, roots=[t.Root(uri="file:///r")]
        )


def _text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_handlers_answer_on_both_eras(transport: str, version: str) -> None:
    """mrtr.mdx §Client Requirements 1-3 (and client/elicitation.mdx, client/sampling.mdx,
    client/roots.mdx on the handshake era): one concurrent round of three requests and a
    two-round tool, answered by the same handlers whatever the era."""
    answers = Answers()
    async with client(transport, protocol_version=version, handlers=answers.handlers()) as c:
        everything = await c.call("everything")
        steps = await c.call("steps")
        capital = await c.call("capital")
    assert _text(everything) == "Alice|Paris|1"
    assert _text(steps) == "Alice likes blue"
    assert _text(capital) == "Paris"
    assert sorted(answers.asked) == sorted(
        ["What is your name?", "sample", "Step 1: your name?", "Step 2: your colour?", "sample"]
    )


@pytest.mark.memory_only
async def test_prompt_and_resource_rounds() -> None:
    """mrtr.mdx §Supported Requests: the client also completes prompts/get and resources/read."""
    answers = Answers()

    async def password(params: Any) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"password": "sesame", "context": "owls"})

    handlers = ClientHandlers(elicitation=password)
    async with Client(build(), protocol_version="2026-07-28", handlers=handlers) as c:
        prompt = await c.get_prompt(t.GetPromptRequestParams(name="interview"))
        read = await c.read_resource(t.ReadResourceRequestParams(uri="mem://secret"))
    message = prompt.messages[0].content
    assert isinstance(message, t.TextContent) and message.text == "Interview about owls"
    contents = read.contents[0]
    assert isinstance(contents, t.TextResourceContents) and contents.text == "opened"
    assert answers.asked == []


@pytest.mark.memory_only
async def test_client_bounds_its_rounds() -> None:
    """mrtr.mdx §Server Requirements 8 (a server MAY keep asking): the client gives up after
    ``max_input_rounds`` instead of looping forever."""
    answers = Answers(word="no")
    async with Client(
        build(max_rounds=50),
        protocol_version="2026-07-28",
        handlers=answers.handlers(),
        max_input_rounds=3,
    ) as c:
        with pytest.raises(McpError, match="after 3 rounds"):
            await c.call("insist")
    assert len(answers.asked) == 3


@pytest.mark.memory_only
async def test_undeclared_input_request_is_refused() -> None:
    """mrtr.mdx §Server Requirements 7: a server asking for a capability the client did not
    declare gets an error from the client rather than an answer it made up."""
    server = Server("rude")
    server.tool(name="anything")(lambda: "unused")  # declares the tools capability

    @server.method("tools/call")
    async def call(params: Any, ctx: Any) -> dict[str, Any]:
        return {
            "resultType": "input_required",
            "inputRequests": {
                "s": {
                    "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 5},
                }
            },
        }

    async with Client(server, protocol_version="2026-07-28") as c:
        with pytest.raises(McpError, match="did not declare"):
            await c.call_tool(t.CallToolRequestParams(name="anything"))


@pytest.mark.parametrize(
    ("handlers", "request_", "needed"),
    [
        (
            {"elicitation_modes": ("form",)},
            {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"},
            },
            "'elicitation.url'",
        ),
        (
            {},
            {
                "method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": 5, "tools": []},
            },
            "'sampling.tools'",
        ),
    ],
)
async def test_input_request_needing_an_undeclared_subcapability_is_refused(
    handlers: dict[str, Any], request_: dict[str, Any], needed: str
) -> None:
    """client/elicitation.mdx §Capabilities and §Error Handling, client/sampling.mdx §Tools in
    Sampling, in an input round: a URL-mode elicitation for a form-only client, or tools for
    a client without ``sampling.tools``, is refused (-32602) and the handler never runs."""
    server = Server("pushy")
    server.tool(name="anything")(lambda: "unused")

    @server.method("tools/call")
    async def call(params: Any, ctx: Any) -> dict[str, Any]:
        return {"resultType": "input_required", "inputRequests": {"k": request_}}

    answers = Answers()
    declared = ClientHandlers(elicitation=answers.elicit, sampling=answers.sample, **handlers)
    async with Client(server, protocol_version="2026-07-28", handlers=declared) as c:
        with pytest.raises(McpError, match=needed) as caught:
            await c.call_tool(t.CallToolRequestParams(name="anything"))
    assert caught.value.code == -32602
    assert answers.asked == []


@pytest.mark.memory_only
async def test_handler_may_return_input_required_itself() -> None:
    """mrtr.mdx §Basic Workflow: a server may build the InputRequiredResult itself and read
    inputResponses from the retry's params (the official SDK's style); the client completes
    it the same way."""
    server = Server("explicit")
    server.tool(name="x")(lambda: "unused")  # declares the tools capability

    @server.method("tools/call")
    async def call(params: Any, ctx: Any) -> Any:
        responses = params.get("inputResponses") or {}
        if "n" not in responses:
            schema = t.ElicitRequestFormParamsRequestedSchema(type="object", properties={})
            form = t.ElicitRequestFormParams(message="n?", requested_schema=schema)
            return t.InputRequiredResult(
                input_requests={"n": t.ElicitRequest(params=form)}, request_state="plain-state"
            )
        assert params.get("requestState") == "plain-state"  # echoed exactly
        return {"content": [{"type": "text", "text": f"got {responses['n']['content']}"}]}

    answers = Answers()
    async with Client(server, protocol_version="2026-07-28", handlers=answers.handlers()) as c:
        result = await c.call_tool(t.CallToolRequestParams(name="x"))
    assert _text(result) == "got {'name': 'Alice', 'color': 'blue', 'word': 'yes'}"
    assert result.result_type == "complete"


@pytest.mark.memory_only
async def test_parallel_requests_keep_their_own_rounds() -> None:
    """mrtr.mdx §Client Requirements 4: inputRequests and requestState affect only the retry
    of their own request, even with many multi-round requests in flight at once."""
    answers = Answers()

    async def steps(i: int) -> str:
        result = await c.call("steps") if i % 2 else await c.call("greet")
        return _text(result)

    async with Client(build(), protocol_version="2026-07-28", handlers=answers.handlers()) as c:
        results = await asyncio.gather(*(steps(i) for i in range(20)))
    assert results == ["Hello, Alice!", "Alice likes blue"] * 10
    assert len(answers.asked) == 10 * 1 + 10 * 2
