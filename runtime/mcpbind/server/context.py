"""The handler context: what a tool, resource or prompt handler may do while it runs.

A handler receives a ``Context`` when it declares a parameter annotated with it. Everything the
context does goes through the session that received the request, so it is bound to that one
client: progress for this request, log messages to this client, requests back to this client
(gated by the capabilities the client declared).
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, RequestOptions

from .._lazy import LazyModule
from ..protocol import LocalProtocolError
from .principal import Principal, current_principal

if TYPE_CHECKING:
    from mcpbind_types.unified import methods as m
else:  # the method table (and the types) imported at the first use (issue 15, cold start)
    m = LazyModule("mcpbind_types.unified.methods", globals(), "m")

__all__ = ["Context", "Peer", "current_request_headers"]

S = TypeVar("S")

_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Peer(Protocol):
    """The part of a session a handler context needs (implemented by the runtime session)."""

    async def send_request(
        self,
        method: MethodInfo[Any, Any],
        params: Any,
        options: RequestOptions | None = None,
        *,
        key: str | None = None,
    ) -> Any: ...

    async def send_notification(self, method: MethodInfo[Any, None], params: Any) -> None: ...

    def peer_has_capability(self, path: tuple[str, ...]) -> bool: ...

    @property
    def log_level(self) -> str | None: ...


def _cancelled() -> bool:
    return True


async def _checkpoint() -> None:
    """Let the event loop run once: a notification a handler sends is a checkpoint, delivered
    or not. A send to a client that has gone returns without suspending, so a handler sending
    in a loop would otherwise hold the loop (every other session waits) and its cancellation
    could not land until the loop ended (tests/server/test_context_checkpoints.py)."""
    import asyncio  # with the first notification, not with ``Server`` (cold start)

    await asyncio.sleep(0)


#: The headers of the HTTP request being served (``None``: not over HTTP), set by the HTTP
#: apps for the request's task; a session's requests get their POST's headers explicitly.
current_request_headers: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "mcpbind_request_headers", default=None
)


class Context(msgspec.Struct):
    """Per-request handle given to handlers. Cheap: one per inbound request."""

    peer: Peer
    protocol_version: str | None = None
    request_id: int | str | None = None
    progress_token: int | str | None = None
    meta: dict[str, Any] = msgspec.field(default_factory=dict)
    is_cancelled: Callable[[], bool] = lambda: False
    #: State of this client's session, yours to fill: the same dict for every request of one
    #: session (a stdio connection, one ``Mcp-Session-Id`` over HTTP), so a ``Server`` shared
    #: by all sessions keeps per-session data here. Where there is no session (2026-07-28,
    #: ``sessionless=True`` HTTP) each request gets a new, empty one.
    session_state: dict[str, Any] = msgspec.field(default_factory=dict)
    #: The session's ``debug`` setting: exception text in error responses and tool results.
    debug_errors: bool = False
    #: The authenticated caller (subject, client, scopes, claims), ``None`` without auth.
    principal: Principal | None = msgspec.field(default_factory=current_principal.get)
    #: The headers of the HTTP request that carried this request (both eras, the legacy
    #: HTTP+SSE endpoint), read-only, names in lower case, credentials left out; ``None`` on
    #: stdio and in memory. The client chose them: trust one only when a proxy you control
    #: sets it (docs/guides/request-headers.md).
    headers: Mapping[str, str] | None = msgspec.field(default_factory=current_request_headers.get)
    #: The value of the server's running lifespan (``Server(lifespan=...)``), ``None``
    #: without one; :meth:`lifespan_state_as` gives it typed.
    lifespan_state: Any = None

    def lifespan_state_as(self, kind: type[S]) -> S:
        """:attr:`lifespan_state`, checked to be a ``kind`` (a ``TypeError`` if it is not):
        ``pool = ctx.lifespan_state_as(Pool)`` is typed ``Pool``."""
        state = self.lifespan_state
        if not isinstance(state, kind):
            raise TypeError(
                f"the lifespan state is a {type(state).__name__}, not a {kind.__name__}"
                + (" (the server has no running lifespan)" if state is None else "")
            )
        return state

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled this request (the handler is also interrupted).
        A ``def`` tool, which Python cannot interrupt, reads it from its thread to stop early;
        it stays true after the request was abandoned."""
        return self.is_cancelled()

    def mark_cancelled(self) -> None:
        """Make :attr:`cancelled` true for good (the request was abandoned)."""
        self.is_cancelled = _cancelled

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` if the client asked for progress on this request."""
        if self.progress_token is None:
            return
        params = t.ProgressNotificationParams(progress=progress, progress_token=self.progress_token)
        if total is not None:
            params.total = total
        if message is not None:
            params.message = message
        await self.peer.send_notification(m.S2C_PROGRESS, params)
        await _checkpoint()

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` when ``level`` is at or above the client's level."""
        if level not in _LEVELS:
            raise ValueError(f"unknown log level {level!r}; one of {', '.join(_LEVELS)}")
        threshold = self.peer.log_level
        if threshold is None or _LEVELS.index(level) < _LEVELS.index(threshold):
            return
        params = t.LoggingMessageNotificationParams(data=data, level=level)  # type: ignore[arg-type]
        if logger is not None:
            params.logger = logger
        await self.peer.send_notification(m.S2C_LOGGING_MESSAGE, params)
        await _checkpoint()

    async def debug(self, data: Any) -> None:
        await self.log("debug", data)

    async def info(self, data: Any) -> None:
        await self.log("info", data)

    async def warning(self, data: Any) -> None:
        await self.log("warning", data)

    async def error(self, data: Any) -> None:
        await self.log("error", data)

    async def sample(
        self,
        params: t.CreateMessageRequestParams,
        *,
        timeout: float | None = None,
        key: str | None = None,
        task: bool = False,
    ) -> t.CreateMessageResult:
        """Ask the client's LLM (``sampling/createMessage``); the client must declare sampling.

        ``key`` names the input request on protocol 2026-07-28 (mrtr.mdx); see :meth:`elicit`.
        ``task``: run it as a task on the client (see :meth:`elicit`).
        """
        if task:
            return await self._ask_as_task(m.S2C_CREATE_MESSAGE, params, timeout)  # type: ignore[no-any-return]
        return await self._ask(m.S2C_CREATE_MESSAGE, params, timeout, key)  # type: ignore[no-any-return]

    async def elicit(
        self,
        params: t.ElicitRequestParams,
        *,
        timeout: float | None = None,
        key: str | None = None,
        task: bool = False,
    ) -> t.ElicitResult:
        """Ask the user through the client (``elicitation/create``, form or URL mode).

        Handshake era: a request to the client. 2026-07-28: an ``inputRequests`` entry named
        ``key`` (default: method and call order) of an ``InputRequiredResult``; the handler is
        re-run on the client's retry and this call then returns the client's answer.

        ``task=True`` (2025-11-25, a client that declared ``tasks.requests.elicitation.create``):
        the client runs it as a task; this call polls it and returns its result, and cancels
        the task if ``timeout`` passes or the call is cancelled (tasks.mdx §Task-Augmented
        Sampling Request; :mod:`mcpbind.server.tasks.requesting`).
        """
        if task:
            return await self._ask_as_task(m.S2C_ELICIT, params, timeout)  # type: ignore[no-any-return]
        return await self._ask(m.S2C_ELICIT, params, timeout, key)  # type: ignore[no-any-return]

    async def list_roots(
        self, *, timeout: float | None = None, key: str | None = None
    ) -> t.ListRootsResult:
        """The client's roots (``roots/list``); the client must declare roots."""
        return await self._ask(m.S2C_LIST_ROOTS, None, timeout, key)  # type: ignore[no-any-return]

    def elicitation_completion(self, elicitation_id: str) -> Callable[[], Awaitable[None]]:
        """A callable sending ``notifications/elicitation/complete`` for ``elicitation_id`` to
        this client (elicitation.mdx §Completion Notifications for URL Mode Elicitation): keep
        it and call it when the out-of-band interaction ends, also after this handler
        returned. Needs the client's ``elicitation.url``."""
        if not self.client_supports("elicitation", "url"):
            raise LocalProtocolError(
                "notifications/elicitation/complete needs the client capability "
                "'elicitation.url', which the client did not declare"
            )
        peer = self.peer
        params = t.ElicitationCompleteNotificationParams(elicitation_id=elicitation_id)

        async def complete() -> None:
            from ..runner import current_request_id  # imported with a connection

            # Not on this request's response stream, which may be gone by then.
            token = current_request_id.set(None)
            try:
                await peer.send_notification(m.S2C_ELICITATION_COMPLETE, params)
            finally:
                current_request_id.reset(token)

        return complete

    def client_supports(self, *path: str) -> bool:
        """Whether the client declared a capability (for this request, on 2026-07-28)."""
        return self.peer.peer_has_capability(path)

    async def _ask_as_task(
        self, method: MethodInfo[Any, Any], params: Any, timeout: float | None
    ) -> Any:
        from .tasks.requesting import ask_as_task

        return await ask_as_task(self.peer, self.protocol_version, method, params, timeout=timeout)

    def _ask(
        self, method: MethodInfo[Any, Any], params: Any, timeout: float | None, key: str | None
    ) -> Awaitable[Any]:
        options = RequestOptions(timeout=timeout) if timeout is not None else None
        return self.peer.send_request(method, params, options, key=key)
