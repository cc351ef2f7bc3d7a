"""The sans-I/O core: bytes pushed by hand between a client and a server session."""

from __future__ import annotations

import json
import logging

import msgspec
import pytest
from proto_helpers import (
    LATEST,
    handshake,
    init_params,
    init_result,
    only_error,
    outgoing,
    raw_request,
    wire,
)

from mcpbind import json_object
from mcpbind.protocol import (
    CONNECTION_CLOSED,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    Cancelled,
    ErrorReceived,
    LocalProtocolError,
    McpError,
    NotificationReceived,
    ProgressReceived,
    RemoteProtocolError,
    RequestReceived,
    ResponseReceived,
    Session,
    SessionOptions,
    State,
    error_for_exception,
)
from mcpbind_types.unified import methods as m
from mcpbind_types.unified.types import (
    CallToolRequestParams,
    CallToolResult,
    ClientCapabilities,
    ClientCapabilitiesSampling,
    InitializeResult,
    ListToolsResult,
    PaginatedRequestParams,
    Result,
    ServerCapabilities,
    TextContent,
)

NO_ENFORCEMENT = SessionOptions(enforce_capabilities=False)

# -- lifecycle -------------------------------------------------------------------------------


def test_handshake_records_version_capabilities_and_states() -> None:
    """lifecycle.mdx, Initialization: initialize -> result -> notifications/initialized."""
    client = Session("client")
    server = Session("server")
    assert client.state is server.state is State.AWAITING_INIT
    rid, data = client.send_request("initialize", init_params())
    assert client.state is State.INITIALIZING
    (req,) = server.receive(data)
    assert isinstance(req, RequestReceived) and req.id == rid == 1
    assert server.state is State.INITIALIZING and server.peer_capabilities == {}
    (resp,) = client.receive(server.send_response(rid, init_result()) or b"")
    assert isinstance(resp, ResponseReceived) and isinstance(resp.result, InitializeResult)
    assert server.version == client.version == LATEST
    assert client.peer_capabilities is not None and "tools" in client.peer_capabilities
    assert client.state is server.state is State.INITIALIZED
    (note,) = server.receive(client.send_notification("notifications/initialized"))
    assert isinstance(note, NotificationReceived) and note.method == "notifications/initialized"
    assert client.state is server.state is State.OPERATING


def test_server_refuses_requests_before_initialize() -> None:
    """lifecycle.mdx, Initialization: "The client SHOULD NOT send requests other than pings
    before the server has responded to the initialize request". Like the official TypeScript
    SDK ("Server not initialized") we answer -32600; the Python SDK answers -32602 for
    compatibility, which says less."""
    server = Session("server", options=NO_ENFORCEMENT)
    rid, code, message = only_error(server.receive(raw_request(7, "tools/list")))
    assert (rid, code) == (7, INVALID_REQUEST) and "not initialized" in message
    (ping,) = server.receive(raw_request(8, "ping"))
    assert isinstance(ping, RequestReceived)
    (init,) = server.receive(raw_request(9, "initialize", wire(_encode(init_params()))))
    assert isinstance(init, RequestReceived)
    # A second initialize while the first is in progress, and after it completed.
    assert only_error(server.receive(raw_request(10, "initialize", {})))[:2] == (10, -32600)
    server.send_response(9, init_result())
    rid, code, message = only_error(server.receive(raw_request(11, "initialize", {})))
    assert (rid, code) == (11, INVALID_REQUEST) and "already initialized" in message
    # Once the result is out, the client may send requests (ordering guarantees the
    # initialized notification precedes them on a stream).
    (req,) = server.receive(raw_request(12, "tools/list"))
    assert isinstance(req, RequestReceived)


def test_local_lifecycle_misuse_raises_before_producing_bytes() -> None:
    """lifecycle.mdx, Initialization: client sends only pings before the initialize result;
    the server sends only pings (and logging) before the initialized notification."""
    client = Session("client", options=NO_ENFORCEMENT)
    with pytest.raises(LocalProtocolError, match="tools/list"):
        client.send_request("tools/list")
    assert client.pending_ids() == []
    client.send_request("ping")
    client.send_request("initialize", init_params())
    with pytest.raises(LocalProtocolError):
        client.send_request("initialize", init_params())
    server = Session("server", options=NO_ENFORCEMENT)
    with pytest.raises(LocalProtocolError):
        server.send_request("roots/list")
    server.send_request("ping")
    relaxed = Session("client", options=SessionOptions(enforce_lifecycle=False))
    relaxed.send_request("ping")


def test_initialize_error_returns_to_awaiting_init() -> None:
    """lifecycle.mdx, Error Handling: a failed initialize leaves the session uninitialized."""
    client, server = Session("client"), Session("server")
    rid, data = client.send_request("initialize", init_params("1999-01-01"))
    server.receive(data)
    err = McpError(
        UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", {"supported": [LATEST]}
    )
    (event,) = client.receive(server.send_error(rid, err) or b"")
    assert isinstance(event, ErrorReceived) and event.error == err
    assert client.state is server.state is State.AWAITING_INIT


def test_restart_negotiation_goes_back_to_awaiting_initialize() -> None:
    """2026-07-28 basic/versioning.mdx §Backward Compatibility with Initialization-Based
    Versions: a client whose probe found a legacy server runs ``initialize`` on the same
    connection; the restart goes through the transition table, and a closed session stays
    closed."""
    client = Session("client", version="2026-07-28")
    assert client.state is State.OPERATING
    client.restart_negotiation()
    assert client.version is None and client.state is State.AWAITING_INIT
    with pytest.raises(LocalProtocolError, match="before initialization completes"):
        client.send_request("tools/list")
    server = Session("server")
    rid, data = client.send_request("initialize", init_params())
    server.receive(data)
    client.receive(server.send_response(rid, init_result()) or b"")
    assert client.version == LATEST and client.state is State.INITIALIZED
    client.fail_all()
    client.restart_negotiation()
    assert client.state is State.CLOSED


def test_check_send_capability_is_the_refusal_send_request_makes() -> None:
    """basic/lifecycle.mdx, Capability Negotiation: the check a sender runs before any
    bytes exist, callable on its own (a request sent another way, e.g. on 2026-07-28)."""
    tools_list = m.CLIENT_TO_SERVER["tools/list"]
    client, _ = handshake(server_caps=ServerCapabilities())
    with pytest.raises(LocalProtocolError, match="'tools'"):
        client.check_send_capability(tools_list)
    with pytest.raises(LocalProtocolError, match="'tools'"):
        client.send_request("tools/list")
    client, _ = handshake()
    client.check_send_capability(tools_list)  # declared: no refusal
    relaxed, _ = handshake(server_caps=ServerCapabilities(), options=NO_ENFORCEMENT)
    relaxed.check_send_capability(tools_list)  # not enforced: no refusal


# -- request/response matching --------------------------------------------------------------


def test_out_of_order_responses_match_their_requests() -> None:
    """basic/index.mdx, Responses: a response carries the id of the request it answers."""
    client, server = handshake()
    ids = []
    for _ in range(3):
        rid, data = client.send_request("tools/list", PaginatedRequestParams())
        (req,) = server.receive(data)
        assert isinstance(req, RequestReceived) and req.id == rid
        ids.append(rid)
    assert ids == sorted(ids) and len(set(ids)) == 3
    for rid in reversed(ids):
        result = ListToolsResult(tools=[], next_cursor=f"c{rid}")
        (resp,) = client.receive(server.send_response(rid, result) or b"")
        assert isinstance(resp, ResponseReceived) and resp.id == rid
        assert isinstance(resp.result, ListToolsResult) and resp.result.next_cursor == f"c{rid}"
    assert client.pending_ids() == [] and server.inflight_ids() == []


def test_request_ids_increase_and_are_never_reused() -> None:
    """basic/index.mdx, Requests: the id MUST NOT have been used before in the session."""
    client, _ = handshake()
    seen = [client.send_request("ping")[0] for _ in range(5)]
    client.cancel(seen[-1])
    seen.append(client.send_request("ping")[0])
    assert seen == sorted(seen) and len(set(seen)) == 6
    assert all(type(i) is int for i in seen)


def test_int_and_str_ids_are_distinct() -> None:
    """basic/index.mdx, Requests: ids are strings or integers; 1 and "1" are different ids."""
    _, server = handshake()
    (a,) = server.receive(raw_request(1, "ping"))
    (b,) = server.receive(raw_request("1", "ping"))
    assert isinstance(a, RequestReceived) and isinstance(b, RequestReceived)
    assert wire(server.send_response("1", Result()))["id"] == "1"
    assert wire(server.send_response(1, Result()))["id"] == 1
    client, _ = handshake()
    rid, _ = client.send_request("ping")
    late = json.dumps({"jsonrpc": "2.0", "id": str(rid), "result": {}}).encode()
    assert client.receive(late) == [] and client.pending_ids() == [rid]
    assert client.dropped_responses == 1


def test_unknown_and_late_responses_are_dropped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """basic/index.mdx, Responses; cancellation.mdx, Timing Considerations: a response for an
    unknown or finished id is ignored."""
    client, server = handshake()
    rid, data = client.send_request("ping")
    server.receive(data)
    response = server.send_response(rid, Result()) or b""
    assert len(client.receive(response)) == 1
    with caplog.at_level(logging.INFO, logger="mcpbind.protocol"):
        assert client.receive(response) == []
        assert client.receive(b'{"jsonrpc":"2.0","id":999,"result":{}}') == []
        assert (
            client.receive(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}')
            == []
        )
    assert client.dropped_responses == 3
    assert "unknown or finished request id 999" in caplog.text


def test_error_response_is_delivered_with_code_message_and_data() -> None:
    """basic/index.mdx, Responses / JSON-RPC 2.0 section 5.1: error objects."""
    client, server = handshake()
    rid, data = client.send_request("resources/read", {"uri": "file:///nope"})
    server.receive(data)
    err = McpError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": "file:///nope"})
    payload = wire(server.send_error(rid, err))
    assert payload == {
        "jsonrpc": "2.0",
        "id": rid,
        "error": {"code": -32002, "message": "Resource not found", "data": {"uri": "file:///nope"}},
    }
    (event,) = client.receive(json.dumps(payload).encode())
    assert (
        isinstance(event, ErrorReceived) and event.error == err and event.method == "resources/read"
    )
    assert client.pending_ids() == []


def test_malformed_responses_fail_the_pending_call() -> None:
    """basic/index.mdx, Responses: a result and an error are mutually exclusive; results have
    the method's shape."""
    client, _ = handshake()
    rid, _ = client.send_request("tools/list")
    (event,) = client.receive(
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"tools": 3}}).encode()
    )
    assert isinstance(event, ErrorReceived) and isinstance(event.error, RemoteProtocolError)
    assert "$.result.tools" in event.error.message
    rid, _ = client.send_request("ping")
    both = {"jsonrpc": "2.0", "id": rid, "result": {}, "error": {"code": 1, "message": "m"}}
    (event,) = client.receive(json.dumps(both).encode())
    assert isinstance(event, ErrorReceived) and event.error.code == INVALID_REQUEST
    assert client.pending_ids() == []


def test_call_tool_round_trip_typed() -> None:
    """server/tools: tools/call params and result decode to the generated types."""
    client, server = handshake()
    rid, data = client.send_request(
        "tools/call", CallToolRequestParams(name="add", arguments={"a": 1})
    )
    (req,) = server.receive(data)
    assert isinstance(req, RequestReceived) and isinstance(req.params, CallToolRequestParams)
    assert not isinstance(req.params.arguments, msgspec.UnsetType)
    assert json_object(req.params.arguments) == {"a": 1}
    result = CallToolResult(content=[TextContent(text="2")])
    (resp,) = client.receive(server.send_response(rid, result) or b"")
    assert isinstance(resp, ResponseReceived) and resp.result.content[0].text == "2"


# -- errors the core answers itself ---------------------------------------------------------


def test_error_code_constants() -> None:
    """JSON-RPC 2.0 section 5.1 and the MCP-defined codes."""
    assert (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR) == (
        -32700, -32600, -32601, -32602, -32603,
    )  # fmt: skip
    assert (RESOURCE_NOT_FOUND, HEADER_MISMATCH) == (-32002, -32020)
    assert (MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION) == (-32021, -32022)


def test_parse_error_has_null_id() -> None:
    """JSON-RPC 2.0 section 5.1: -32700 Parse error, id null when it cannot be detected."""
    _, server = handshake()
    for bad in (b'{"jsonrpc": "2.0", "method": "ping", "id": ', b"{nope}", b"\xff", b""):
        rid, code, message = only_error(server.receive(bad))
        assert (rid, code) == (None, PARSE_ERROR) and message.startswith("Parse error")


@pytest.mark.parametrize(
    "bad",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',  # cut short
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\ud800"}}',
        b'{"method":"ping","params":{"id":2,"x":"\\ud800"},"jsonrpc":"2.0","id":1}',
    ],
)
def test_parse_error_answers_a_readable_id(bad: bytes) -> None:
    """JSON-RPC 2.0 section 5: the id is null only when it could not be detected; a lone
    surrogate escape or a cut-off message still names its (top-level) id, so the caller gets
    its answer now instead of at its timeout."""
    _, server = handshake()
    rid, code, message = only_error(server.receive(bad))
    assert (rid, code) == (1, PARSE_ERROR) and message.startswith("Parse error")


@pytest.mark.parametrize(
    ("payload", "expected_id", "needle"),
    [
        (b"1", None, "Expected `object`"),
        (b'"ping"', None, "Expected `object`"),
        (b'{"id": 1, "method": "ping"}', 1, "jsonrpc"),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', 1, "jsonrpc"),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', None, "$.id"),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', None, "$.id"),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', None, "null"),
        (b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "result": {}}', 2, "result or error"),
        (
            b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "error": {"code": 1, "message": "x"}}',
            3,
            "result or error",
        ),
        (b'{"jsonrpc": "2.0", "id": 4}', 4, "not a request"),
        (b'{"jsonrpc": "2.0", "result": {}}', None, "needs an id"),
        (b'{"jsonrpc": "2.0", "method": 5}', None, "$.method"),
    ],
)
def test_invalid_request_shapes(payload: bytes, expected_id: object, needle: str) -> None:
    """JSON-RPC 2.0 section 5.1 (-32600 Invalid Request) and basic/index.mdx, Requests: ids
    are strings or integers, never null (MCP) and never booleans."""
    _, server = handshake()
    rid, code, message = only_error(server.receive(payload))
    assert (rid, code) == (expected_id, INVALID_REQUEST)
    assert needle in message


def test_method_not_found() -> None:
    """JSON-RPC 2.0 section 5.1: -32601 Method not found, with the request's id."""
    _, server = handshake()
    rid, code, message = only_error(server.receive(raw_request("abc", "tools/frobnicate")))
    assert (rid, code, message) == ("abc", METHOD_NOT_FOUND, "Method not found: tools/frobnicate")
    # A server-to-client method sent to the server, and a notification sent as a request.
    assert only_error(server.receive(raw_request(2, "sampling/createMessage", {})))[:2] == (
        2,
        -32601,
    )
    assert only_error(server.receive(raw_request(3, "notifications/initialized")))[:2] == (
        3,
        -32601,
    )
    # Unknown notifications get no answer at all (JSON-RPC: never reply to a notification).
    assert server.receive(b'{"jsonrpc": "2.0", "method": "notifications/nope"}') == []


def test_method_not_in_negotiated_version_is_not_found() -> None:
    """basic/lifecycle.mdx, Version Negotiation: only the negotiated version's methods exist
    (elicitation/create arrived in 2025-06-18)."""
    client, _ = handshake("2024-11-05")
    rid, code, _ = only_error(client.receive(raw_request(1, "elicitation/create", {})))
    assert (rid, code) == (1, METHOD_NOT_FOUND)
    client_new = Session("client", version="2025-06-18", options=NO_ENFORCEMENT)
    (event,) = client_new.receive(
        raw_request(
            1,
            "elicitation/create",
            {"message": "hi", "requestedSchema": {"type": "object", "properties": {}}},
        )
    )
    assert isinstance(event, RequestReceived)


def test_invalid_params_name_the_field_path() -> None:
    """JSON-RPC 2.0 section 5.1: -32602 Invalid params; server/tools, Calling Tools."""
    _, server = handshake()
    rid, code, message = only_error(server.receive(raw_request(5, "tools/call", {"name": 5})))
    assert (rid, code) == (5, INVALID_PARAMS)
    assert message == "Invalid params: Expected `str`, got `int` - at `$.params.name`"
    # Required params absent: validated as {} so the missing field is named.
    rid, code, message = only_error(server.receive(raw_request(6, "tools/call")))
    assert (rid, code) == (6, INVALID_PARAMS) and "`name`" in message
    rid, code, _ = only_error(server.receive(raw_request(7, "tools/list", [1, 2])))
    assert (rid, code) == (7, INVALID_PARAMS)
    assert server.inflight_ids() == []


def test_invalid_notification_params_are_dropped_silently() -> None:
    """JSON-RPC 2.0 section 4.1: the receiver MUST NOT reply to a notification."""
    client, _ = handshake()
    bad = b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": "x"}}'
    assert client.receive(bad) == []


def test_duplicate_in_flight_request_id_is_rejected() -> None:
    """basic/index.mdx, Requests: the requestor MUST NOT reuse an id in the same session."""
    _, server = handshake()
    (first,) = server.receive(raw_request(42, "ping"))
    assert isinstance(first, RequestReceived)
    rid, code, message = only_error(server.receive(raw_request(42, "ping")))
    assert (rid, code) == (42, INVALID_REQUEST) and "already in flight" in message
    assert server.send_response(42, Result()) is not None  # the original still gets its answer
    assert server.send_response(42, Result()) is None


def test_at_most_one_response_per_request_id(caplog: pytest.LogCaptureFixture) -> None:
    """basic/index.mdx, Responses: exactly one response per request."""
    _, server = handshake()
    server.receive(raw_request(1, "ping"))
    assert server.send_response(1, Result()) is not None
    with caplog.at_level(logging.WARNING, logger="mcpbind.protocol"):
        assert server.send_response(1, Result()) is None
        assert server.send_error(1, McpError(INTERNAL_ERROR, "late")) is None
        assert server.send_response(12345, Result()) is None
        assert server.send_response(True, Result()) is None  # never confused with id 1
    assert server.suppressed_responses == 4
    assert "suppressed a response" in caplog.text


def test_error_for_exception_sanitizes() -> None:
    """JSON-RPC 2.0 section 5.1: -32603 Internal error; no internals leak unless debugging."""
    err = McpError(INVALID_PARAMS, "bad", {"x": 1})
    assert error_for_exception(err) is err
    plain = error_for_exception(RuntimeError("secret path /etc/passwd"))
    assert (plain.code, plain.message, plain.data) == (INTERNAL_ERROR, "Internal error", None)
    debug = error_for_exception(ValueError("boom"), debug=True)
    assert debug.data == {"exception": "ValueError: boom"} and "Traceback" not in str(debug.data)
    session = Session("server", options=SessionOptions(debug=True))
    assert session.error_for_exception(KeyError("k")).data is not None


def test_unencodable_error_data_is_dropped_not_raised() -> None:
    """basic/index.mdx, Responses: the error is still sent, without the bad data."""
    _, server = handshake()
    server.receive(raw_request(1, "ping"))
    payload = wire(server.send_error(1, McpError(INTERNAL_ERROR, "x", object())))
    assert payload["error"] == {"code": INTERNAL_ERROR, "message": "x"}


# -- cancellation ---------------------------------------------------------------------------


def test_cancel_then_no_response() -> None:
    """utilities/cancellation.mdx, Behavior Requirements: receivers SHOULD NOT send a response
    for a cancelled request; the sender ignores any response that arrives afterwards."""
    client, server = handshake()
    rid, data = client.send_request("tools/list")
    server.receive(data)
    cancel = client.cancel(rid, "user gave up")
    assert wire(cancel) == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": rid, "reason": "user gave up"},
    }
    assert client.pending_ids() == []
    (event,) = server.receive(cancel or b"")
    assert event == Cancelled(rid, "user gave up")
    assert server.send_response(rid, ListToolsResult(tools=[])) is None
    assert server.inflight_ids() == []
    # A response the server sent before seeing the cancellation is dropped by the client.
    assert client.receive(b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[]}}' % rid) == []


def test_cancel_of_unknown_or_finished_request_is_ignored() -> None:
    """utilities/cancellation.mdx, Behavior Requirements: receivers MAY ignore cancellations
    referencing unknown or completed requests."""
    client, server = handshake()
    note = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}}'
    assert server.receive(note) == []
    assert client.cancel(77) is None
    server.receive(raw_request(5, "ping"))
    server.send_response(5, Result())
    assert server.receive(note.replace(b"77", b"5")) == []
    # Cancelling twice: the second is ignored.
    server.receive(raw_request(6, "ping"))
    twice = note.replace(b"77", b"6")
    assert len(server.receive(twice)) == 1 and server.receive(twice) == []
    # A string id does not cancel the integer id.
    server.receive(raw_request(8, "ping"))
    assert server.receive(note.replace(b"77", b'"8"')) == []
    assert server.send_response(8, Result()) is not None


def test_initialize_is_never_cancelled() -> None:
    """utilities/cancellation.mdx: the client MUST NOT cancel the initialize request."""
    client, server = Session("client"), Session("server")
    rid, data = client.send_request("initialize", init_params())
    server.receive(data)
    note = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}' % rid
    assert server.receive(note) == []
    assert server.send_response(rid, init_result()) is not None
    client2 = Session("client")
    rid2, _ = client2.send_request("initialize", init_params())
    assert client2.cancel(rid2) is None and client2.expire(rid2) is None
    assert client2.pending_ids() == [] and client2.state is State.AWAITING_INIT


def test_expire_sends_timeout_cancellation() -> None:
    """basic/lifecycle.mdx, Timeouts: on timeout the sender SHOULD issue a cancellation."""
    client, _ = handshake()
    rid, _ = client.send_request("ping")
    assert wire(client.expire(rid))["params"] == {"requestId": rid, "reason": "timeout"}
    assert client.expire(rid) is None


def test_fail_all_when_the_peer_dies() -> None:
    """basic/lifecycle.mdx, Shutdown: pending requests fail at once when the connection ends."""
    client, _ = handshake()
    ids = [client.send_request("ping")[0] for _ in range(3)]
    assert client.pending_ids() == ids
    events = client.fail_all()
    assert [e.id for e in events] == ids
    assert all(e.error.code == CONNECTION_CLOSED for e in events)
    assert client.pending_ids() == [] and client.state is State.CLOSED
    with pytest.raises(LocalProtocolError, match="closed"):
        client.send_request("ping")


# -- progress -------------------------------------------------------------------------------


def test_progress_token_injected_and_routed() -> None:
    """utilities/progress.mdx: the token rides in params._meta.progressToken; notifications
    reference it; tokens are unique among active requests."""
    client, server = handshake()
    rid, data = client.send_request(
        "tools/call", CallToolRequestParams(name="slow", meta={"k": 1}), progress_token="tok"
    )
    assert wire(data)["params"]["_meta"] == {"k": 1, "progressToken": "tok"}
    (req,) = server.receive(data)
    assert isinstance(req, RequestReceived) and req.progress_token == "tok"
    with pytest.raises(LocalProtocolError, match="already in use"):
        client.send_request("ping", progress_token="tok")
    _, data2 = client.send_request("ping", progress_token=7)
    assert wire(data2)["params"] == {"_meta": {"progressToken": 7}}
    (event,) = client.receive(server.send_progress("tok", 0.5, 1.0, "half"))
    assert event == ProgressReceived("tok", 0.5, 1.0, "half", rid)
    (event,) = client.receive(server.send_progress("other", 1))
    assert event == ProgressReceived("other", 1, None, None, None)
    client.cancel(rid)
    client.send_request("ping", progress_token="tok")  # free again after the request ended


# -- capabilities ---------------------------------------------------------------------------


def test_outgoing_request_needs_peer_capability() -> None:
    """basic/lifecycle.mdx, Capability Negotiation: only use negotiated capabilities."""
    client, _ = handshake(server_caps=ServerCapabilities())
    with pytest.raises(LocalProtocolError, match="'tools'"):
        client.send_request("tools/list")
    assert client.pending_ids() == []
    rid, _ = client.send_request("ping")
    assert rid == 2  # the refused call consumed no id (initialize was 1)
    relaxed, _ = handshake(server_caps=ServerCapabilities(), options=NO_ENFORCEMENT)
    relaxed.send_request("tools/list")


def test_server_to_client_request_needs_client_capability() -> None:
    """client/sampling, Capabilities: servers only sample when the client declared it."""
    _, server = handshake()
    with pytest.raises(LocalProtocolError, match="sampling"):
        server.send_request("sampling/createMessage", {"messages": [], "maxTokens": 1})
    _, server = handshake(client_caps=ClientCapabilities(sampling=ClientCapabilitiesSampling()))
    server.send_request("sampling/createMessage", {"messages": [], "maxTokens": 1})


def test_notification_needs_own_capability() -> None:
    """server/tools, List Changed Notification: only when tools.listChanged was declared."""
    _, server = handshake(server_caps=ServerCapabilities(tools={}))
    with pytest.raises(LocalProtocolError, match="listChanged"):
        server.send_notification("notifications/tools/list_changed")
    _, server = handshake()
    assert server.send_notification("notifications/tools/list_changed")


def test_inbound_request_for_undeclared_capability() -> None:
    """basic/lifecycle.mdx, Capability Negotiation; -32601 for a feature we do not offer."""
    server = Session("server", version=LATEST)
    server.set_local_capabilities({"prompts": {}})
    rid, code, message = only_error(server.receive(raw_request(1, "tools/list")))
    assert (rid, code) == (1, METHOD_NOT_FOUND) and "'tools'" in message
    (ok,) = server.receive(raw_request(2, "prompts/list"))
    assert isinstance(ok, RequestReceived)
    relaxed = Session("server", version=LATEST, options=NO_ENFORCEMENT)
    (ok,) = relaxed.receive(raw_request(1, "tools/list"))
    assert isinstance(ok, RequestReceived)


def _encode(obj: object) -> bytes:
    import msgspec

    return msgspec.json.encode(obj)


def test_outgoing_only_for_core_errors() -> None:
    """basic/index.mdx, Messages: valid traffic produces events, never Outgoing bytes."""
    client, server = handshake()
    _, data = client.send_request("ping")
    assert outgoing(server.receive(data)) == []
