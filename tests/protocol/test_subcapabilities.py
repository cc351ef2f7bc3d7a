"""The core enforces sub-capabilities both ways (2025-11-25 client/sampling.mdx §Tools in
Sampling, client/elicitation.mdx §Capabilities and §Error Handling) and gates methods newer
than the negotiated version on the declared capability (basic/lifecycle.mdx §Capability
Negotiation), as the official SDKs do."""

from __future__ import annotations

from typing import Any

import pytest
from proto_helpers import handshake, only_error, raw_request

from mcpbind.protocol import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    LocalProtocolError,
    RequestReceived,
)
from mcpbind_types.unified import types as t

TOOLS_SAMPLING = {
    "maxTokens": 8,
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
}
FORM = {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}
URL = {"mode": "url", "message": "go", "url": "https://example.com", "elicitationId": "e"}


def caps(**kinds: Any) -> t.ClientCapabilities:
    return t.ClientCapabilities(**kinds)


# ----------------------------------------------------------------- receiving (the client)
def test_client_refuses_tools_in_sampling_it_did_not_declare() -> None:
    """sampling.mdx §Tools in Sampling: clients MUST declare sampling.tools to receive
    tool-enabled requests; without it the request is Invalid params (-32602)."""
    client, _ = handshake(client_caps=caps(sampling=t.ClientCapabilitiesSampling()))
    rid, code, message = only_error(
        client.receive(raw_request(1, "sampling/createMessage", TOOLS_SAMPLING))
    )
    assert (rid, code) == (1, INVALID_PARAMS)
    assert "'sampling.tools'" in message
    with_tools, _ = handshake(client_caps=caps(sampling=t.ClientCapabilitiesSampling(tools={})))
    (event,) = with_tools.receive(raw_request(1, "sampling/createMessage", TOOLS_SAMPLING))
    assert isinstance(event, RequestReceived)


@pytest.mark.parametrize(
    ("declared", "params", "accepted"),
    [
        ({"form": {}}, URL, False),
        ({"form": {}}, FORM, True),
        ({"url": {}}, FORM, False),
        ({"url": {}}, URL, True),
        ({}, FORM, True),  # an empty object is form mode only
        ({}, URL, False),
        ({}, {**FORM, "mode": "form"}, True),
    ],
)
def test_client_refuses_elicitation_modes_it_did_not_declare(
    declared: dict[str, Any], params: dict[str, Any], accepted: bool
) -> None:
    """elicitation.mdx §Error Handling: "Server sends an elicitation/create request with a mode
    not declared in client capabilities: -32602"; §Capabilities: ``{}`` means form only."""
    client, _ = handshake(client_caps=caps(elicitation=declared))
    events = client.receive(raw_request(7, "elicitation/create", params))
    if accepted:
        (event,) = events
        assert isinstance(event, RequestReceived)
    else:
        rid, code, message = only_error(events)
        assert (rid, code) == (7, INVALID_PARAMS)
        assert "elicitation" in message


# ------------------------------------------------------------------- sending (the server)
def test_server_does_not_send_what_the_client_did_not_declare() -> None:
    """sampling.mdx §Tools in Sampling and elicitation.mdx §Capabilities, the sender's MUST
    NOT: refused locally, nothing written."""
    _, server = handshake(client_caps=caps(sampling=t.ClientCapabilitiesSampling(), elicitation={}))
    with pytest.raises(LocalProtocolError, match=r"'sampling\.tools'"):
        server.send_request("sampling/createMessage", TOOLS_SAMPLING)
    with pytest.raises(LocalProtocolError, match=r"'elicitation\.url'"):
        server.send_request("elicitation/create", URL)
    server.send_request("elicitation/create", FORM)  # {} is form mode
    server.send_request("sampling/createMessage", {**TOOLS_SAMPLING, "tools": None})
    with pytest.raises(LocalProtocolError, match=r"'elicitation\.url'"):
        server.send_notification("notifications/elicitation/complete", {"elicitationId": "e"})


# ------------------------------------------------- methods newer than the negotiated version
@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_a_declared_newer_method_is_exchanged(version: str) -> None:
    """lifecycle.mdx §Capability Negotiation: a client that declares elicitation on a version
    that predates it answers it, and the server may send it (as the official SDKs do)."""
    client, server = handshake(version, client_caps=caps(elicitation={"form": {}}))
    _, data = server.send_request("elicitation/create", FORM)
    (event,) = client.receive(data)
    assert isinstance(event, RequestReceived) and event.method == "elicitation/create"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_an_undeclared_newer_method_is_refused_by_version(version: str) -> None:
    """lifecycle.mdx §Operation: without the capability the method does not exist on this
    version; both refusals name it."""
    client, server = handshake(version)
    with pytest.raises(LocalProtocolError, match=f"not in protocol version {version}"):
        server.send_request("elicitation/create", FORM)
    rid, code, message = only_error(client.receive(raw_request(3, "elicitation/create", FORM)))
    assert (rid, code) == (3, METHOD_NOT_FOUND)
    assert message.startswith(
        f"Method not found: 'elicitation/create' is not in protocol version {version}"
    )
