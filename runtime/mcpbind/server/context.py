"""The handler context: what a tool, resource or prompt handler may do while it runs.

A handler receives a ``Context`` when it declares a parameter annotated with it. Everything the
context does goes through the session that received the request, so it is bound to that one
client: progress for this request, log messages to this client, requests back to this client
(gated by the capabilities the client declared).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, RequestOptions
from mcpbind_types.unified import methods as m

from .principal import Principal, current_principal

__all__ = ["Context", "Peer"]

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


@dataclass(slots=True)
class Context:
    """Per-request handle given to handlers. Cheap: one per inbound request."""

    peer: Peer
    protocol_version: str | None = None
    request_id: int | str | None = None
    progress_token: int | str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    is_cancelled: Callable[[], bool] = field(default=lambda: False)
    #: The authenticated caller (subject, client, scopes, claims), ``None`` without auth.
    principal: Principal | None = field(default_factory=current_principal.get)

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled this request (the handler is also interrupted)."""
        return self.is_cancelled()

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
    ) -> t.CreateMessageResult:
        """Ask the client's LLM (``sampling/createMessage``); the client must declare sampling.

        ``key`` names the input request on protocol 2026-07-28 (mrtr.mdx); see :meth:`elicit`.
        """
        return await self._ask(m.S2C_CREATE_MESSAGE, params, timeout, key)  # type: ignore[no-any-return]

    async def elicit(
        self,
        params: t.ElicitRequestParams,
        *,
        timeout: float | None = None,
        key: str | None = None,
    ) -> t.ElicitResult:
        """Ask the user through the client (``elicitation/create``, form or URL mode).

        Handshake era: a request to the client. 2026-07-28: an ``inputRequests`` entry named
        ``key`` (default: method and call order) of an ``InputRequiredResult``; the handler is
        re-run on the client's retry and this call then returns the client's answer.
        """
        return await self._ask(m.S2C_ELICIT, params, timeout, key)  # type: ignore[no-any-return]

    async def list_roots(
        self, *, timeout: float | None = None, key: str | None = None
    ) -> t.ListRootsResult:
        """The client's roots (``roots/list``); the client must declare roots."""
        return await self._ask(m.S2C_LIST_ROOTS, None, timeout, key)  # type: ignore[no-any-return]

    def client_supports(self, *path: str) -> bool:
        """Whether the client declared a capability (for this request, on 2026-07-28)."""
        return self.peer.peer_has_capability(path)

    def _ask(
        self, method: MethodInfo[Any, Any], params: Any, timeout: float | None, key: str | None
    ) -> Awaitable[Any]:
        options = RequestOptions(timeout=timeout) if timeout is not None else None
        return self.peer.send_request(method, params, options, key=key)
