"""The core's declared methods for the client's negotiation and its 2026-07-28 pipeline:
renegotiating through the transition table, the send-capability check, the outbound row."""

from __future__ import annotations

import pytest
from proto_helpers import handshake, init_params

from mcpbind.protocol import LocalProtocolError, Session, State, custom_method
from mcpbind.protocol.state import TRANSITIONS, Transition
from mcpbind.versions import LATEST_STATELESS
from mcpbind_types.unified import methods as m
from mcpbind_types.unified.types import ServerCapabilities, ServerCapabilitiesTools


def test_a_stateless_client_renegotiates_into_the_handshake() -> None:
    """transports/stdio.mdx, Backward Compatibility: a client whose ``server/discover`` probe
    found a legacy server runs ``initialize`` on the same connection."""
    client = Session("client", LATEST_STATELESS)
    assert client.state is State.OPERATING
    with pytest.raises(LocalProtocolError, match="initialize"):
        client.send_request("initialize", init_params())  # no handshake in a stateless session
    client.restart_negotiation()
    assert (client.state, client.version) == (State.AWAITING_INIT, None)
    assert TRANSITIONS[(State.OPERATING, Transition.RENEGOTIATE)] is State.AWAITING_INIT
    client.send_request("initialize", init_params())
    assert client.state is State.INITIALIZING


def test_renegotiating_is_refused_where_the_table_has_no_step() -> None:
    """lifecycle.mdx: the handshake under way is not restarted, a server never renegotiates,
    and a closed session stays closed."""
    server = Session("server", LATEST_STATELESS)
    with pytest.raises(LocalProtocolError, match="only a client"):
        server.restart_negotiation()
    fresh = Session("client")
    with pytest.raises(LocalProtocolError, match="awaiting_init"):
        fresh.restart_negotiation()
    assert fresh.state is State.AWAITING_INIT
    fresh.send_request("initialize", init_params())
    with pytest.raises(LocalProtocolError, match="initializing"):
        fresh.restart_negotiation()
    closed = Session("client", LATEST_STATELESS)
    closed.fail_all()
    closed.restart_negotiation()
    assert (closed.state, closed.version) == (State.CLOSED, LATEST_STATELESS)


def test_check_send_capability_refuses_what_the_peer_did_not_declare() -> None:
    """logging.mdx: ``logging/setLevel`` needs the server's ``logging`` capability; the check
    is the one ``send_request`` makes."""
    client, _ = handshake(server_caps=ServerCapabilities(tools=ServerCapabilitiesTools()))
    with pytest.raises(LocalProtocolError, match="'logging'"):
        client.check_send_capability(m.C2S_SET_LEVEL)
    with pytest.raises(LocalProtocolError, match="'logging'"):
        client.send_request("logging/setLevel", {"level": "info"})
    client.check_send_capability(m.C2S_LIST_TOOLS)  # declared: no raise
    client.set_peer_capabilities({"logging": {}})
    client.check_send_capability(m.C2S_SET_LEVEL)


def test_outbound_method_names_the_row_of_any_version_or_a_registered_one() -> None:
    client = Session("client", LATEST_STATELESS)
    assert client.outbound_method("tools/call") is m.C2S_CALL_TOOL
    assert client.outbound_method("tasks/get") is m.C2S_GET_TASK  # not in this version: still
    assert client.outbound_method("vendor/thing") is None
    row = custom_method("vendor/thing", "client_to_server")
    client.register_method(row)
    assert client.outbound_method("vendor/thing") is row
    assert Session("server").outbound_method("roots/list") is m.S2C_LIST_ROOTS
