"""basic/transports/streamable-http.mdx (2026-07-28) §Sending Messages, §Receiving Messages,
§Cancellation, plus MRTR (basic/patterns/mrtr.mdx) and cache hints
(server/utilities/caching.mdx) over a real uvicorn: JSON or a per-request SSE stream, status
codes from the reply, no session, a closed response stream cancels the request."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from ._era_2026 import LiveServer, Probe, body, live, sse_messages, std_headers, stream_messages

pytestmark = pytest.mark.anyio

PROBE = Probe()
HTTP = httpx2.Client(timeout=10)


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live(PROBE) as s, HTTP:
        yield s


def send(server: LiveServer, message: dict[str, Any], **extra: str) -> httpx2.Response:
    return HTTP.post(server.url, json=message, headers=std_headers(message, **extra))


def call(name: str, arguments: dict[str, Any], rid: int = 1, **params: Any) -> dict[str, Any]:
    return body("tools/call", {"name": name, "arguments": arguments, **params}, rid)


def test_plain_request_is_json_without_session(server: LiveServer) -> None:
    """§Sending Messages 6: a request without notifications gets one JSON object; §Backward
    Compatibility: no session id minted, a sent Mcp-Session-Id is ignored."""
    message = body("tools/list")
    response = send(server, message, **{"mcp-session-id": "made-up"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response.headers
    result = response.json()["result"]
    assert result["resultType"] == "complete"
    again = send(server, body("tools/list", rid=2)).json()["result"]
    assert [tool["name"] for tool in result["tools"]] == [tool["name"] for tool in again["tools"]]
    assert server.app.sessions == {}


def test_cache_hints_over_http(server: LiveServer) -> None:
    """server/utilities/caching.mdx §Cacheable Results: ttlMs and cacheScope on list results
    and resources/read, as served over HTTP."""
    for method, params in (
        ("tools/list", {}),
        ("prompts/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "test://a"}),
    ):
        result = send(server, body(method, params)).json()["result"]
        assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0, method
        assert result["cacheScope"] in ("public", "private"), method


def test_progress_goes_on_the_requests_own_stream(server: LiveServer) -> None:
    """§Receiving Messages: request-scoped notifications precede the final response on the
    request's SSE stream, which the response ends."""
    message = call("chatty", {"n": 3}, _meta={"progressToken": "p1"})
    response = send(server, message)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-accel-buffering"] == "no"
    messages = sse_messages(response.text)
    progress = [m for m in messages if m.get("method") == "notifications/progress"]
    assert [m["params"]["progress"] for m in progress] == [1, 2, 3]
    assert all(m["params"]["progressToken"] == "p1" for m in progress)
    assert messages[-1]["id"] == 1 and messages[-1]["result"]["content"][0]["text"] == "sent 3"
    assert "id:" not in response.text  # 2026-07-28 streams carry no event ids (no resumption)


def test_log_messages_only_with_a_log_level(server: LiveServer) -> None:
    """server/utilities/logging.mdx (2026-07-28): no notifications/message unless the
    request's _meta set a log level; with one, on the request's own stream."""
    quiet = send(server, call("logs", {}))
    assert quiet.headers["content-type"] == "application/json"
    meta = {"io.modelcontextprotocol/logLevel": "info"}
    loud = send(server, call("logs", {}, _meta=meta))
    messages = sse_messages(loud.text)
    assert messages[0]["method"] == "notifications/message"
    assert messages[0]["params"]["data"] == "hello from logs"
    assert messages[-1]["result"]["content"][0]["text"] == "logged"


def test_statuses_follow_the_reply(server: LiveServer) -> None:
    """§Protocol Version Header: unsupported version → 400 with -32022 and the supported
    versions; unknown method → 404 with -32601; removed methods too; missing _meta → 400."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    message = body("tools/list", {"_meta": meta})
    response = send(server, message, **{"mcp-protocol-version": "2099-01-01"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32022
    assert "2026-07-28" in response.json()["error"]["data"]["supported"]
    for method in ("unknown/method", "ping", "logging/setLevel", "resources/subscribe"):
        missing = send(server, body(method, rid=9))
        assert missing.status_code == 404, method
        assert missing.json()["error"]["code"] == -32601 and missing.json()["id"] == 9
    bare = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}
    response = send(server, bare)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32602


def test_modern_initialize_is_method_not_found(server: LiveServer) -> None:
    """basic/versioning.mdx: ``initialize`` carrying the modern _meta is a 2026-07-28 request
    for a removed method: 404, -32601, and no session."""
    message = body("initialize", {"protocolVersion": "2026-07-28"})
    response = send(server, message)
    assert response.status_code == 404 and response.json()["error"]["code"] == -32601
    assert server.app.sessions == {}


def test_mrtr_over_http(server: LiveServer) -> None:
    """mrtr.mdx §Flow: input_required with a sealed requestState; the retry with
    inputResponses completes; a tampered requestState is rejected with -32602."""
    first = send(server, call("greet", {})).json()["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["name"]["method"] == "elicitation/create"
    state = first["requestState"]
    answer = {"name": {"action": "accept", "content": {"name": "Ada"}}}
    retry = call("greet", {}, 2, inputResponses=answer, requestState=state)
    done = send(server, retry).json()["result"]
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "Hello, Ada!"
    tampered = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
    bad = send(server, call("greet", {}, 3, inputResponses=answer, requestState=tampered))
    assert bad.json()["error"]["code"] == -32602
    assert bad.json()["id"] == 3


def test_limits_still_apply(server: LiveServer) -> None:
    """§Security & Endpoint: Host/Origin validation applies to 2026-07-28 POSTs too (403 for
    a foreign Origin), before anything is served."""
    message = body("tools/list")
    response = send(server, message, origin="https://evil.example")
    assert response.status_code == 403


def test_body_limit_applies() -> None:
    """§Security & Endpoint: the body cap (413) applies before era routing."""
    with live(max_body_size=200) as small:
        message = call("echo", {"text": "x" * 500})
        assert send(small, message).status_code == 413


async def test_closed_stream_cancels_the_request(server: LiveServer) -> None:
    """§Cancellation: closing the SSE response stream cancels that request; the handler is
    cancelled and nothing more is sent for it."""
    PROBE.cancelled.clear()
    PROBE.finished.clear()
    message = call("block", {}, 5, _meta={"progressToken": 1})
    async with (
        httpx2.AsyncClient(timeout=10) as client,
        client.stream("POST", server.url, json=message, headers=std_headers(message)) as response,
    ):
        assert response.headers["content-type"] == "text/event-stream"
        async for item in stream_messages(response):
            assert item["method"] == "notifications/progress"
            break  # close the stream mid-request
    for _ in range(200):
        if PROBE.cancelled.is_set():
            break
        await asyncio.sleep(0.02)
    assert PROBE.cancelled.is_set()
    assert not PROBE.finished.is_set()
    # The server is still fine afterwards.
    assert (
        send(server, call("echo", {"text": "after"})).json()["result"]["content"][0]["text"]
        == "after"
    )


def test_notification_post_is_accepted(server: LiveServer) -> None:
    """§Sending Messages 5: a notification POST the server accepts gets 202 and no body."""
    message = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 1, "_meta": body("x")["params"]["_meta"]},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "notifications/cancelled",
    }
    response = HTTP.post(server.url, json=message, headers=headers)
    assert response.status_code == 202 and response.content == b""


def test_json_response_mode_never_streams() -> None:
    """§Sending Messages 6: the server chooses JSON or SSE per request; an app configured for
    JSON responses answers with one JSON object even when the handler reports progress."""
    with live(json_response=True) as plain:
        message = call("chatty", {"n": 2}, _meta={"progressToken": "p"})
        response = send(plain, message)
        assert response.headers["content-type"] == "application/json"
        assert response.json()["result"]["content"][0]["text"] == "sent 2"
