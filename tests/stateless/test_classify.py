"""basic/versioning.mdx §Compatibility Matrix (a dual-era server selects its behaviour from
how the client opens): what ``mcpbind.protocol.classify`` makes of one inbound message."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpbind.stateless import classify

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
