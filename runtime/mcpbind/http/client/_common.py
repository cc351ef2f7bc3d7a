"""Pieces both HTTP client transports share: the inbox, background tasks, HTTP errors.

The inbox is what ``receive()`` reads: every stream (POST responses, the GET stream, the
legacy SSE stream) pushes whole messages into it. Closing it with a reason makes
``receive()`` raise ``TransportClosed`` at once, which is how a dead server fails every
pending call immediately instead of leaving them to their timeouts.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec

try:
    import httpx2
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the HTTP transports need httpx2: pip install 'mcpbind[http]'") from exc
from anyio.abc import TaskGroup

from ...protocol import CONNECTION_CLOSED, INTERNAL_ERROR
from ...transports.base import TransportClosed
from ._peek import RequestId, error_response

__all__ = [
    "DEFAULT_MAX_BUFFERED_MESSAGES",
    "MessageInbox",
    "TaskSet",
    "auth_failed",
    "http_error_responses",
    "lost_responses",
    "read_capped",
]

logger = logging.getLogger("mcpbind.http.client")

_ERROR_BODY_LIMIT = 64 * 1024


#: Server messages waiting for ``receive()`` before the streams stop being read.
DEFAULT_MAX_BUFFERED_MESSAGES = 32


class MessageInbox:
    """Messages waiting for ``receive()``, and the reason once the transport is closed.

    Bounded like stdio, by backpressure: a stream hands the server's messages to :meth:`push`,
    which waits while ``max_buffered`` are queued, so a stream is read no faster than the
    session takes its messages and a server flooding notifications fills its own socket
    buffers, not the client's memory. :meth:`put` never waits: it is for the error responses
    the transport makes itself, at most one per request in flight.
    """

    def __init__(self, max_buffered: int = DEFAULT_MAX_BUFFERED_MESSAGES) -> None:
        if max_buffered < 1:
            raise ValueError("max_buffered must be at least 1")
        self.max_buffered = max_buffered
        self.reason: str | None = None
        self._queue: deque[bytes] = deque()
        self._arrived = anyio.Event()
        self._taken = anyio.Event()
        self._discarded = False

    def put(self, message: bytes) -> None:
        if self.reason is None:
            self._queue.append(message)
            self._arrived.set()

    async def push(self, message: bytes) -> None:
        """Queue a message from the server, once fewer than ``max_buffered`` are waiting."""
        while self.reason is None and len(self._queue) >= self.max_buffered:
            if self._taken.is_set():
                self._taken = anyio.Event()
            await self._taken.wait()
        self.put(message)

    async def get(self) -> bytes:
        while not self._queue or self._discarded:
            if self.reason is not None or self._discarded:
                raise TransportClosed(self.reason)
            if self._arrived.is_set():
                self._arrived = anyio.Event()
            await self._arrived.wait()
        message = self._queue.popleft()
        self._taken.set()
        return message

    def close(self, reason: str) -> None:
        """Stop accepting messages; ``get()`` raises once the queue is drained."""
        if self.reason is None:
            self.reason = reason
            self._arrived.set()
            self._taken.set()

    def discard(self) -> None:
        """Drop what is queued; ``get()`` raises from now on."""
        self._discarded = True
        self._queue.clear()
        self._arrived.set()
        self._taken.set()

    @property
    def closed(self) -> bool:
        return self.reason is not None


class TaskSet:
    """Background tasks in a task group, each in its own cancel scope.

    ``cancel_all`` stops them without cancelling the task group's own scope, which the
    task that entered the transport is running in.
    """

    def __init__(self) -> None:
        self._tg: TaskGroup | None = None
        self._scopes: set[anyio.CancelScope] = set()
        self.cancelled = False

    async def __aenter__(self) -> TaskSet:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cancel_all()
        assert self._tg is not None
        await self._tg.__aexit__(None, None, None)

    def spawn(self, fn: Callable[[], Awaitable[None]]) -> None:
        if self._tg is None:
            raise RuntimeError("enter the transport first: `async with transport:`")
        if not self.cancelled:
            self._tg.start_soon(self._run, fn)

    async def _run(self, fn: Callable[[], Awaitable[None]]) -> None:
        if self.cancelled:
            return
        with anyio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                await fn()
            except Exception:
                logger.exception("HTTP transport background task failed")
            finally:
                self._scopes.discard(scope)

    def cancel_all(self) -> None:
        self.cancelled = True
        for scope in list(self._scopes):
            scope.cancel()


async def read_capped(response: httpx2.Response, limit: int) -> bytes | None:
    """The whole body, or ``None`` if it is larger than ``limit``."""
    length = response.headers.get("content-length")
    if length is not None and length.isascii() and length.isdigit() and int(length) > limit:
        return None
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def _error_from_body(body: bytes) -> tuple[int, str, Any] | None:
    """A JSON-RPC error a server put in an HTTP error body (spec: "MAY comprise")."""
    try:
        value = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return None
    error = value.get("error") if isinstance(value, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        message = error.get("message")
        return error["code"], str(message) if message is not None else "", error.get("data")
    return None


async def http_error_responses(
    response: httpx2.Response, request_ids: tuple[RequestId, ...]
) -> list[bytes]:
    """Error responses for requests the server answered with an HTTP error status."""
    status = response.status_code
    try:
        body = await read_capped(response, _ERROR_BODY_LIMIT) or b""
    except httpx2.HTTPError:
        body = b""
    detail = f"HTTP {status} {response.reason_phrase}".rstrip()
    data: Any = {"httpStatus": status}
    challenge = response.headers.get("www-authenticate")
    if status in (401, 403) and challenge:  # why a token was refused (RFC 6750 §3)
        data["wwwAuthenticate"] = challenge
    found = _error_from_body(body)
    if found is not None:
        code, message, extra = found
        text = f"{detail}: {message}" if message else detail
        if extra is not None:
            data = extra  # as the server sent it (e.g. the versions it supports)
    else:
        code = INTERNAL_ERROR
        snippet = _plain_snippet(body, response.headers.get("content-type", ""))
        text = f"{detail}: {snippet}" if snippet else detail
    return [error_response(rid, code, text, data) for rid in request_ids]


def _plain_snippet(body: bytes, content_type: str) -> str:
    """The start of a plain-text error body on one line; nothing for an HTML page (a proxy's
    or web server's error page says no more than its status line)."""
    text = body[:400].decode("utf-8", "replace").strip()
    if "html" in content_type.lower() or text.startswith("<"):
        return ""
    line = " ".join(text.split())
    return line if len(line) <= 160 else line[:157] + "..."


def lost_responses(request_ids: tuple[RequestId, ...] | set[RequestId], why: str) -> list[bytes]:
    """Error responses for requests whose answers can no longer arrive."""
    return [error_response(rid, CONNECTION_CLOSED, why) for rid in request_ids]


def auth_failed(request_ids: tuple[RequestId, ...], exc: BaseException) -> list[bytes]:
    """Error responses for requests an ``auth=`` flow could not authorize: its one-line
    message (never a token: mcpbind.auth redacts), the HTTP status that led there."""
    status = getattr(exc, "status", None)
    data: dict[str, Any] = {"authorization": True}
    if isinstance(status, int):
        data["httpStatus"] = status
    text = f"authorization failed: {exc}" if str(exc) else f"authorization failed: {exc!r}"
    return [error_response(rid, INTERNAL_ERROR, text, data) for rid in request_ids]
