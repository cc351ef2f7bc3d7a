"""The HTTP side of a Streamable HTTP client: one endpoint URL, the requests sent to it, the
SSE streams read from it (resumed with ``Last-Event-ID``, spec §Resumability) and the wait for
a server that went away. :class:`~mcpbind.http.client._transport.StreamableHTTPTransport`
builds the transport (send, receive, sessions, the GET stream, the fallback) on it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import anyio

try:
    import httpx2
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the HTTP transports need httpx2: pip install 'mcpbind[http]'") from exc

from ...protocol import CONNECTION_CLOSED
from ...protocol.mcp_headers import HeaderPath
from ...transports.backoff import MIN_RECONNECT_DELAY, reconnect_delay
from ...transports.lost import STREAM_LOST
from ...transports.stdio import DEFAULT_MAX_MESSAGE_SIZE
from ._common import DEFAULT_MAX_BUFFERED_MESSAGES, MessageInbox, TaskSet, lost_responses
from ._peek import RequestId, error_response, response_id, result_protocol_version
from ._reconnect import ServerWatch, connection_lost
from .legacy_sse_transport import LegacySSETransport
from .sse import SSEParser, SSETooLarge

__all__ = ["ACCEPT_POST", "ACCEPT_SSE", "DIED", "LOST", "HTTPEndpoint", "StreamEnded"]

logger = logging.getLogger("mcpbind.http.client")

ACCEPT_POST = "application/json, text/event-stream"
ACCEPT_SSE = "text/event-stream"
LOST = {STREAM_LOST: True}
DIED = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)
"""The connection broke after the request went out, before any answer: the server died."""


class StreamEnded(Exception):
    """A response stream ended before every awaited response arrived."""

    def __init__(self, abrupt: BaseException | None) -> None:
        super().__init__(str(abrupt) if abrupt else "stream ended")
        self.abrupt = abrupt


class HTTPEndpoint:
    """The connection state of a Streamable HTTP client and the reading of what the server
    sends back (the constructor's options are documented on ``StreamableHTTPTransport``)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        client: httpx2.AsyncClient | None = None,
        timeout: float = 30.0,
        sse_read_timeout: float | None = 300.0,
        open_get_stream: bool = True,
        reconnect_delay: float = 1.0,
        min_reconnect_delay: float = MIN_RECONNECT_DELAY,
        max_reconnect_delay: float = 30.0,
        max_reconnect_attempts: int = 5,
        reconnect_timeout: float = 10.0,
        terminate_on_close: bool = True,
        legacy_fallback: bool = True,
        protocol_version: str | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        auth: httpx2.Auth | str | None = None,
        max_buffered_messages: int = DEFAULT_MAX_BUFFERED_MESSAGES,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        if isinstance(auth, str):
            self.headers["authorization"] = f"Bearer {auth}"
            auth = None
        self._auth: httpx2.Auth | None = auth
        self._own_client = client is None
        self._client = client or httpx2.AsyncClient(follow_redirects=True)
        self._timeout = httpx2.Timeout(timeout, read=sse_read_timeout)
        # A notification or response is answered at once (202): no long read to wait for.
        self._notify_timeout = httpx2.Timeout(timeout)
        self._short_timeout = httpx2.Timeout(min(timeout, 5.0))
        self.open_get_stream = open_get_stream
        self.reconnect_delay = reconnect_delay
        self.min_reconnect_delay = min_reconnect_delay
        self.max_reconnect_delay = max_reconnect_delay
        self.max_reconnect_attempts = max_reconnect_attempts
        #: Waits for a server that went away; set up once the server has answered.
        self._watch = ServerWatch(
            self._answers, timeout=reconnect_timeout, first_delay=min_reconnect_delay
        )
        self._answered = False
        self.terminate_on_close = terminate_on_close
        self.legacy_fallback = legacy_fallback
        self.max_message_size = max_message_size
        #: Set by the server's initialize response (``MCP-Session-Id``).
        self.session_id: str | None = None
        self.protocol_version = protocol_version
        #: The 2024-11-05 transport in use after a fallback, else ``None``.
        self.legacy: LegacySSETransport | None = None
        self._inbox = MessageInbox(max_buffered_messages)
        self._tasks = TaskSet()
        self._closed = False
        self._init_request: bytes | None = None
        self._init_notification: bytes | None = None
        self._reinit_lock = anyio.Lock()
        self._get_running = False
        self._inflight: dict[RequestId, anyio.CancelScope] = {}  # request id -> its POST
        self._stateless: set[RequestId] = set()  # in-flight requests of the 2026-07-28 era
        #: 2026-07-28: tool name -> its ``x-mcp-header`` parameters, kept by the client from
        #: ``tools/list`` so each tools/call mirrors them into ``Mcp-Param-*`` headers.
        self.tool_headers: dict[str, list[HeaderPath]] = {}

    def _fail(self, reason: str) -> None:
        """The server is unreachable: every pending receive() fails now."""
        if not self._inbox.closed:
            logger.info("HTTP transport closed: %s", reason)
        self._inbox.close(reason)
        self._tasks.cancel_all()

    def _headers(
        self, accept: str | None, last_event_id: str | None = None, *, session: bool = True
    ) -> dict[str, str]:
        headers = dict(self.headers)
        if accept is not None:
            headers["accept"] = accept
        if session and self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        if self.protocol_version is not None:
            headers["mcp-protocol-version"] = self.protocol_version
        if last_event_id:
            headers["last-event-id"] = last_event_id
        return headers

    async def _open(
        self,
        method: str,
        body: bytes | None = None,
        last_event_id: str | None = None,
        extra: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        *,
        session: bool = True,
    ) -> httpx2.Response:
        """Send one request and return the response with its body not yet read
        (``session=False``: without the session id, for a new session's ``initialize``)."""
        accept = ACCEPT_POST if method == "POST" else ACCEPT_SSE
        headers = self._headers(accept, last_event_id, session=session)
        if body is not None:
            headers["content-type"] = "application/json"
        if extra:
            headers.update(extra)
        request = self._client.build_request(
            method, self.url, content=body, headers=headers, timeout=timeout or self._timeout
        )
        return await self._client.send(
            request, stream=True, auth=self._auth or httpx2.USE_CLIENT_DEFAULT
        )

    async def _answers(self) -> bool:
        """Whether the server answers HTTP at all (any status; a slow answer is an answer)."""
        try:
            response = await self._client.request(
                "HEAD",
                self.url,
                headers=self._headers(None),
                timeout=self._short_timeout,
                auth=self._auth or httpx2.USE_CLIENT_DEFAULT,
            )
            await response.aclose()
        except (httpx2.ConnectError, *DIED):
            return False
        except httpx2.HTTPError:
            pass
        return True

    async def _unreachable(self, exc: BaseException) -> bool:
        """After a stream broke: True if the server is gone (then it is waited for in the
        background, and the transport closes if it stays away)."""
        if await self._answers():
            return False

        async def wait() -> None:
            await self._server_back(exc)

        self._tasks.spawn(wait)
        return True

    async def _server_back(self, exc: BaseException) -> bool:
        """Wait (bounded, with backoff) for a server that answered before and went away;
        False, with the transport closed, if it does not come back."""
        if not self._answered or self._inbox.closed:
            self._fail(f"cannot connect to {self.url}: {exc}")
            return False
        if await self._watch.wait_back():
            return True
        self._fail(f"server unreachable at {self.url} for {self._watch.timeout:g}s: {exc}")
        return False

    async def _read_events(
        self,
        response: httpx2.Response,
        parser: SSEParser,
        waiting: set[RequestId] | None,
        is_init: bool = False,
    ) -> int:
        """Deliver the stream's messages until it ends or every awaited response arrived;
        return how many messages came (a priming event is none); raise ``StreamEnded`` if it
        broke."""
        count = 0
        try:
            async for chunk in response.aiter_bytes():
                for event in parser.feed(chunk):
                    if event.event != "message" or not event.data:
                        continue  # priming events carry only an id
                    count += 1
                    data = event.data.encode()
                    if waiting:
                        rid = response_id(data)
                        if rid in waiting:
                            waiting.discard(rid)
                            if is_init:
                                self._learn_version(data)
                    await self._inbox.push(data)  # waits while the session is behind
                if waiting is not None and not waiting:
                    return count
        except (httpx2.TransportError, SSETooLarge) as exc:
            raise StreamEnded(exc) from None
        return count

    def _learn_version(self, body: bytes) -> None:
        version = result_protocol_version(body)
        if version:
            self.protocol_version = version

    async def _resume(
        self, parser: SSEParser, waiting: set[RequestId], abrupt: BaseException | None
    ) -> None:
        """Get the rest of a request's stream by GET + Last-Event-ID (spec §Resumability)."""
        if not parser.last_event_id:
            if abrupt is not None:
                why = f"the server's stream broke before the response: {abrupt!r}"
                if await self._unreachable(abrupt):  # it died: ConnectionClosed
                    self._deliver(connection_lost(waiting, why))
                    return
            else:
                why = "the server ended the stream without a response"
            # 2026-07-28 streamable-http.mdx: no resumption; the client re-issues the request.
            self._deliver([error_response(r, CONNECTION_CLOSED, why, LOST) for r in waiting])
            return
        # A broken connection (not a server closing it to make us poll) may be a dead server:
        # its answers died with it.
        if abrupt is not None and await self._unreachable(abrupt):
            why = f"the server's stream broke before the response: {abrupt!r}"
            self._deliver(connection_lost(waiting, why))
            return
        failures = 0
        streak = 0  # attempts in a row that brought no message: the wait doubles
        while waiting:
            await anyio.sleep(self._backoff(parser, streak))
            try:
                response = await self._open("GET", last_event_id=parser.last_event_id)
            except httpx2.ConnectError as exc:
                self._deliver(connection_lost(waiting, f"cannot reconnect: {exc}"))
                await self._unreachable(exc)
                return
            except httpx2.HTTPError as exc:
                failures += 1
                streak += 1
                if failures > self.max_reconnect_attempts:
                    self._deliver(lost_responses(waiting, f"cannot resume the stream: {exc!r}"))
                    return
                continue
            try:
                ctype = response.headers.get("content-type", "")
                if response.status_code != 200 or not ctype.startswith(ACCEPT_SSE):
                    why = f"the server refused to resume the stream (HTTP {response.status_code})"
                    self._deliver(lost_responses(waiting, why))
                    return
                failures = 0
                try:
                    delivered = await self._read_events(response, parser, waiting)
                    streak = 0 if delivered else streak + 1
                except StreamEnded:
                    failures += 1
                    streak += 1
                    if failures > self.max_reconnect_attempts:
                        self._deliver(lost_responses(waiting, "the stream keeps breaking"))
                        return
            finally:
                await response.aclose()

    def _backoff(self, parser: SSEParser, streak: int) -> float:
        """The wait before reconnecting: the server's ``retry`` (else ``reconnect_delay``), at
        least ``min_reconnect_delay``, doubled per fruitless attempt in a row, capped at
        ``max_reconnect_delay``, with jitter (:mod:`mcpbind.transports.backoff`)."""
        base = parser.retry / 1000 if parser.retry is not None else self.reconnect_delay
        return reconnect_delay(
            base, streak, floor=self.min_reconnect_delay, cap=self.max_reconnect_delay
        )

    def _deliver(self, messages: list[bytes]) -> None:
        for message in messages:
            self._inbox.put(message)
