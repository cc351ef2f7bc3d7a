"""basic/versioning.mdx §Compatibility Matrix (a dual-era server selects its behaviour from
how the client opens): what ``mcpbind.protocol.classify`` makes of one inbound message."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpbind.protocol.classify import classify, classify_body

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


def _msg(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (_msg(id=1, method="tools/list", params={"_meta": META}), "stateless"),
        (_msg(id="a", method="server/discover"), "stateless"),
        (_msg(id=2, method="initialize", params={"protocolVersion": "2025-11-25"}), "initialize"),
        (_msg(id=3, method="initialize", params={"_meta": META}), "stateless"),
        (_msg(id=4, method="tools/list"), "other"),
        (_msg(id=True, method="tools/list", params={"_meta": META}), "other"),
        (_msg(method="notifications/cancelled", params={"requestId": 9}), "cancelled"),
        (_msg(method="notifications/initialized"), "other"),
        (_msg(id=5, result={}), "other"),
        (b"[1, 2]", "other"),
        (b"{not json", "other"),
        (json.dumps({"jsonrpc": "1.0", "id": 1, "method": "server/discover"}).encode(), "other"),
    ],
)
def test_classify(data: bytes, kind: str) -> None:
    """versioning.mdx: modern _meta or server/discover → stateless; initialize → handshake;
    anything else (including malformed input) is left to the session, which answers it."""
    incoming = classify(data)
    assert incoming.kind == kind
    if kind == "stateless":
        assert incoming.id is not None and incoming.method is not None
    if kind == "cancelled":
        assert incoming.cancelled_id == 9
    if kind == "initialize":
        assert incoming.requested_version == "2025-11-25"


@pytest.mark.parametrize(
    "message",
    [
        {"id": 1, "method": "tools/call", "params": {"_meta": META, "name": "echo"}},
        {"id": 2, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        {"id": 3, "method": "tools/list"},
        {"method": "notifications/cancelled", "params": {"requestId": 9}},
    ],
)
def test_one_message_and_post_body_agree(message: dict[str, Any]) -> None:
    """One classifier for the stdio router and the HTTP endpoint (basic/versioning.mdx,
    dual-era server): a single message read as a POST body gets the same answer as read
    alone -- era, id, method, raw params, requested version, cancelled id."""
    data = _msg(**message)
    alone = classify(data)
    body = classify_body(data)
    assert body.error is None
    era = "stateless" if alone.kind == "stateless" else "handshake"
    assert body.era == era
    if alone.kind == "cancelled":
        assert body.cancelled == [alone.cancelled_id] and body.request_ids == []
        return
    assert body.request_ids == [message["id"]] and body.methods == [message["method"]]
    assert body.initialize == (alone.kind == "initialize")
    assert body.requested_version == alone.requested_version
    if alone.kind != "other":
        assert body.params == alone.params
    if era == "stateless":
        # The peek holds what the HTTP header checks compare: nothing decodes the body again.
        assert body.peek is not None and body.peek.name == "echo"
        assert body.meta_version == "2026-07-28"
