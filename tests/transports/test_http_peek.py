"""What the HTTP client transport reads of the messages it carries (transports/_peek.py).

Spec: 2025-11-25 basic/transports.mdx §Sending Messages to the Server (a request's answer
comes on its POST; responses and notifications get 202), 2025-03-26's batches, and
2026-07-28 basic/transports/streamable-http.mdx §Request Metadata.
"""

from __future__ import annotations

import base64

import msgspec

from mcpbind.http.client._peek import (
    cancelled_request,
    error_response,
    header_value,
    peek,
    response_id,
    result_protocol_version,
    stateless_headers,
)


def test_requests_notifications_responses() -> None:
    """Requests (with ids), notifications and responses are told apart.

    Spec: 2025-11-25 basic/transports.mdx §Sending Messages to the Server 4-5.
    """
    request = peek(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}')
    assert request.is_request and request.request_ids == (7,) and request.method == "tools/call"
    note = peek(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert not note.is_request and note.method == "notifications/initialized"
    answer = peek(b'{"jsonrpc":"2.0","id":"a","result":{}}')
    assert not answer.is_request and answer.method is None


def test_batches_list_every_request_id() -> None:
    """2025-03-26 §Sending Messages: a POST body may be a batch."""
    batch = peek(
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},'
        b'{"jsonrpc":"2.0","method":"notifications/x"},'
        b'{"jsonrpc":"2.0","id":"b","method":"ping"}]'
    )
    assert batch.request_ids == (1, "b")


def test_unreadable_bytes_count_as_a_notification() -> None:
    """The server, not the transport, reports what is wrong with a malformed message.

    Spec: 2025-11-25 basic/transports.mdx §Sending Messages to the Server 4.
    """
    for junk in (b"not json", b'{"id": 1.5, "method": "x"}', b"42"):
        assert not peek(junk).is_request


def test_response_id_and_protocol_version() -> None:
    """The id of a response and the negotiated version of an initialize result.

    Spec: 2025-11-25 basic/transports.mdx §Protocol Version Header.
    """
    init = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26","x":[1,2]}}'
    assert response_id(init) == 0
    assert result_protocol_version(init) == "2025-03-26"
    assert response_id(b'{"jsonrpc":"2.0","id":3,"method":"ping"}') is None  # a request
    assert result_protocol_version(b'{"jsonrpc":"2.0","id":1,"result":5}') is None


def test_cancelled_request() -> None:
    """The request a ``notifications/cancelled`` names.

    Spec: 2025-11-25 basic/transports.mdx §Sending Messages to the Server 6 (cancellation).
    """
    note = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}'
    assert cancelled_request(note) == 0
    assert cancelled_request(b'{"jsonrpc":"2.0","method":"x"}') is None


def test_error_response_is_jsonrpc() -> None:
    """A synthesized error is a JSON-RPC error response for that id.

    Spec: 2025-11-25 basic/transports.mdx §Sending Messages to the Server 5.
    """
    decoded = msgspec.json.decode(error_response(5, -32603, "HTTP 500", {"httpStatus": 500}))
    assert decoded == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32603, "message": "HTTP 500", "data": {"httpStatus": 500}},
    }


def test_stateless_requests_mirror_metadata_into_headers() -> None:
    """2026-07-28 streamable-http.mdx §Request Metadata: MCP-Protocol-Version from
    ``_meta``, Mcp-Method always, Mcp-Name for tools/call, resources/read, prompts/get."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    call = msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "get_weather", "_meta": meta},
        }
    )
    assert stateless_headers(call, "tools/call") == {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "get_weather",
    }
    read = msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "resources/read",
            "params": {"uri": "file:///é.txt", "_meta": meta},
        }
    )
    assert stateless_headers(read, "resources/read")["mcp-name"] == (
        "=?base64?ZmlsZTovLy/DqS50eHQ=?="
    )
    handshake_era = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}'
    assert stateless_headers(handshake_era, "tools/call") == {}


def test_header_values_are_never_raw_unsafe_text() -> None:
    """§Value Encoding: control characters, non-ASCII and edge whitespace go base64."""
    assert header_value("plain name") == "plain name"
    for unsafe in ("a\r\nX-Evil: 1", " padded", "naïve", ""):
        encoded = header_value(unsafe)
        assert encoded.startswith("=?base64?") and encoded.endswith("?=")
        assert base64.b64decode(encoded[9:-2]).decode() == unsafe
