"""The 2024-11-05 HTTP+SSE client transport, for servers that predate Streamable HTTP.

A GET opens the server's SSE stream; its first ``endpoint`` event names the URL to POST
messages to, and the server's messages arrive as ``message`` events (2024-11-05
basic/transports.mdx §HTTP with SSE). The endpoint must be on the same origin as the
stream: a server could otherwise make the client send its messages, and the headers given
here (credentials), anywhere. There is no resumption in this transport: when the stream
ends, the transport is closed and every pending call fails at once.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping

import anyio

try:
    import httpx2
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the HTTP transports need httpx2: pip install 'mcpbind[http]'") from exc

from ...transports.base import TransportClosed
from ...transports.stdio import DEFAULT_MAX_MESSAGE_SIZE
from ._common import (
    DEFAULT_MAX_BUFFERED_MESSAGES,
    MessageInbox,
    TaskSet,
    http_error_responses,
    lost_responses,
)
from ._peek import Peek, peek
from .sse import ServerSentEvent, SSEParser, SSETooLarge

__all__ = ["LegacySSETransport", "LegacyUnavailable"]

logger = logging.getLogger("mcpbind.http.client")


class LegacyUnavailable(Exception):
    """The URL did not open an SSE stream starting with a usable ``endpoint`` event."""


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port if url.port is not None else default


class LegacySSETransport:
    """Client end of HTTP+SSE. Use as ``async with LegacySSETransport(url) as transport``.

    ``max_buffered_messages``: server messages queued for the session before the stream stops
    being read (backpressure; a shared ``inbox`` brings its own bound)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        client: httpx2.AsyncClient | None = None,
        timeout: float | httpx2.Timeout = 30.0,
        endpoint_timeout: float = 10.0,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        inbox: MessageInbox | None = None,
        tasks: TaskSet | None = None,
        max_buffered_messages: int = DEFAULT_MAX_BUFFERED_MESSAGES,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self._own_client = client is None
        self._client = client or httpx2.AsyncClient(follow_redirects=True)
        if isinstance(timeout, httpx2.Timeout):
            self._timeout = timeout
        else:
            self._timeout = httpx2.Timeout(timeout, read=None)
        # A POST is answered at once (202); its answer comes on the stream. A bounded wait
        # keeps a stuck POST from holding the sender past the session's own deadline.
        self._post_timeout = httpx2.Timeout(self._timeout.connect or 30.0)
        self.endpoint_timeout = endpoint_timeout
        self.max_message_size = max_message_size
        #: Where messages are POSTed, from the server's ``endpoint`` event.
        self.endpoint: str | None = None
        self._shared = inbox is not None  # part of a StreamableHTTPTransport after fallback
        self._inbox = inbox or MessageInbox(max_buffered_messages)
        self._tasks = tasks or TaskSet()
        self._response: httpx2.Response | None = None
        self._closed = False

    async def __aenter__(self) -> LegacySSETransport:
        await self._tasks.__aenter__()
        try:
            await self.start()
        except BaseException:
            await self.aclose()
            await self._tasks.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.aclose()
        finally:
            await self._tasks.__aexit__(None, None, None)

    async def start(self) -> None:
        """Open the stream and wait for the ``endpoint`` event; raise LegacyUnavailable."""
        headers = {**self.headers, "accept": "text/event-stream"}
        request = self._client.build_request(
            "GET", self.url, headers=headers, timeout=self._timeout
        )
        try:
            response = await self._client.send(request, stream=True)
        except httpx2.HTTPError as exc:
            raise LegacyUnavailable(f"GET {self.url} failed: {exc!r}") from exc
        ctype = response.headers.get("content-type", "")
        if response.status_code != 200 or not ctype.startswith("text/event-stream"):
            await response.aclose()
            raise LegacyUnavailable(f"GET {self.url}: HTTP {response.status_code} {ctype!r}")
        parser = SSEParser(self.max_message_size)
        chunks = response.aiter_bytes()
        early: list[ServerSentEvent] = []
        try:
            with anyio.fail_after(self.endpoint_timeout):
                while self.endpoint is None:
                    try:
                        chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        raise LegacyUnavailable(
                            "the stream ended before an endpoint event"
                        ) from None
                    events = parser.feed(chunk)
                    for i, event in enumerate(events):
                        if event.event == "endpoint":
                            self.endpoint = self._check_endpoint(event.data)
                            early = events[i + 1 :]
                            break
        except (TimeoutError, httpx2.HTTPError, SSETooLarge) as exc:
            await response.aclose()
            raise LegacyUnavailable(f"no endpoint event from {self.url}: {exc!r}") from exc
        except BaseException:
            await response.aclose()
            raise
        self._response = response
        self._tasks.spawn(lambda: self._read(response, chunks, parser, early))

    def _check_endpoint(self, data: str) -> str:
        base = httpx2.URL(self.url)
        try:
            target = base.join(data.strip())
        except httpx2.InvalidURL as exc:
            raise LegacyUnavailable(f"invalid endpoint {data!r}") from exc
        if _origin(target) != _origin(base):
            raise LegacyUnavailable(
                f"refusing endpoint {str(target)!r}: not the same origin as {self.url}"
            )
        return str(target)

    async def _read(
        self,
        response: httpx2.Response,
        chunks: AsyncIterator[bytes],
        parser: SSEParser,
        early: list[ServerSentEvent],
    ) -> None:
        reason = "the server closed the SSE stream"
        try:
            await self._deliver_events(early)
            async for chunk in chunks:
                await self._deliver_events(parser.feed(chunk))
        except (httpx2.HTTPError, SSETooLarge) as exc:
            reason = f"the SSE stream broke: {exc!r}"
        finally:
            await response.aclose()
            self._inbox.close(reason)

    async def _deliver_events(self, events: list[ServerSentEvent]) -> None:
        for event in events:
            if event.event == "message" and event.data:
                # Waits while the session is behind: the stream is not read meanwhile.
                await self._inbox.push(event.data.encode())

    async def send(self, message: bytes) -> None:
        if self._closed or self._inbox.closed or self.endpoint is None:
            raise TransportClosed(self._inbox.reason or "transport closed")
        info = peek(message)
        if info.is_request or info.method == "notifications/cancelled":
            # A request's answer comes on the stream, under the session's own deadline, and
            # a cancellation is best effort: neither may hold the caller on a POST to a
            # server that stopped answering.
            self._tasks.spawn(lambda: self._post(message, info))
            return
        await self._post(message, info)
        if self._inbox.closed:
            raise TransportClosed(self._inbox.reason)

    async def _post(self, message: bytes, info: Peek) -> None:
        """POST one message to the endpoint; failures become error responses or close."""
        assert self.endpoint is not None
        headers = {**self.headers, "content-type": "application/json"}
        try:
            response = await self._client.post(
                self.endpoint, content=message, headers=headers, timeout=self._post_timeout
            )
        except httpx2.ConnectError as exc:
            self._inbox.close(f"cannot connect to {self.endpoint}: {exc}")
            return
        except httpx2.HTTPError as exc:
            for data in lost_responses(info.request_ids, f"HTTP request failed: {exc!r}"):
                self._inbox.put(data)
            return
        if response.status_code >= 400:
            if info.is_request:
                for data in await http_error_responses(response, info.request_ids):
                    self._inbox.put(data)
            else:
                logger.warning("server rejected a message with HTTP %d", response.status_code)

    async def receive(self) -> bytes:
        return await self._inbox.get()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            if not self._shared:
                self._tasks.cancel_all()
                self._inbox.close("transport closed")
                self._inbox.discard()
            if self._response is not None:
                await self._response.aclose()
            if self._own_client:
                await self._client.aclose()
