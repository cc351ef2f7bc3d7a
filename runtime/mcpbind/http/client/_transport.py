"""Streamable HTTP client transport (2025-03-26, 2025-06-18, 2025-11-25 basic/transports.mdx).

Every outgoing message is one POST. A request's answer comes back on that POST, as one
JSON body or as an SSE stream carrying the server's related messages and then the response;
streams with event ids are resumed with ``GET`` + ``Last-Event-ID`` after the server's
``retry`` delay. After the handshake a standalone GET stream is opened if the server offers
one (405: it does not). A 404 for our session starts a new one by replaying the
``initialize`` exchange this transport saw. HTTP errors become JSON-RPC error responses for
the requests they answered. A server that dies fails the requests it was answering with
``ConnectionClosed``; the transport waits for it to come back (``reconnect_timeout``, with
backoff), re-initializes on its 404, and closes if it stays away, so a caller never waits
for an answer that cannot come. A server that rejects the initialize POST with
400, 404 or 405 is tried as a 2024-11-05 HTTP+SSE server (spec §Backwards Compatibility).

Use it as ``async with StreamableHTTPTransport(url) as transport:`` (it runs background
tasks), or let ``Client("https://...")`` do it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

try:
    import httpx2
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the HTTP transports need httpx2: pip install 'mcpbind[http]'") from exc

from ...protocol import CONNECTION_CLOSED
from ...transports.base import AuthorizationFailed, TransportClosed
from ._common import (
    auth_failed,
    http_error_responses,
    lost_responses,
    read_capped,
)
from ._endpoint import ACCEPT_SSE, DIED, LOST, HTTPEndpoint, StreamEnded
from ._peek import (
    Peek,
    RequestId,
    cancelled_request,
    error_response,
    peek,
    result_protocol_version,
    stateless_headers,
)
from ._reconnect import connection_lost
from .legacy_sse_transport import LegacySSETransport, LegacyUnavailable
from .sse import SSEParser, SSETooLarge

__all__ = ["StreamableHTTPTransport", "connect_http"]

logger = logging.getLogger("mcpbind.http.client")

_FALLBACK_STATUSES = (400, 404, 405)
_MAX_RESENDS = 3
"""How many times a request answered 404 (session not found) is sent again on a newer
session: first on one it starts or waits for, then only on ones other requests started."""


class StreamableHTTPTransport(HTTPEndpoint):
    """Client end of Streamable HTTP for one MCP endpoint URL.

    ``headers`` go on every request (authorization, tenant ids, ...). ``auth`` is an
    ``httpx2.Auth`` run on every request to the server, such as the OAuth client of
    :mod:`mcpbind.auth.client`, or a string sent as a bearer token. A caller-supplied
    ``client`` is used as is and never closed here. ``timeout`` bounds connecting and
    sending; ``sse_read_timeout`` bounds the wait for the next bytes of a response or
    stream (request deadlines are the session's business). ``protocol_version`` presets
    the ``MCP-Protocol-Version`` header; otherwise it is read from the initialize response.
    ``reconnect_timeout`` bounds the wait for a server that went away after answering once
    (a crash and restart): past it the transport closes (``ConnectionClosed``).
    A stream is opened again after the server's ``retry`` (else ``reconnect_delay``), never
    sooner than ``min_reconnect_delay`` (0.1 s: ``retry: 0`` cannot make it spin), doubled
    while attempts bring nothing, at most ``max_reconnect_delay`` (plus jitter).
    ``max_buffered_messages``: server messages queued for the session before the streams
    stop being read (backpressure, as on stdio: a flood costs the server, not our memory).
    """

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> StreamableHTTPTransport:
        await self._tasks.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.aclose()
        finally:
            await self._tasks.__aexit__(None, None, None)

    async def aclose(self) -> None:
        """End the session (DELETE, spec §Session Management) and stop every stream."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            self._tasks.cancel_all()
            self._inbox.close("transport closed")
            self._inbox.discard()
            if self.legacy is not None:
                await self.legacy.aclose()
            elif self.terminate_on_close and self.session_id is not None:
                await self._terminate()
            if self._own_client:
                await self._client.aclose()

    async def _terminate(self) -> None:
        with anyio.move_on_after(2.0):
            try:
                await self._client.delete(
                    self.url,
                    headers=self._headers(None),
                    timeout=self._short_timeout,
                    auth=self._auth or httpx2.USE_CLIENT_DEFAULT,
                )
            except (httpx2.HTTPError, AuthorizationFailed) as exc:  # it ends there anyway
                logger.debug("DELETE of session failed: %s", exc)

    # ------------------------------------------------------------------ transport API
    async def send(self, message: bytes) -> None:
        if self._closed or self._inbox.closed:
            raise TransportClosed(self._inbox.reason or "transport closed")
        if self.legacy is not None:
            await self.legacy.send(message)
            return
        info = peek(message)
        if info.is_request:
            if info.method == "initialize":
                self._init_request = message
            # The answer may take as long as the server likes: read it in the background,
            # so the session's own deadline (not this send) decides how long to wait.
            extra = stateless_headers(message, info.method, self.tool_headers)
            self._tasks.spawn(lambda: self._tracked(message, info, extra))
            return
        if info.method == "notifications/initialized":
            self._init_notification = message
        target = cancelled_request(message) if info.method == "notifications/cancelled" else None
        if target is None:
            await self._post_other(message, info)
            return
        # The caller gave up: stop reading that request's stream too.
        scope = self._inflight.get(target)
        if scope is not None:
            scope.cancel()
        if target not in self._stateless:
            # 2026-07-28 (basic/patterns/cancellation.mdx): closing the request's response
            # stream is the cancellation; there is no notification to POST. Before that, the
            # notification goes in the background (best effort): the caller must not wait on
            # a server that stopped answering, which may be why it gave up.
            self._tasks.spawn(lambda: self._post_quietly(message, info))

    async def receive(self) -> bytes:
        return await self._inbox.get()

    # ------------------------------------------------------------------ requests
    async def _tracked(self, message: bytes, info: Peek, extra: dict[str, str]) -> None:
        with anyio.CancelScope() as scope:
            for rid in info.request_ids:
                self._inflight[rid] = scope
                if extra:
                    self._stateless.add(rid)
            try:
                await self._request(message, info, extra=extra)
            finally:
                for rid in info.request_ids:
                    self._inflight.pop(rid, None)
                    self._stateless.discard(rid)

    async def _request(
        self,
        message: bytes,
        info: Peek,
        *,
        extra: dict[str, str] | None = None,
        resends: int = 0,
        waited: bool = False,
    ) -> None:
        """POST one request and deliver what comes back, whatever happens.

        A 404 for the session it carried (spec §Session Management, point 4) sends it again
        on a newer session: one this request starts (or waits for) if it has not been
        through a renewal yet (``resends`` 0), else only one another request started since.
        The server did not act on a request it answered 404, so sending it again loses
        nothing; ``_MAX_RESENDS`` bounds the chase where every new session is lost at once
        (a proxy that spreads requests over workers that do not share sessions)."""
        sent_session = self.session_id
        try:
            response = await self._open("POST", message, extra=extra)
        except httpx2.ConnectError as exc:
            # Nothing reached the server: once it is back (restarted), send it again.
            if not waited and await self._server_back(exc):
                await self._request(message, info, extra=extra, resends=resends, waited=True)
            elif not self._inbox.closed:
                self._deliver(connection_lost(info.request_ids, f"cannot connect: {exc}"))
            return
        except DIED as exc:
            # The server took the request and died before answering: it may have acted on
            # it, so it is not sent again; the caller gets ConnectionClosed.
            why = f"the server closed the connection before answering: {exc}"
            self._deliver(connection_lost(info.request_ids, why))
            await self._unreachable(exc)
            return
        except httpx2.HTTPError as exc:
            self._deliver(lost_responses(info.request_ids, f"HTTP request failed: {exc!r}"))
            return
        except AuthorizationFailed as exc:  # the auth= flow could not authorize
            self._deliver(auth_failed(info.request_ids, exc))
            return
        except Exception as exc:  # never leave the caller waiting (an auth= flow's bug)
            logger.exception("sending %s failed", info.method)
            self._deliver(lost_responses(info.request_ids, f"HTTP request failed: {exc!r}"))
            return
        self._answered = True
        try:
            status = response.status_code
            if (
                status == 404
                and sent_session is not None
                and resends < _MAX_RESENDS
                and info.method != "initialize"
                and await self._reinitialize(sent_session, start=resends == 0)
            ):
                await response.aclose()
                await self._request(message, info, extra=extra, resends=resends + 1)
                return
            if status >= 400 or status < 200:
                errors = await http_error_responses(response, info.request_ids)
                if (
                    info.method == "initialize"
                    and status in _FALLBACK_STATUSES
                    and self.legacy_fallback
                    and sent_session is None
                    and await self._fall_back(message)
                ):
                    return
                self._deliver(errors)
                return
            if info.method == "initialize":
                self._learn_session(response)
            await self._read_answer(response, info)
        except httpx2.ConnectError as exc:
            self._deliver(connection_lost(info.request_ids, f"cannot connect: {exc}"))
            await self._unreachable(exc)
        except Exception as exc:  # never leave the caller waiting for an answer
            logger.exception("handling the answer to %s failed", info.method)
            self._deliver(lost_responses(info.request_ids, f"HTTP transport error: {exc!r}"))
        finally:
            await response.aclose()

    def _learn_session(self, response: httpx2.Response) -> None:
        session = response.headers.get("mcp-session-id")
        if session is not None:
            if not session or not all(0x21 <= ord(c) <= 0x7E for c in session):
                logger.warning("ignoring a malformed Mcp-Session-Id from the server")
                return
            self.session_id = session

    async def _read_answer(self, response: httpx2.Response, info: Peek) -> None:
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        waiting: set[RequestId] = set(info.request_ids)
        is_init = info.method == "initialize"
        if response.status_code == 202 or (ctype == "" and response.status_code == 204):
            self._deliver(lost_responses(waiting, "server accepted the request with no answer"))
            return
        if ctype == "application/json":
            try:
                body = await read_capped(response, self.max_message_size)
            except httpx2.HTTPError as exc:
                why = f"reading the response failed: {exc!r}"
                self._deliver([error_response(r, CONNECTION_CLOSED, why, LOST) for r in waiting])
                return
            if body is None:
                why = f"response larger than {self.max_message_size} bytes"
                self._deliver(lost_responses(waiting, why))
                return
            if is_init:
                self._learn_version(body)
            await self._inbox.push(body)
            return
        if ctype != "text/event-stream":
            why = f"unexpected Content-Type {ctype or '(none)'!r} in the answer to a request"
            self._deliver(lost_responses(waiting, why))
            return
        parser = SSEParser(self.max_message_size)
        try:
            await self._read_events(response, parser, waiting, is_init)
            if not waiting:
                return
            raise StreamEnded(None)
        except StreamEnded as ended:
            await self._resume(parser, waiting, ended.abrupt)

    # ------------------------------------------------------------------ notifications, responses
    async def _post_quietly(self, message: bytes, info: Peek) -> None:
        with contextlib.suppress(TransportClosed):  # _fail() has already said why
            await self._post_other(message, info)

    async def _post_other(self, message: bytes, info: Peek, *, retried: bool = False) -> None:
        sent_session = self.session_id
        try:
            extra = stateless_headers(message, info.method)
            response = await self._open("POST", message, extra=extra, timeout=self._notify_timeout)
        except httpx2.ConnectError as exc:
            if not self._answered:
                self._fail(f"cannot connect to {self.url}: {exc}")
                raise TransportClosed(self._inbox.reason) from None
            # The server went away: this message is for the session that died with it.
            logger.warning("sending %s failed: server unreachable", info.method or "a response")
            await self._unreachable(exc)
            return
        except httpx2.HTTPError as exc:
            logger.warning("sending %s failed: %r", info.method or "a response", exc)
            return
        except AuthorizationFailed as exc:
            logger.warning("sending %s failed: %s", info.method or "a response", exc)
            return
        try:
            status = response.status_code
            if status == 404 and sent_session is not None and not retried:
                if info.method != "notifications/initialized" and await self._reinitialize(
                    sent_session
                ):
                    await self._post_other(message, info, retried=True)
                return
            if status >= 400:
                body = (await read_capped(response, 512)) or b""
                logger.warning(
                    "server rejected %s with HTTP %d: %s",
                    info.method or "a response",
                    status,
                    body.decode("utf-8", "replace"),
                )
                return
        finally:
            await response.aclose()
        if info.method == "notifications/initialized":
            self._start_get_stream()

    # ------------------------------------------------------------------ session renewal
    async def _reinitialize(self, failed_session: str, *, start: bool = True) -> bool:
        """Start a new session after a 404 (spec §Session Management, point 4) by replaying
        the initialize request and initialized notification; their answers are swallowed.
        True once the transport has a session newer than ``failed_session``: this one, one
        another task started meanwhile (waited for on the lock) or one it had already
        started; ``start=False`` only looks for those and starts none.

        The failed session's id stays the transport's until the new one is known: a request
        another task sends meanwhile carries it, gets 404 and waits here for the new session
        (sent with no id at all, it would get 400, issue 30). If no new session starts (the
        server refuses, 503 while its registry is down), the failed id stays too: the next
        request gets 404 and tries again."""
        async with self._reinit_lock:
            if self.session_id != failed_session:
                return self.session_id is not None  # another task already renewed it
            if not start:
                return False
            init, notification = self._init_request, self._init_notification
            if init is None:
                self.session_id = None
                return False
            logger.info("session %s expired; starting a new one", failed_session)
            try:
                response = await self._open("POST", init, session=False)
                try:
                    if response.status_code >= 400:
                        return False
                    self.session_id = None  # the new one, if the server gave one
                    self._learn_session(response)
                    await self._swallow_answer(response)
                finally:
                    await response.aclose()
                if notification is not None:
                    response = await self._open("POST", notification)
                    await response.aclose()
            except httpx2.ConnectError as exc:
                self._fail(f"cannot connect to {self.url}: {exc}")
                return False
            except (httpx2.HTTPError, SSETooLarge) as exc:
                logger.warning("re-initializing failed: %r", exc)
                return False
            if notification is not None:
                self._start_get_stream()
            return self.session_id is not None

    async def _swallow_answer(self, response: httpx2.Response) -> None:
        ctype = response.headers.get("content-type", "")
        if ctype.startswith("application/json"):
            body = await read_capped(response, self.max_message_size)
            if body is not None:
                self._learn_version(body)
            return
        parser = SSEParser(self.max_message_size)
        async for chunk in response.aiter_bytes():
            for event in parser.feed(chunk):
                if event.event == "message" and event.data:
                    version = result_protocol_version(event.data)
                    if version:
                        self.protocol_version = version
                        return

    # ------------------------------------------------------------------ GET stream
    def _start_get_stream(self) -> None:
        if self.open_get_stream and not self._get_running and not self._closed:
            self._get_running = True
            self._tasks.spawn(self._get_stream)

    async def _get_stream(self) -> None:
        """The standalone server-to-client stream (spec §Listening for Messages)."""
        try:
            await self._get_stream_loop()
        except AuthorizationFailed as exc:
            logger.warning("no GET stream: %s", exc)
        finally:
            self._get_running = False

    async def _get_stream_loop(self) -> None:
        """Listen, and listen again after each end: after the server's ``retry`` delay (a
        polling server), backing off while the streams bring nothing (``_backoff``: a floor,
        doubling, a cap, jitter), so no answer of the server makes this loop spin."""
        parser = SSEParser(self.max_message_size)
        failures = 0  # attempts in a row that failed or came back empty: past the limit, stop
        streak = 0  # attempts in a row that brought no message: the wait doubles
        while True:
            sent_session = self.session_id
            try:
                response = await self._open("GET", last_event_id=parser.last_event_id or None)
            except httpx2.ConnectError as exc:
                if not await self._server_back(exc):
                    return
                # Back: its 404 (a restarted server) starts a new session below. Not at once
                # again and again: a server that answers the probe but fails every stream
                # connection (a TLS handshake, say) is backed off too.
                await anyio.sleep(self._backoff(parser, streak))
                streak += 1
                continue
            except httpx2.HTTPError as exc:
                failures += 1
                if failures > self.max_reconnect_attempts:
                    logger.warning("giving up on the GET stream: %r", exc)
                    return
                await anyio.sleep(self._backoff(parser, streak))
                streak += 1
                continue
            try:
                ctype = response.headers.get("content-type", "")
                status = response.status_code
                if status == 404 and sent_session is not None:
                    # The session is gone (the server restarted): start a new one, listen again
                    # (a server that keeps refusing the stream is backed off, then given up on).
                    failures += 1
                    streak += 1
                    if failures > self.max_reconnect_attempts:
                        logger.warning("giving up on the GET stream: HTTP 404 after a new session")
                        return
                    if not await self._reinitialize(sent_session):
                        return
                    parser = SSEParser(self.max_message_size)
                    if failures == 1:
                        continue  # the first time, at once
                elif status != 200 or not ctype.startswith(ACCEPT_SSE):
                    # 405: not offered. Anything else: not usable; requests still work.
                    logger.debug("no GET stream: HTTP %d", status)
                    return
                else:
                    try:
                        last_id = parser.last_event_id
                        delivered = await self._read_events(response, parser, None)
                        streak = 0 if delivered else streak + 1
                        if delivered or parser.last_event_id != last_id or parser.retry is not None:
                            failures = 0  # a polling server: reconnect after its retry delay
                        else:
                            failures += 1  # an empty stream: back off, eventually give up
                            if failures > self.max_reconnect_attempts:
                                return
                    except StreamEnded as ended:
                        failures += 1
                        streak += 1
                        if failures > self.max_reconnect_attempts:
                            return
                        if ended.abrupt is not None and not await self._answers():
                            if not await self._server_back(ended.abrupt):  # a dead server
                                return
                            failures = streak = 0
                            continue  # back: listen again at once
            finally:
                await response.aclose()
            await anyio.sleep(self._backoff(parser, max(streak - 1, 0)))

    # ------------------------------------------------------------------ fallback
    async def _fall_back(self, initialize: bytes) -> bool:
        """Try the URL as a 2024-11-05 HTTP+SSE server; on success it carries everything."""
        legacy = LegacySSETransport(
            self.url,
            headers=self.headers,
            client=self._client,
            timeout=self._timeout,
            inbox=self._inbox,
            tasks=self._tasks,
            max_message_size=self.max_message_size,
        )
        try:
            await legacy.start()
        except LegacyUnavailable as exc:
            logger.debug("not a 2024-11-05 server either: %s", exc)
            return False
        logger.info("%s is a 2024-11-05 HTTP+SSE server; using that transport", self.url)
        self.legacy = legacy
        await legacy.send(initialize)
        return True


@asynccontextmanager
async def connect_http(url: str, **options: Any) -> AsyncIterator[StreamableHTTPTransport]:
    """Open a transport to an MCP server URL: Streamable HTTP, falling back to the
    2024-11-05 HTTP+SSE transport when the server answers the initialize POST with 400,
    404 or 405 and offers an SSE stream with an ``endpoint`` event instead.

    ``options`` are those of :class:`StreamableHTTPTransport`.
    """
    async with StreamableHTTPTransport(url, **options) as transport:
        yield transport
