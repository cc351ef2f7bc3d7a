"""The 2026-07-28 conformance scenarios' request sequences, replayed through the transport-
independent seam ``mcpbind.server.dispatch.answer`` (what the Streamable HTTP layer will call):
input-required-result-*, caching, sep-2164-resource-not-found and the JSON-RPC half of
server-stateless (basic/patterns/mrtr.mdx, server/utilities/caching.mdx, basic/index.mdx)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from mcpbind import Server
from mcpbind.server.dispatch import answer

from .helpers import accept, sampled

pytestmark = pytest.mark.anyio

_PATH = Path(__file__).resolve().parents[2] / "conformance" / "stateless_tools.py"
_SPEC = importlib.util.spec_from_file_location("stateless_tools", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
_TOOLS = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_TOOLS)

HARNESS_CAPS = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
ROOTS = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}


def _server() -> Server:
    server = Server("everything", version="1.0.0")
    _TOOLS.register_stateless_tools(server)

    @server.resource("test://static-text", mime_type="text/plain")
    def static_text() -> str:
        return "static"

    @server.resource_template("test://template/{id}/data")
    def data(id: str) -> str:
        return id

    return server


class Harness:
    """Sends what the suite's request helper sends: the scenario's params plus its _meta."""

    def __init__(self) -> None:
        self.server = _server()
        self.next_id = 1

    async def send(
        self, method: str, params: dict[str, Any] | None = None, *, meta: bool = True
    ) -> dict[str, Any]:
        body = dict(params or {})
        if meta:
            body["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "conformance", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": HARNESS_CAPS,
                **body.get("_meta", {}),
            }
        self.next_id += 1
        reply = await answer(self.server, self.next_id, method, json.dumps(body).encode())
        message: dict[str, Any] = json.loads(reply.data)
        assert message["id"] == self.next_id
        return message

    async def call(self, name: str, **params: Any) -> dict[str, Any]:
        return await self.send("tools/call", {"name": name, "arguments": {}, **params})


def _complete(message: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = message["result"]
    assert result["resultType"] == "complete"
    return result


def _input_required(message: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = message["result"]
    assert result["resultType"] == "input_required"
    return result


@pytest.mark.parametrize(
    ("tool", "key", "method", "response"),
    [
        (
            "test_input_required_result_elicitation",
            "user_name",
            "elicitation/create",
            accept(name="Alice"),
        ),
        (
            "test_input_required_result_sampling",
            "capital_question",
            "sampling/createMessage",
            sampled("Paris"),
        ),
        ("test_input_required_result_list_roots", "client_roots", "roots/list", ROOTS),
        (
            "test_input_required_result_request_state",
            "confirm",
            "elicitation/create",
            accept(ok=True),
        ),
    ],
)
async def test_basic_scenarios(tool: str, key: str, method: str, response: Any) -> None:
    """input-required-result-basic-{elicitation,sampling,list-roots}, -request-state."""
    h = Harness()
    first = _input_required(await h.call(tool))
    assert first["inputRequests"][key]["method"] == method
    assert isinstance(first["requestState"], str)
    done = _complete(
        await h.call(tool, inputResponses={key: response}, requestState=first["requestState"])
    )
    assert done["content"]
    if tool.endswith("request_state"):
        assert "state-ok" in done["content"][0]["text"]


async def test_multiple_and_multi_round() -> None:
    """input-required-result-multiple-input-requests and -multi-round."""
    h = Harness()
    first = _input_required(await h.call("test_input_required_result_multiple_inputs"))
    methods = {r["method"] for r in first["inputRequests"].values()}
    assert methods == {"elicitation/create", "sampling/createMessage", "roots/list"}
    answers = {
        "elicitation/create": accept(name="Alice"),
        "sampling/createMessage": sampled("Hello there!"),
        "roots/list": ROOTS,
    }
    responses = {k: answers[r["method"]] for k, r in first["inputRequests"].items()}
    _complete(
        await h.call(
            "test_input_required_result_multiple_inputs",
            inputResponses=responses,
            requestState=first["requestState"],
        )
    )
    r1 = _input_required(await h.call("test_input_required_result_multi_round"))
    r2 = _input_required(
        await h.call(
            "test_input_required_result_multi_round",
            inputResponses={"step1": accept(name="Alice")},
            requestState=r1["requestState"],
        )
    )
    assert r2["requestState"] != r1["requestState"] and "step2" in r2["inputRequests"]
    _complete(
        await h.call(
            "test_input_required_result_multi_round",
            inputResponses={"step2": accept(color="blue")},
            requestState=r2["requestState"],
        )
    )


async def test_error_handling_scenarios() -> None:
    """input-required-result-missing-input-response, -ignore-extra-params, -validate-input,
    -tampered-state, -result-type, -unsupported-methods, -capability-check, -non-tool-request."""
    h = Harness()
    tool = "test_input_required_result_elicitation"
    _input_required(await h.call(tool, inputResponses={"wrong_key": accept(data="wrong")}))
    _complete(
        await h.call(
            tool,
            inputResponses={
                "user_name": accept(name="Alice"),
                "unknown_extra_key": accept(foo="bar"),
                "another_unexpected": accept(baz=123),
            },
        )
    )
    assert (await h.call(tool, inputResponses={"user_name": 12345}))["error"]["code"] == -32602
    assert (await h.call(tool, inputResponses=None))["error"]["code"] == -32602
    tampered = _input_required(await h.call("test_input_required_result_tampered_state"))
    bad = await h.call(
        "test_input_required_result_tampered_state",
        inputResponses={"confirm": accept(ok=True)},
        requestState=tampered["requestState"] + "-TAMPERED",
    )
    assert bad["error"]["code"] == -32602
    for method in ("tools/list", "prompts/list"):
        _complete(await h.send(method, {}))
    sampling_only = await h.send(
        "tools/call",
        {
            "name": "test_input_required_result_capabilities",
            "arguments": {},
            "_meta": {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}},
        },
    )
    requests = _input_required(sampling_only)["inputRequests"].values()
    assert [r["method"] for r in requests] == ["sampling/createMessage"]
    prompt = _input_required(
        await h.send("prompts/get", {"name": "test_input_required_result_prompt"})
    )
    done = _complete(
        await h.send(
            "prompts/get",
            {
                "name": "test_input_required_result_prompt",
                "inputResponses": {"user_context": accept(context="test context")},
                "requestState": prompt["requestState"],
            },
        )
    )
    assert done["messages"]


async def test_caching_and_resource_not_found() -> None:
    """caching (SEP-2549) and sep-2164-resource-not-found."""
    h = Harness()
    listed = None
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        result = _complete(await h.send(method, {}))
        assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
        assert result["cacheScope"] in ("public", "private")
        listed = result if method == "resources/list" else listed
    assert listed is not None
    read = _complete(await h.send("resources/read", {"uri": listed["resources"][0]["uri"]}))
    assert "ttlMs" in read and "cacheScope" in read
    missing = await h.send(
        "resources/read", {"uri": "test://nonexistent-resource-for-conformance-testing"}
    )
    assert missing["error"]["code"] == -32602
    assert missing["error"]["data"]["uri"] == "test://nonexistent-resource-for-conformance-testing"


async def test_server_stateless_jsonrpc_checks() -> None:
    """server-stateless (SEP-2575), the checks that do not depend on HTTP: _meta validation,
    clientInfo optional, discover, serverInfo, capabilities vs handlers, version error,
    missing capability, removed methods."""
    h = Harness()
    meta_cases: list[dict[str, Any]] = [
        {},
        {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}},
        {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    ]
    for params in meta_cases:
        assert (await h.send("server/discover", params, meta=False))["error"]["code"] == -32602
    no_info = await h.send(
        "server/discover",
        {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
        meta=False,
    )
    discovered = _complete(no_info)
    assert discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "everything"
    assert "prompts" in discovered["capabilities"] and "tools" in discovered["capabilities"]
    unsupported = await h.send(
        "server/discover", {"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0"}}
    )
    assert unsupported["error"]["code"] == -32022
    assert set(unsupported["error"]["data"]["supported"]) <= set(discovered["supportedVersions"])
    assert unsupported["error"]["data"]["requested"] == "v999.0.0"
    missing = await h.send(
        "tools/call",
        {
            "name": "test_missing_capability",
            "arguments": {},
            "_meta": {"io.modelcontextprotocol/clientCapabilities": {}},
        },
    )
    assert missing["error"]["code"] == -32021
    assert missing["error"]["data"]["requiredCapabilities"] == {"sampling": {}}
    for method in ("initialize", "ping", "logging/setLevel", "no/such/method"):
        assert (await h.send(method, {}))["error"]["code"] == -32601
