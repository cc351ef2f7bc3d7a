"""In-memory plumbing for the sans-I/O core tests: bytes move between two sessions by hand."""

from __future__ import annotations

import json
from typing import Any

from mcpbind.protocol import (
    Event,
    Outgoing,
    RequestReceived,
    ResponseReceived,
    Session,
    SessionOptions,
)
from mcpbind_types.unified.types import (
    ClientCapabilities,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    ServerCapabilities,
    ServerCapabilitiesPrompts,
    ServerCapabilitiesResources,
)

LATEST = "2025-11-25"

FULL_SERVER_CAPS = ServerCapabilities(
    tools=ServerCapabilitiesPrompts(list_changed=True),
    prompts=ServerCapabilitiesPrompts(),
    resources=ServerCapabilitiesResources(subscribe=True),
    logging={},
    completions={},
)


def init_params(
    version: str = LATEST, caps: ClientCapabilities | None = None
) -> InitializeRequestParams:
    return InitializeRequestParams(
        capabilities=caps or ClientCapabilities(),
        client_info=Implementation(name="test-client", version="1"),
        protocol_version=version,
    )


def init_result(version: str = LATEST, caps: ServerCapabilities | None = None) -> InitializeResult:
    return InitializeResult(
        capabilities=caps or FULL_SERVER_CAPS,
        protocol_version=version,
        server_info=Implementation(name="test-server", version="1"),
    )


def wire(data: bytes | None) -> Any:
    assert data is not None
    return json.loads(data)


def outgoing(events: list[Event]) -> list[Any]:
    """The JSON of every Outgoing event (error responses the core made itself)."""
    return [json.loads(e.data) for e in events if isinstance(e, Outgoing)]


def only_error(events: list[Event]) -> tuple[Any, int, str]:
    """Exactly one event, an Outgoing error response: return (id, code, message)."""
    assert len(events) == 1, events
    (msg,) = outgoing(events)
    assert msg["jsonrpc"] == "2.0" and "result" not in msg
    return msg["id"], msg["error"]["code"], msg["error"]["message"]


def handshake(
    version: str = LATEST,
    *,
    client_caps: ClientCapabilities | None = None,
    server_caps: ServerCapabilities | None = None,
    options: SessionOptions | None = None,
) -> tuple[Session, Session]:
    """A client and a server taken through initialize / result / initialized."""
    client = Session("client", options=options)
    server = Session("server", options=options)
    client.set_local_capabilities(client_caps or ClientCapabilities())
    rid, data = client.send_request("initialize", init_params(version, client_caps))
    (req,) = server.receive(data)
    assert isinstance(req, RequestReceived) and req.method == "initialize"
    (resp,) = client.receive(server.send_response(rid, init_result(version, server_caps)) or b"")
    assert isinstance(resp, ResponseReceived)
    server.receive(client.send_notification("notifications/initialized"))
    return client, server


def raw_request(id: Any, method: str, params: Any = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode()
