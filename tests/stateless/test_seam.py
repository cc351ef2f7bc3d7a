"""The transport-independent seam ``mcpbind.server.dispatch.answer`` as a transport uses it:
error codes for status mapping, request-scoped notifications through ``emit``, and the
principal bound into requestState (basic/patterns/mrtr.mdx §Server Requirements 5)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpbind.server.dispatch import answer

from .app import build
from .helpers import META, accept

pytestmark = pytest.mark.anyio

META_KEY = "io.modelcontextprotocol/protocolVersion"


def _body(**params: Any) -> bytes:
    return json.dumps({**params, "_meta": {**META, **params.pop("_meta", {})}}).encode()


async def test_error_codes_for_transports() -> None:
    """basic/index.mdx §Error Codes: the reply carries the code a transport maps to a status."""
    server = build()
    ok = await answer(server, 1, "tools/list", _body())
    assert ok.error_code is None and json.loads(ok.data)["result"]["resultType"] == "complete"
    assert ok.http_status == 200
    unknown = await answer(server, 2, "ping", _body())
    assert (unknown.error_code, unknown.http_status) == (-32601, 404)
    garbled = await answer(server, 3, "tools/list", b"{not json")
    assert garbled.error_code == -32700
    old = await answer(server, 4, "tools/list", _body(_meta={META_KEY: "1999-01-01"}))
    assert (old.error_code, old.http_status) == (-32022, 400)
    assert json.loads(old.data)["id"] == 4
    bare = await answer(server, 5, "server/discover", b"{}")
    assert (bare.error_code, bare.malformed, bare.http_status) == (-32602, True, 400)
    caps = await answer(
        server,
        6,
        "tools/call",
        _body(name="needs_sampling", _meta={"io.modelcontextprotocol/clientCapabilities": {}}),
    )
    assert (caps.error_code, caps.http_status) == (-32021, 400)
    missing = await answer(server, 7, "resources/read", _body(uri="mem://none"))
    assert (missing.error_code, missing.malformed, missing.http_status) == (-32602, False, 200)


async def test_emit_gets_request_scoped_notifications() -> None:
    """basic/patterns/progress.mdx: progress for the request's token goes to ``emit``."""
    sent: list[dict[str, Any]] = []

    async def emit(message: bytes) -> None:
        sent.append(json.loads(message))

    body = _body(name="chatty", arguments={"count": 2}, _meta={"progressToken": 7})
    reply = await answer(build(), "r1", "tools/call", body, emit=emit)
    assert json.loads(reply.data)["result"]["content"][0]["text"] == "done"
    assert [m["params"]["progress"] for m in sent] == [1, 2]
    assert all(m["params"]["progressToken"] == 7 for m in sent)


async def test_state_is_bound_to_the_principal() -> None:
    """mrtr.mdx §Server Requirements 5: state presented by another principal is rejected."""
    server = build()
    first = await answer(server, 1, "tools/call", _body(name="greet"), principal="alice")
    state = json.loads(first.data)["result"]["requestState"]
    retry = {"inputResponses": {"user_name": accept(name="A")}, "requestState": state}
    stolen = await answer(server, 2, "tools/call", _body(name="greet", **retry), principal="bob")
    assert stolen.error_code == -32602
    anonymous = await answer(server, 3, "tools/call", _body(name="greet", **retry))
    assert anonymous.error_code == -32602
    owner = await answer(server, 4, "tools/call", _body(name="greet", **retry), principal="alice")
    assert json.loads(owner.data)["result"]["content"][0]["text"] == "Hello, A!"
