"""The sessionless 2025 mode's sessions (``StreamableHTTPApp(sessionless=True)``): each POST is
answered by a session that starts past the handshake and serves that POST alone.

Building one (the protocol core, its capability tables, the read-loop task) costs several
times what answering an ``echo`` costs, so a session whose POST is answered and that holds
nothing (no handler running, no request of the server's awaiting the client, no stream) goes
back to a small free list and answers a later POST of the same protocol version: the request
path is the same (``HttpSession`` + the app's dispatch), only the construction is saved.
What a POST may leave on the session is reset first (logging level, resource subscriptions,
messages sent outside any request, ``ctx.session_state``, the principal); a session that is not idle is closed, as before.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...server.app import Server
from .session import HttpSession

__all__ = ["OneShotSessions"]

#: Idle sessions kept per app: enough for the POSTs that run at once on one worker.
MAX_IDLE = 64


class OneShotSessions:
    """Hands out a session per POST and takes it back (kept for reuse when idle)."""

    __slots__ = ("_idle", "server", "session_options")

    def __init__(self, server: Server, **session_options: Any) -> None:
        self.server = server
        #: Passed to every ``HttpSession`` built (``options``, ...).
        self.session_options = session_options
        self._idle: dict[str | None, list[HttpSession]] = {}

    def take(self, version: str | None) -> HttpSession:
        """A session for one POST: at ``version`` (past the handshake), or ``None`` for an
        ``initialize`` (a fresh one, never reused: the handshake changes its state)."""
        if version is not None:
            idle = self._idle.get(version)
            while idle:
                session = idle.pop()
                if not session.closed:
                    return session
        session = HttpSession(
            self.server, None, version=version, sessionless=True, **self.session_options
        )
        session.start()
        return session

    async def give_back(self, session: HttpSession, version: str | None) -> None:
        """The POST is answered: keep the session (taken at ``version``) for the next one if
        it is idle, else end it."""
        if version is not None and not _settled(session):
            await asyncio.sleep(0)  # a handler that has just answered finishes its bookkeeping
        idle = self._idle.setdefault(version, []) if version is not None else None
        if idle is None or not _settled(session) or sum(map(len, self._idle.values())) >= MAX_IDLE:
            await session.close()
            return
        server_session = session.server_session
        server_session.log_level = None
        server_session.subscriptions.clear()
        server_session.state = {}  # ctx.session_state: a new, empty one per POST
        server_session.principal = None  # the next POST may come from someone else
        session.standalone.take_backlog()
        idle.append(session)

    async def aclose(self) -> None:
        """End every idle session."""
        sessions = [s for idle in self._idle.values() for s in idle]
        self._idle.clear()
        for session in sessions:
            await session.close()


def _settled(session: HttpSession) -> bool:
    return (
        not session.closed
        and not session.busy
        and session.server_session.connection.idle
        and not session.server_session.core.pending_ids()
    )
