"""Lifecycle states and the transition table (basic/lifecycle.mdx).

Client: AWAITING_INIT --send initialize--> INITIALIZING --initialize result--> INITIALIZED
        --send notifications/initialized--> OPERATING.
Server: AWAITING_INIT --initialize request--> INITIALIZING --send initialize result-->
        INITIALIZED --notifications/initialized--> OPERATING.
An error (or a timeout) for ``initialize`` goes back to AWAITING_INIT; so does a restart of
the negotiation from OPERATING (a client whose ``server/discover`` found a handshake-era
server, :meth:`mcpbind.protocol.core.Session.restart_negotiation`); ``fail_all`` (the peer
went away) goes to CLOSED from anywhere. Any (state, transition) pair not in the table leaves
the state unchanged.
"""

from __future__ import annotations

import enum
from typing import Final, Literal

__all__ = [
    "ALLOWED_REQUESTS",
    "TRANSITIONS",
    "Role",
    "State",
    "Transition",
    "next_state",
]

Role = Literal["client", "server"]


class State(enum.Enum):
    AWAITING_INIT = "awaiting_init"
    INITIALIZING = "initializing"
    INITIALIZED = "initialized"
    OPERATING = "operating"
    CLOSED = "closed"


class Transition(enum.Enum):
    INIT_REQUEST = "init_request"  # client sends / server receives `initialize`
    INIT_RESULT = "init_result"  # server sends / client receives its result
    INIT_FAILED = "init_failed"  # error response, timeout or local cancel of `initialize`
    INITIALIZED = "initialized"  # client sends / server receives notifications/initialized
    RENEGOTIATE = "renegotiate"  # client: the stateless probe found a legacy server
    CLOSE = "close"


_S = State
_T = Transition

TRANSITIONS: Final[dict[tuple[State, Transition], State]] = {
    (_S.AWAITING_INIT, _T.INIT_REQUEST): _S.INITIALIZING,
    (_S.INITIALIZING, _T.INIT_RESULT): _S.INITIALIZED,
    (_S.INITIALIZING, _T.INIT_FAILED): _S.AWAITING_INIT,
    (_S.INITIALIZED, _T.INITIALIZED): _S.OPERATING,
    (_S.OPERATING, _T.RENEGOTIATE): _S.AWAITING_INIT,
    (_S.AWAITING_INIT, _T.CLOSE): _S.CLOSED,
    (_S.INITIALIZING, _T.CLOSE): _S.CLOSED,
    (_S.INITIALIZED, _T.CLOSE): _S.CLOSED,
    (_S.OPERATING, _T.CLOSE): _S.CLOSED,
}


def next_state(state: State, transition: Transition) -> State:
    return TRANSITIONS.get((state, transition), state)


ALL: Final = None
"""Marker: any request (other than ``initialize``) is allowed in this state."""

# Requests that may be *sent by the client* / *received by the server* (server-side gate) and
# requests the *server may send*, per state. ``None`` means "everything but initialize".
# lifecycle.mdx, Initialization: "The client SHOULD NOT send requests other than pings before
# the server has responded to the initialize request"; "The server SHOULD NOT send requests
# other than pings and logging before receiving the initialized notification".
ALLOWED_REQUESTS: Final[dict[tuple[Role, State], frozenset[str] | None]] = {
    ("client", _S.AWAITING_INIT): frozenset({"initialize", "ping"}),
    ("client", _S.INITIALIZING): frozenset({"ping"}),
    ("client", _S.INITIALIZED): ALL,
    ("client", _S.OPERATING): ALL,
    ("client", _S.CLOSED): frozenset(),
    ("server", _S.AWAITING_INIT): frozenset({"ping"}),
    ("server", _S.INITIALIZING): frozenset({"ping"}),
    ("server", _S.INITIALIZED): frozenset({"ping"}),
    ("server", _S.OPERATING): ALL,
    ("server", _S.CLOSED): frozenset(),
}
"""Keyed by the *sender's* role: which requests the sender may issue in each state."""
