"""Randomized interleavings of send / complete / cancel / duplicate-response / delivery."""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpbind.protocol import (
    Cancelled,
    ErrorReceived,
    McpError,
    Outgoing,
    ResponseReceived,
    Session,
)
from mcpbind_types.unified.types import Result

ACTIONS_PER_EXAMPLE = 100
EXAMPLES = 100  # 100 x 100 = 10,000 actions in total

KINDS = (
    "send",
    "complete",
    "fail",
    "cancel",
    "expire",
    "duplicate",
    "deliver_c2s",
    "deliver_s2c",
    "replay",
)
# Each action is two bytes (kind, argument): one binary draw per example keeps generation cheap
# while hypothesis can still shrink a failing script.
script = st.binary(min_size=2 * ACTIONS_PER_EXAMPLE, max_size=2 * ACTIONS_PER_EXAMPLE)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(script)
def test_random_interleavings_never_double_respond(raw: bytes) -> None:
    """basic/index.mdx, Responses (one response per request) and utilities/cancellation.mdx,
    Behavior Requirements / Timing Considerations: with messages delivered out of order,
    cancellations racing responses and handlers answering twice, the server never emits two
    responses for one id, emits none after it saw the cancellation, the client resolves each
    request at most once, and both tables are empty once everything is drained."""
    actions = [(KINDS[raw[i] % len(KINDS)], raw[i + 1]) for i in range(0, len(raw), 2)]
    assert len(actions) == ACTIONS_PER_EXAMPLE
    client = Session("client", version="2025-11-25")
    server = Session("server", version="2025-11-25")
    c2s: list[bytes] = []
    s2c: list[bytes] = []
    delivered: list[bytes] = []
    answered: list[int] = []
    server_responses: Counter[int] = Counter()
    client_resolutions: Counter[int] = Counter()
    seen_cancel: set[int] = set()

    def respond(rid: int, error: bool) -> None:
        data = (
            server.send_error(rid, McpError(-32603, "x"))
            if error
            else server.send_response(rid, Result())
        )
        if data is not None:
            assert rid not in seen_cancel, "response produced after the cancellation"
            server_responses[rid] += 1
            s2c.append(data)
        answered.append(rid)

    def to_server(data: bytes) -> None:
        for event in server.receive(data):
            assert not isinstance(event, Outgoing), json.loads(event.data)
            if isinstance(event, Cancelled):
                assert isinstance(event.request_id, int)
                seen_cancel.add(event.request_id)

    def to_client(data: bytes) -> None:
        delivered.append(data)
        for event in client.receive(data):
            assert isinstance(event, ResponseReceived | ErrorReceived)
            assert isinstance(event.id, int)
            client_resolutions[event.id] += 1

    for kind, n in actions:
        inflight = server.inflight_ids()
        pending = client.pending_ids()
        if kind == "send":
            c2s.append(client.send_request("ping")[1])
        elif kind in ("complete", "fail") and inflight:
            respond(int(inflight[n % len(inflight)]), kind == "fail")
        elif kind in ("cancel", "expire") and pending:
            rid = pending[n % len(pending)]
            data = client.cancel(rid, "r") if kind == "cancel" else client.expire(rid)
            assert data is not None
            c2s.append(data)
        elif kind == "duplicate" and answered:
            respond(answered[n % len(answered)], n % 2 == 0)
        elif kind == "deliver_c2s" and c2s:
            to_server(c2s.pop(n % len(c2s)))
        elif kind == "deliver_s2c" and s2c:
            to_client(s2c.pop(n % len(s2c)))
        elif kind == "replay" and delivered:
            assert client.receive(delivered[n % len(delivered)]) == []

    # Drain: deliver everything, let every handler finish, deliver the answers.
    while c2s:
        to_server(c2s.pop())
    for rid in server.inflight_ids():
        respond(int(rid), False)
    while s2c:
        to_client(s2c.pop(0))

    assert all(count == 1 for count in server_responses.values())
    assert all(count == 1 for count in client_resolutions.values())
    assert server.inflight_ids() == []
    assert client.pending_ids() == []
