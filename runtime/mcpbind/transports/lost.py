"""Markers a transport sets in the ``data`` of the error responses it makes up for requests
whose answer cannot come: the session and the client read them, so they live below both."""

from __future__ import annotations

from typing import Final

__all__ = ["CONNECTION_LOST", "STREAM_LOST"]

CONNECTION_LOST: Final = "io.mcpbind/connectionLost"
"""Set in the ``data`` of the error a transport delivers for a request whose connection to
the server failed (it died, or cannot be reached): the session raises ``ConnectionClosed``
for it rather than a ``PeerError``, though the transport itself may live on."""

STREAM_LOST: Final = "io.mcpbind/streamLost"
"""Set in the ``data`` of the error a transport delivers for a request whose response
stream broke: on 2026-07-28 the client re-issues such a request with a new id."""
