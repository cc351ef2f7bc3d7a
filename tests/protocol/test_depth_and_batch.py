"""Nesting bound (checked before decoding) and JSON-RPC batches (2025-03-26 only)."""

from __future__ import annotations

import json
import time

import pytest
from proto_helpers import only_error, outgoing, raw_request

from mcpbind.protocol import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorReceived,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    Session,
    SessionOptions,
    exceeds_depth,
)
from mcpbind.protocol.classify import classify_body
from mcpbind.protocol.depth import shallow_if_valid

# -- depth ----------------------------------------------------------------------------------


@pytest.mark.parametrize("opener", [b"[", b'{"a":'])
def test_hundred_thousand_deep_payload_rejected_quickly(opener: bytes) -> None:
    """basic/index.mdx, Messages (JSON-RPC); hardening: deep nesting never reaches the
    recursive decoder (no RecursionError), answered -32600 with a null id."""
    server = Session("server", version="2025-11-25")
    closer = b"]" if opener == b"[" else b"}"
    payload = opener * 100_000 + b"1" + closer * 100_000
    start = time.perf_counter()
    rid, code, message = only_error(server.receive(payload))
    assert time.perf_counter() - start < 5.0  # milliseconds; a margin for a loaded machine
    assert (rid, code) == (None, INVALID_REQUEST)
    assert message == "Invalid Request: JSON nesting exceeds 128 levels"


def test_depth_bound_is_exact_and_configurable() -> None:
    """basic/index.mdx, Messages: the bound counts arrays and objects, not string contents."""
    assert not exceeds_depth(b"[" * 128 + b"]" * 128)
    assert exceeds_depth(b"[" * 129 + b"]" * 129)
    assert not exceeds_depth(b'["' + b"[" * 1000 + b'"]')
    assert not exceeds_depth(b'["\\"' + b"[" * 1000 + b'"]')  # escaped quote stays inside
    assert exceeds_depth(b'["\\\\"' + b"[" * 1000 + b'"]')  # escaped backslash closes it
    assert exceeds_depth(b"[" * 11, limit=10) and not exceeds_depth(b"[" * 10, limit=10)
    session = Session("server", version="2025-11-25", options=SessionOptions(max_depth=3))
    deep = raw_request(1, "ping", {"_meta": {"a": {"b": 1}}})
    assert only_error(session.receive(deep))[1] == INVALID_REQUEST
    shallow = raw_request(2, "ping", {"_meta": {"a": 1}})
    assert isinstance(session.receive(shallow)[0], RequestReceived)


def test_depth_scan_is_linear_on_adversarial_strings() -> None:
    """Hardening: escape-heavy and unterminated strings do not make the scanner quadratic."""
    payloads = [
        b'"' + b'\\"' * 500_000 + b"[" * 200,
        b"[" * 200 + b'"' + b"\\" * 1_000_001,
        b'["' + b'[\\"' * 300_000 + b'"]',
    ]
    for payload in payloads:
        start = time.perf_counter()
        exceeds_depth(payload)
        # Milliseconds when linear; quadratic on a megabyte is minutes. A loaded-machine margin.
        assert time.perf_counter() - start < 5.0


def _alternating(levels: int) -> bytes:
    """``{"a":[{"a":[ ... ]}]}``: objects and arrays alternating, ``levels`` deep."""
    opened = b"".join(b'{"a":' if i % 2 == 0 else b"[" for i in range(levels))
    closed = b"".join(b"}" if i % 2 == 0 else b"]" for i in reversed(range(levels)))
    return opened + b"1" + closed


@pytest.mark.parametrize("levels", [127, 128, 129, 144, 500, 995, 1000, 5000])
def test_depth_bound_is_exact_for_alternating_brackets(levels: int) -> None:
    """Issue 16 (2): alternating ``{[`` used to pass 144 levels; the count is exact now."""
    payload = _alternating(levels)
    assert exceeds_depth(payload) == (levels > 128)
    assert exceeds_depth(payload, limit=levels) is False
    assert exceeds_depth(payload, limit=levels - 1) is True


def test_depth_bound_matches_decoded_depth_on_random_json() -> None:
    """The bound equals the real nesting of arbitrary JSON (strings with brackets, escapes)."""
    import random

    rng = random.Random(16)

    def value(budget: int) -> object:
        roll = rng.random()
        if budget == 0 or roll < 0.2:
            return rng.choice([1, "[{", '\\"', "]}", None])
        if roll < 0.6:
            return [value(budget - 1) for _ in range(rng.randint(0, 3))]
        return {f"k{i}": value(budget - 1) for i in range(rng.randint(0, 3))}

    def depth(v: object) -> int:
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        return 0

    for _ in range(500):
        v = value(rng.randint(0, 10))
        data, real = json.dumps(v).encode(), depth(v)
        for limit in range(12):
            assert exceeds_depth(data, limit) == (real > limit), (data, limit)


def test_depth_scan_is_linear_on_many_branches_at_the_limit() -> None:
    """1 MB of 128-deep branches (valid, at the bound) costs one linear scan, not 128 (about
    0.05 s; the bound is generous for loaded machines)."""
    payload = b"[" + b",".join([b"[" * 127 + b"]" * 127] * 4_000) + b"]"
    start = time.perf_counter()
    assert not exceeds_depth(payload)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("levels", [129, 995, 1000, 100_000])
def test_too_deep_request_is_answered_on_its_id(levels: int) -> None:
    """Issue 16 (2): a too-deep request whose id is readable is answered on that id, so the
    caller (an HTTP POST, a stdio client) is not left waiting."""
    server = Session("server", version="2025-11-25")
    payload = b'{"jsonrpc":"2.0","method":"ping","params":' + _alternating(levels) + b',"id":9}'
    rid, code, message = only_error(server.receive(payload))
    assert (rid, code) == (9, INVALID_REQUEST) and "nesting exceeds 128" in message


@pytest.mark.parametrize("levels", [129, 150, 200])
def test_unclosed_run_shorter_than_twice_the_limit_is_refused_for_its_depth(levels: int) -> None:
    """A message no longer than twice the limit is decoded before it is scanned (it cannot
    nest deeper when it is JSON); one that does not decode is still refused for its depth."""
    server = Session("server", version="2025-11-25")
    payload = b'{"jsonrpc":"2.0","id":9,"method":"ping","params":' + b"[" * levels
    assert len(payload) <= 2 * 128
    rid, code, message = only_error(server.receive(payload))
    assert (rid, code) == (9, INVALID_REQUEST) and "nesting exceeds 128" in message
    shallow = b'{"jsonrpc":"2.0","id":10,"method":"ping","params":{"a":' + b"[" * 100
    assert only_error(server.receive(shallow))[1] == PARSE_ERROR


def _objects(levels: int, closed: bool = True) -> bytes:
    """``{"":{"":...{}...}}``: the shortest JSON ``levels`` deep with no array."""
    return b'{"":' * (levels - 1) + b"{}" + (b"}" * (levels - 1) if closed else b"")


def test_length_rule_never_passes_valid_json_deeper_than_the_limit() -> None:
    """``shallow_if_valid`` (a message that decodes is not scanned when it holds): it never
    says so of valid JSON nested deeper than the limit, on the shortest such JSON (object
    chains, array runs, mixes) and on random JSON with brackets inside strings."""
    import random

    for limit in (3, 10, 128):
        assert shallow_if_valid(_objects(limit), limit)  # 5 * limit - 3 bytes, at the bound
        assert not shallow_if_valid(_objects(limit + 1), limit)
        assert not shallow_if_valid(b"[" * (limit + 1) + b"]" * (limit + 1), limit)
        for arrays in range(limit + 2):
            mixed = b"[" * arrays + _objects(limit + 1 - arrays) + b"]" * arrays
            assert exceeds_depth(mixed, limit) and not shallow_if_valid(mixed, limit)
    rng = random.Random(11)

    def value(budget: int) -> object:
        roll = rng.random()
        if budget == 0 or roll < 0.1:
            return rng.choice([1, "[", "", "{}"])
        if roll < 0.4:
            return [value(budget - 1) for _ in range(rng.randint(0, 2))]
        return {rng.choice(["", "k"]): value(budget - 1) for _ in range(rng.randint(0, 2))}

    for _ in range(2_000):
        data = json.dumps(value(rng.randint(0, 40)), separators=(",", ":")).encode()
        for limit in (2, 5, 10, 20):
            if shallow_if_valid(data, limit):
                assert not exceeds_depth(data, limit), (data, limit)


def test_unclosed_object_chain_passing_the_length_rule_is_refused_for_its_depth() -> None:
    """A message the length rule lets through undecoded (no ``[``, under ``5 * limit``
    bytes) is still refused for its depth when it does not decode: over stdio and in an
    HTTP body alike."""
    server = Session("server", version="2025-11-25")
    payload = b'{"jsonrpc":"2.0","id":9,"method":"ping","params":' + _objects(130, closed=False)
    assert 2 * 128 < len(payload) <= 5 * 128 - 3 and shallow_if_valid(payload)
    rid, code, message = only_error(server.receive(payload))
    assert (rid, code) == (9, INVALID_REQUEST) and "nesting exceeds 128" in message
    assert classify_body(payload).error == (
        INVALID_REQUEST,
        "Invalid Request: JSON nesting exceeds 128 levels",
    )
    shallow = b'{"jsonrpc":"2.0","id":10,"method":"ping","params":' + _objects(100, closed=False)
    assert only_error(server.receive(shallow))[1] == PARSE_ERROR
    error = classify_body(shallow).error
    assert error is not None and error[0] == PARSE_ERROR


@pytest.mark.parametrize("levels", [200, 1000, 50_000])
def test_too_deep_response_fails_the_pending_call_at_once(levels: int) -> None:
    """Issue 16 (10): a malicious deep result fails the call now (not at its timeout) and
    nothing is sent back to the peer."""
    client = Session("client", version="2025-11-25")
    rid, _ = client.send_request("ping")
    payload = b'{"jsonrpc":"2.0","id":%d,"result":{"x":' % rid + _alternating(levels) + b"}}"
    events = client.receive(payload)
    assert len(events) == 1 and isinstance(events[0], ErrorReceived)
    assert events[0].id == rid and events[0].error.code == INVALID_REQUEST
    assert client.receive(b'{"jsonrpc":"2.0","id":%d,"result":{}}' % rid) == []  # forgotten


# -- batches --------------------------------------------------------------------------------


def _batch(*messages: bytes) -> bytes:
    return b"[" + b",".join(messages) + b"]"


def test_batch_accepted_on_2025_03_26() -> None:
    """2025-03-26 basic/index.mdx, Batching: implementations MUST support receiving batches;
    each invalid member gets its own error response."""
    server = Session(
        "server", version="2025-03-26", options=SessionOptions(enforce_capabilities=False)
    )
    payload = _batch(
        raw_request(1, "ping"),
        b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}',
        raw_request(2, "tools/nope"),
        b"17",
        raw_request(3, "tools/list"),
    )
    events = server.receive(payload)
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "RequestReceived",
        "NotificationReceived",
        "Outgoing",
        "Outgoing",
        "RequestReceived",
    ]
    assert isinstance(events[1], NotificationReceived)
    errors = outgoing(events)
    assert [(e["id"], e["error"]["code"]) for e in errors] == [(2, -32601), (None, -32600)]
    client = Session("client", version="2025-03-26")
    rid_a, _ = client.send_request("ping")
    rid_b, _ = client.send_request("ping")
    responses = json.dumps(
        [
            {"jsonrpc": "2.0", "id": rid_b, "result": {}},
            {"jsonrpc": "2.0", "id": rid_a, "result": {}},
        ]
    )
    events = client.receive(responses.encode())
    assert [e.id for e in events if isinstance(e, ResponseReceived)] == [rid_b, rid_a]


@pytest.mark.parametrize("version", [None, "2024-11-05", "2025-06-18", "2025-11-25"])
def test_batch_rejected_outside_2025_03_26(version: str | None) -> None:
    """2025-06-18 changelog: JSON-RPC batching removed; 2024-11-05 never had it."""
    server = Session("server", version=version)
    rid, code, message = only_error(server.receive(b" \n" + _batch(raw_request(1, "ping"))))
    assert (rid, code) == (None, INVALID_REQUEST) and "batches are not supported" in message
    assert server.inflight_ids() == []


def test_empty_and_malformed_batches() -> None:
    """JSON-RPC 2.0 section 6: an empty array is an Invalid Request; bad JSON a Parse error."""
    server = Session("server", version="2025-03-26")
    assert only_error(server.receive(b"[]"))[:2] == (None, INVALID_REQUEST)
    assert only_error(server.receive(b"[ {"))[:2] == (None, PARSE_ERROR)
