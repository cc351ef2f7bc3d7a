"""basic/patterns/mrtr.mdx: InputRequiredResult, inputResponses, requestState, on the wire."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcpbind.server.request_state import RoundState, StateCodec, binding_for

from .app import SECRET
from .helpers import CAPS, META, accept, check_2026, raw, sampled, v26

pytestmark = pytest.mark.anyio

ROOTS = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}


def text(result: dict[str, Any]) -> str:
    value: str = result["content"][0]["text"]
    return value


async def test_basic_elicitation(transport: str) -> None:
    """mrtr.mdx §Basic Workflow: input_required with the handler's key, then the retry with
    inputResponses and the echoed requestState completes."""
    async with raw(transport) as wire:
        first = await wire.result("tools/call", {"name": "greet", "arguments": {}})
        check_2026(v26.InputRequiredResult, first)
        assert first["resultType"] == "input_required"
        request = first["inputRequests"]["user_name"]
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "What is your name?"
        assert "ttlMs" not in first  # caching.mdx: interim results carry no caching hints
        done = await wire.result(
            "tools/call",
            {
                "name": "greet",
                "arguments": {},
                "inputResponses": {"user_name": accept(name="Alice")},
                "requestState": first["requestState"],
            },
        )
    assert done["resultType"] == "complete"
    assert text(done) == "Hello, Alice!"


@pytest.mark.memory_only
@pytest.mark.parametrize(
    ("tool", "method", "answer", "expected"),
    [
        ("capital", "sampling/createMessage", sampled("Paris"), "Paris"),
        ("roots", "roots/list", ROOTS, '["file:///test/root"]'),
    ],
)
async def test_basic_sampling_and_roots(
    tool: str, method: str, answer: dict[str, Any], expected: str
) -> None:
    """mrtr.mdx §InputRequests: sampling/createMessage and roots/list requests, same flow;
    a retry without requestState (the client may omit what it was not given) also works."""
    async with raw("memory") as wire:
        first = await wire.result("tools/call", {"name": tool})
        (key,) = first["inputRequests"]
        assert first["inputRequests"][key]["method"] == method
        done = await wire.result("tools/call", {"name": tool, "inputResponses": {key: answer}})
    assert text(done) == expected


async def test_multiple_input_requests_in_one_round(transport: str) -> None:
    """mrtr.mdx §InputRequests: one InputRequiredResult carries every request the handler made
    concurrently (elicitation, sampling and roots), answered together in one retry."""
    async with raw(transport) as wire:
        first = await wire.result("tools/call", {"name": "everything"})
        requests = first["inputRequests"]
        assert sorted(r["method"] for r in requests.values()) == [
            "elicitation/create",
            "roots/list",
            "sampling/createMessage",
        ]
        answers = {
            "elicitation/create": accept(name="Alice"),
            "sampling/createMessage": sampled("Hi!"),
            "roots/list": ROOTS,
        }
        responses = {key: answers[r["method"]] for key, r in requests.items()}
        done = await wire.result(
            "tools/call",
            {
                "name": "everything",
                "inputResponses": responses,
                "requestState": first["requestState"],
            },
        )
    assert text(done) == "Alice|Hi!|1"


async def test_multi_round_with_evolving_state(transport: str) -> None:
    """mrtr.mdx §Server Requirements 8: another InputRequiredResult on the retry, with a new
    requestState that remembers round 1's answer."""
    async with raw(transport) as wire:
        r1 = await wire.result("tools/call", {"name": "steps"})
        assert list(r1["inputRequests"]) == ["step1"]
        r2 = await wire.result(
            "tools/call",
            {
                "name": "steps",
                "inputResponses": {"step1": accept(name="Alice")},
                "requestState": r1["requestState"],
            },
        )
        assert r2["resultType"] == "input_required"
        assert list(r2["inputRequests"]) == ["step2"]
        assert r2["requestState"] != r1["requestState"]
        r3 = await wire.result(
            "tools/call",
            {
                "name": "steps",
                "inputResponses": {"step2": accept(color="blue")},
                "requestState": r2["requestState"],
            },
        )
    assert text(r3) == "Alice likes blue"


async def test_missing_input_response_is_requested_again(transport: str) -> None:
    """mrtr.mdx §Error Handling: a retry without the needed response gets a new
    InputRequiredResult asking again, not an error."""
    async with raw(transport) as wire:
        first = await wire.result(
            "tools/call", {"name": "greet", "inputResponses": {"wrong_key": accept(data="x")}}
        )
        assert list(first["inputRequests"]) == ["user_name"]
        again = await wire.result(
            "tools/call",
            {"name": "greet", "inputResponses": {}, "requestState": first["requestState"]},
        )
    assert again["resultType"] == "input_required"
    assert list(again["inputRequests"]) == ["user_name"]


@pytest.mark.memory_only
async def test_extra_input_responses_are_ignored() -> None:
    """mrtr.mdx §Error Handling: unrecognized keys in InputResponses are ignored."""
    async with raw("memory") as wire:
        done = await wire.result(
            "tools/call",
            {
                "name": "greet",
                "inputResponses": {
                    "user_name": accept(name="Alice"),
                    "unknown_extra_key": accept(foo="bar"),
                    "another": {"roots": []},
                },
            },
        )
    assert text(done) == "Hello, Alice!"


@pytest.mark.memory_only
@pytest.mark.parametrize(
    "responses",
    [{"user_name": 12345}, None, {"user_name": {"roots": []}}],
    ids=["number", "null", "wrong-result-type"],
)
async def test_invalid_input_responses(responses: Any) -> None:
    """mrtr.mdx §Error Handling: InputResponses are validated; protocol errors are -32602."""
    async with raw("memory") as wire:
        reply = await wire.request("tools/call", {"name": "greet", "inputResponses": responses})
    assert reply["error"]["code"] == -32602


async def test_tampered_state_is_rejected(transport: str) -> None:
    """mrtr.mdx §Server Requirements 4: requestState is integrity-protected (HMAC-SHA256);
    tampered state fails with -32602 and the handler does not complete."""
    async with raw(transport) as wire:
        first = await wire.result("tools/call", {"name": "greet"})
        state: str = first["requestState"]
        body, _, tag = state.partition(".")
        flipped = body[:-1] + ("A" if body[-1] != "A" else "B")
        for bad in (state + "-TAMPERED", f"{flipped}.{tag}", "garbage", ""):
            reply = await wire.request(
                "tools/call",
                {
                    "name": "greet",
                    "inputResponses": {"user_name": accept(name="Mallory")},
                    "requestState": bad,
                },
            )
            assert reply["error"]["code"] == -32602, bad
            assert reply["error"]["message"] == "Invalid or expired requestState"


@pytest.mark.memory_only
async def test_state_replayed_on_another_request_is_rejected() -> None:
    """mrtr.mdx §Server Requirements 5: the state is bound to the originating request (method,
    tool name, argument digest); presented on another one it is rejected."""
    async with raw("memory") as wire:
        first = await wire.result("tools/call", {"name": "greet", "arguments": {}})
        state = first["requestState"]
        answer = {"user_name": accept(name="Alice")}
        other_tool = await wire.request(
            "tools/call", {"name": "steps", "inputResponses": answer, "requestState": state}
        )
        other_args = await wire.request(
            "tools/call",
            {
                "name": "greet",
                "arguments": {"x": 1},
                "inputResponses": answer,
                "requestState": state,
            },
        )
        other_method = await wire.request(
            "prompts/get",
            {"name": "greet", "inputResponses": answer, "requestState": state},
        )
        same = await wire.result(
            "tools/call",
            {"name": "greet", "arguments": {}, "inputResponses": answer, "requestState": state},
        )
    for reply in (other_tool, other_args, other_method):
        assert reply["error"]["code"] == -32602
    assert text(same) == "Hello, Alice!"


@pytest.mark.memory_only
async def test_expired_state_is_rejected() -> None:
    """mrtr.mdx §Server Requirements 5: a short expiry inside the protected payload."""
    codec = StateCodec(SECRET, ttl=-1.0)  # already expired when sealed
    binding = binding_for("tools/call", _Params("greet"))
    state = codec.seal(RoundState(binding, 0, 1, ["user_name"], {}))
    async with raw("memory") as wire:
        reply = await wire.request(
            "tools/call",
            {
                "name": "greet",
                "inputResponses": {"user_name": accept(name="A")},
                "requestState": state,
            },
        )
    assert reply["error"]["code"] == -32602
    fresh = StateCodec(SECRET, ttl=60.0).seal(RoundState(binding, 0, 1, ["user_name"], {}))
    assert fresh.count(".") == 1 and time.time() > 0


class _Params:
    def __init__(self, name: str) -> None:
        self.name = name
        self.arguments: dict[str, Any] = {}


@pytest.mark.memory_only
async def test_state_from_another_server_key_is_rejected() -> None:
    """mrtr.mdx §Security Considerations: only state this server signed verifies."""
    async with raw("memory", secret=b"another-server-key-0123456789abc") as wire:
        first = await wire.result("tools/call", {"name": "greet"})
    async with raw("memory") as wire:
        reply = await wire.request(
            "tools/call",
            {
                "name": "greet",
                "inputResponses": {"user_name": accept(name="A")},
                "requestState": first["requestState"],
            },
        )
    assert reply["error"]["code"] == -32602


@pytest.mark.memory_only
async def test_rounds_are_bounded() -> None:
    """mrtr.mdx §Server Requirements 8 (servers MAY ask again) with a bound: after
    ``max_rounds`` rounds the server gives up with an error instead of asking forever."""
    async with raw("memory", max_rounds=3) as wire:
        state = None
        for n in range(3):
            params: dict[str, Any] = {"name": "insist"}
            if state is not None:
                params |= {
                    "requestState": state,
                    "inputResponses": {f"ask{n - 1}": accept(word="no")},
                }
            result = await wire.result("tools/call", params)
            assert result["resultType"] == "input_required"
            state = result["requestState"]
        reply = await wire.request(
            "tools/call",
            {
                "name": "insist",
                "requestState": state,
                "inputResponses": {"ask2": accept(word="no")},
            },
        )
    assert reply["error"]["code"] == -32602
    assert "rounds" in reply["error"]["message"]


async def test_prompt_and_resource_requests(transport: str) -> None:
    """mrtr.mdx §Supported Requests: prompts/get and resources/read also use MRTR."""
    async with raw(transport) as wire:
        prompt = await wire.result("prompts/get", {"name": "interview"})
        assert list(prompt["inputRequests"]) == ["user_context"]
        prompt_done = await wire.result(
            "prompts/get",
            {
                "name": "interview",
                "inputResponses": {"user_context": accept(context="birds")},
                "requestState": prompt["requestState"],
            },
        )
        read = await wire.result("resources/read", {"uri": "mem://secret"})
        assert list(read["inputRequests"]) == ["password"]
        read_done = await wire.result(
            "resources/read",
            {
                "uri": "mem://secret",
                "inputResponses": {"password": accept(password="sesame")},
                "requestState": read["requestState"],
            },
        )
    assert prompt_done["messages"][0]["content"]["text"] == "Interview about birds"
    assert read_done["contents"][0]["text"] == "opened"
    assert read_done["resultType"] == "complete" and "ttlMs" in read_done


@pytest.mark.memory_only
async def test_never_on_other_requests() -> None:
    """mrtr.mdx §Supported Requests: no InputRequiredResult on tools/list or prompts/list."""
    async with raw("memory") as wire:
        for method in ("tools/list", "prompts/list", "resources/list"):
            assert (await wire.result(method))["resultType"] == "complete"


@pytest.mark.memory_only
async def test_only_declared_capabilities_are_asked() -> None:
    """mrtr.mdx §Server Requirements 7: inputRequests only for declared capabilities."""
    async with raw("memory") as wire:
        sampling_only = await wire.result(
            "tools/call",
            {
                "name": "polite",
                "_meta": {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}},
            },
        )
        nothing = await wire.result(
            "tools/call",
            {"name": "polite", "_meta": {"io.modelcontextprotocol/clientCapabilities": {}}},
        )
        everything = await wire.result("tools/call", {"name": "polite"})
    assert [r["method"] for r in sampling_only["inputRequests"].values()] == [
        "sampling/createMessage"
    ]
    assert text(nothing) == "nothing to ask"
    assert list(everything["inputRequests"]) == ["user_name"]
    assert META["io.modelcontextprotocol/clientCapabilities"] == CAPS
