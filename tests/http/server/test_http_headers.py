"""basic/transports/streamable-http.mdx §Request Metadata: the standard headers, Value
Encoding, Custom Headers from Tool Parameters and Server Validation, over a real uvicorn."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from mcpbind.protocol.classify import classify_body
from mcpbind.protocol.mcp_headers import (
    McpHeaders,
    check_headers,
    decode_value,
    encode_value,
    header_params,
)

from ._era_2026 import LiveServer, body, live, std_headers

HEADER_MISMATCH = -32020


HTTP = httpx2.Client(timeout=10)


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live() as s, HTTP:
        yield s


def post(server: LiveServer, message: dict[str, Any], headers: Any) -> httpx2.Response:
    return HTTP.post(server.url, json=message, headers=headers)


def assert_mismatch(response: httpx2.Response, rid: int | str = 1) -> str:
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["id"] == rid
    assert error["error"]["code"] == HEADER_MISMATCH
    message: str = error["error"]["message"]
    return message


def b64(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def call(name: str, arguments: dict[str, Any], rid: int = 1) -> dict[str, Any]:
    return body("tools/call", {"name": name, "arguments": arguments}, rid)


def test_conforming_request_is_answered(server: LiveServer) -> None:
    """§Standard Request Headers: with Mcp-Method and Mcp-Name matching the body the call
    is served (JSON, no session id minted)."""
    message = call("echo", {"text": "hi"})
    response = post(server, message, std_headers(message))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response.headers
    assert response.json()["result"]["content"][0]["text"] == "hi"
    assert server.app.sessions == {}


def test_missing_method_header(server: LiveServer) -> None:
    """§Server Validation: a required standard header (Mcp-Method) missing → 400, -32020."""
    message = body("tools/list")
    headers = std_headers(message)
    del headers["mcp-method"]
    assert "Mcp-Method" in assert_mismatch(post(server, message, headers))


def test_missing_protocol_version_header(server: LiveServer) -> None:
    """§Protocol Version Header: every POST MUST carry MCP-Protocol-Version."""
    message = body("tools/list")
    headers = std_headers(message)
    del headers["mcp-protocol-version"]
    assert "MCP-Protocol-Version" in assert_mismatch(post(server, message, headers))


def test_protocol_version_header_must_match_meta(server: LiveServer) -> None:
    """§Protocol Version Header: the header value MUST match ``_meta`` protocolVersion."""
    message = body(
        "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}
    )
    assert "does not match" in assert_mismatch(post(server, message, std_headers(message)))


def test_mismatched_and_case_changed_method(server: LiveServer) -> None:
    """§Server Validation and §Case Sensitivity: header values are case-sensitive."""
    message = body("tools/list", rid="a")
    for value in ("prompts/list", "TOOLS/LIST"):
        assert_mismatch(post(server, message, std_headers(message, **{"mcp-method": value})), "a")


def test_header_names_are_case_insensitive_and_ows_trimmed(server: LiveServer) -> None:
    """§Case Sensitivity (names) and RFC 9110 §5.5 (surrounding whitespace is not the value);
    sent over a raw socket since HTTP client libraries refuse such header bytes."""
    message = json.dumps(call("echo", {"text": "x"})).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{server.port}\r\n"
        "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
        "MCP-PROTOCOL-VERSION: 2026-07-28\r\nMCP-METHOD: tools/call\r\n"
        f"Mcp-Name:   echo\t\r\ncontent-length: {len(message)}\r\nconnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head + message)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.split(b" ", 2)[1] == b"200", data
    assert b'"text":"x"' in data


def test_missing_and_wrong_name(server: LiveServer) -> None:
    """§Standard Request Headers: Mcp-Name is required for tools/call, prompts/get and
    resources/read and must equal params.name / params.uri."""
    message = call("echo", {"text": "x"})
    headers = std_headers(message)
    del headers["mcp-name"]
    assert "Mcp-Name" in assert_mismatch(post(server, message, headers))
    assert_mismatch(post(server, message, std_headers(message, **{"mcp-name": "other"})))
    read = body("resources/read", {"uri": "test://a"})
    assert_mismatch(post(server, read, std_headers(read, **{"mcp-name": "test://b"})))
    prompt = body("prompts/get", {"name": "hi"})
    no_name = std_headers(prompt)
    del no_name["mcp-name"]
    assert_mismatch(post(server, prompt, no_name))


def test_base64_name_of_non_ascii_uri(server: LiveServer) -> None:
    """§Value Encoding: a resource URI outside the header-safe set travels Base64-encoded in
    Mcp-Name; the server decodes it before comparing."""
    message = body("resources/read", {"uri": "test://ünïcode"})
    response = post(server, message, std_headers(message, **{"mcp-name": b64("test://ünïcode")}))
    assert response.status_code == 200, response.text
    assert response.json()["result"]["contents"][0]["text"] == "unicode"
    wrong = post(server, message, std_headers(message, **{"mcp-name": b64("test://other")}))
    assert_mismatch(wrong)


def test_repeated_header_is_refused(server: LiveServer) -> None:
    """§Server Validation: two Mcp-Method values cannot both match the body."""
    message = body("tools/list")
    raw = [(k, v) for k, v in std_headers(message).items()] + [("mcp-method", "tools/list")]
    assert_mismatch(post(server, message, raw))


def test_x_mcp_header_params(server: LiveServer) -> None:
    """§Custom Headers from Tool Parameters: annotated parameters are mirrored into
    Mcp-Param-{Name}; strings as-is, integers in decimal, booleans lower-case."""
    message = call("query", {"region": "us-west1", "limit": 42, "dry": True})
    extra = {"mcp-param-region": "us-west1", "mcp-param-limit": "42", "Mcp-Param-Dry": "true"}
    response = post(server, message, std_headers(message, **extra))
    assert response.status_code == 200, response.text
    assert response.json()["result"]["content"][0]["text"] == "us-west1::42:True"


def test_x_mcp_header_base64_and_literals(server: LiveServer) -> None:
    """§Value Encoding: a Base64 sentinel is decoded; a value without the full sentinel is
    taken literally."""
    for body_value, header in (
        ("Hello, 世界", b64("Hello, 世界")),
        (" padded ", b64(" padded ")),
        ("=?base64?abc", "=?base64?abc"),
        ("SGVsbG8=", "SGVsbG8="),
    ):
        message = call("query", {"region": body_value})
        response = post(server, message, std_headers(message, **{"mcp-param-region": header}))
        assert response.status_code == 200, (body_value, response.text)


def test_x_mcp_header_rejections(server: LiveServer) -> None:
    """§Server Behavior for Custom Headers: omitted header with the value in the body,
    different value, invalid Base64 (padding, alphabet) → 400 HeaderMismatch."""
    message = call("query", {"region": "eu"})
    assert "Mcp-Param-Region" in assert_mismatch(post(server, message, std_headers(message)))
    for header in ("us", "=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "=?base64?//4=?="):
        assert_mismatch(post(server, message, std_headers(message, **{"mcp-param-region": header})))
    wrong_int = call("query", {"region": "eu", "limit": 7})
    extra = {"mcp-param-region": "eu", "mcp-param-limit": "7.5"}
    assert_mismatch(post(server, wrong_int, std_headers(wrong_int, **extra)))


def test_x_mcp_header_only_canonical_forms_match(server: LiveServer) -> None:
    """Issue 28 F17: an integer matches only its decimal string and a boolean only
    ``true``/``false``, neither Base64-encoded; a Base64 string only in canonical form (zero
    pad bits). Looser readings (``float()``, ``int()``) would let a header that a gateway
    reads as another value through."""
    for limit, header in (
        (50, "5_0"),
        (50, "5e1"),
        (50, "+50"),
        (50, "50.0"),
        (50, "050"),
        (50, "0x32"),
        (50, b64("50")),
        (0, "-0"),
        (-7, "-07"),
    ):
        message = call("query", {"region": "eu", "limit": limit})
        extra = {"mcp-param-region": "eu", "mcp-param-limit": header}
        response = post(server, message, std_headers(message, **extra))
        assert "Mcp-Param-Limit" in assert_mismatch(response), header
    for header in ("True", "TRUE", "1", b64("true"), "yes"):
        message = call("query", {"region": "eu", "dry": True})
        extra = {"mcp-param-region": "eu", "mcp-param-dry": header}
        assert "Mcp-Param-Dry" in assert_mismatch(
            post(server, message, std_headers(message, **extra))
        )
    message = call("query", {"region": "Hello"})
    # "SGVsbG9=" decodes to "Hello" too, with a non-zero pad bit; only "SGVsbG8=" is canonical
    extra = {"mcp-param-region": "=?base64?SGVsbG9=?="}
    assert "Mcp-Param-Region" in assert_mismatch(
        post(server, message, std_headers(message, **extra))
    )
    for limit, header in ((50, "50"), (-7, "-7"), (0, "0"), (50.0, "50")):
        message = call("query", {"region": "eu", "limit": limit})
        extra = {"mcp-param-region": "eu", "mcp-param-limit": header}
        response = post(server, message, std_headers(message, **extra))
        assert response.status_code == 200, (limit, header, response.text)
    assert decode_value("=?base64?SGVsbG9=?=") is None
    assert decode_value("=?base64?SGVsbG8=?=") == "Hello"


def test_mcp_name_base64_only_in_canonical_form(server: LiveServer) -> None:
    """Issue 28 F17, sibling: ``Mcp-Name`` shares the decoder, so a name in non-canonical
    Base64 (non-zero pad bits) is refused too."""
    message = call("query", {"region": "eu"})
    extra = {"mcp-name": "=?base64?cXVlcnk=?=", "mcp-param-region": "eu"}
    response = post(server, message, std_headers(message, **extra))
    assert response.status_code == 200, response.text
    extra["mcp-name"] = "=?base64?cXVlcnl=?="
    assert "Mcp-Name" in assert_mismatch(post(server, message, std_headers(message, **extra)))


def test_absent_parameter_needs_no_header(server: LiveServer) -> None:
    """§Server Behavior for Custom Headers: a parameter not in the arguments (or null) is
    not expected as a header."""
    message = call("query", {"region": "eu", "limit": None})
    response = post(server, message, std_headers(message, **{"mcp-param-region": "eu"}))
    assert response.status_code == 200
    # (limit=None fails the tool's own validation as a tool error, not a header error)
    assert "error" not in response.json()


def test_encode_decode_round_trip() -> None:
    """§Value Encoding table: the encoded forms, and decoding restores the value."""
    assert encode_value("us-west1") == "us-west1"
    assert encode_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert encode_value(" padded ") == "=?base64?IHBhZGRlZCA=?="
    assert encode_value("line1\nline2") == "=?base64?bGluZTEKbGluZTI=?="
    assert encode_value("=?base64?literal?=") == "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
    for value in ("us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?="):
        assert decode_value(encode_value(value)) == value
    assert decode_value("bad\x01value") is None


def test_nested_property_path() -> None:
    """§Schema Extension: an annotation reached through nested ``properties`` reads the value
    at that exact path; one under ``items`` is not statically reachable and is ignored."""
    schema = {
        "type": "object",
        "properties": {
            "target": {
                "type": "object",
                "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
            },
            "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}},
        },
    }
    message = call("t", {"target": {"zone": "z1"}, "list": ["a"]})
    raw = json.dumps(message).encode()
    base = [(b"mcp-method", b"tools/call"), (b"mcp-name", b"t")]
    ok = McpHeaders([*base, (b"mcp-param-zone", b"z1")])
    request = classify_body(raw)  # the check reads the params as the classifier decoded them
    method, params = request.methods[0], request.peek
    mirrored = list(header_params(schema))
    assert mirrored == [(("target", "zone"), "Zone")]
    assert check_headers(ok, "2026-07-28", method, params, lambda _n: mirrored) is None
    missing = McpHeaders(base)
    assert check_headers(missing, "2026-07-28", method, params, lambda _n: mirrored) is not None


def test_params_not_an_object_is_never_served(server: LiveServer) -> None:
    """§Server Validation: when the body has no params.name to compare, a given Mcp-Name
    cannot match it; the request is refused, not served with unchecked headers."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ["echo"]}
    headers = std_headers({"method": "tools/call", "params": {"name": "echo"}})
    response = post(server, message, headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] in (HEADER_MISMATCH, -32602)


def test_invalid_utf8_in_mirrored_arguments_is_a_parse_error(server: LiveServer) -> None:
    """Issue 16 (9), found by fuzzing: invalid UTF-8 inside the arguments of a tool with
    ``x-mcp-header`` parameters was an unhandled DecodeError (500). It is a -32700 parse
    error on the request's id (JSON-RPC 2.0 §5.1: invalid JSON), HTTP 400."""
    message = call("query", {"region": "us-west1", "limit": 1, "dry": True}, rid=77)
    raw = json.dumps(message).encode().replace(b'"us-west1"', b'"us-\xff\xfewest1"')
    headers = std_headers(message, **{"mcp-param-region": "us-west1", "mcp-param-limit": "1"})
    response = HTTP.post(server.url, content=raw, headers=headers)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["id"] == 77 and error["error"]["code"] == -32700
    still = post(server, call("echo", {"text": "ok"}), std_headers(call("echo", {"text": "ok"})))
    assert still.status_code == 200
