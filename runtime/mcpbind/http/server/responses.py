"""Writing one stream of a session to an HTTP response: as SSE (events as they come, with
keep-alive comments on the idle GET stream) or, in JSON mode, as one body once every
response is in.

The response ends when the stream ends, when the server closes the connection to make the
client poll (a final ``retry`` field), or when the client leaves; what is sent after that
waits in the stream's backlog and the event store for the next connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from ...protocol.errors import INVALID_REQUEST
from ._asgi import Receive, Send, send_error, send_response
from .http_session import HttpSession
from .streams import Item, Outbox, Stream, Timeout, sse_frame

__all__ = [
    "SESSION_NOT_FOUND",
    "refuse_client_session",
    "refuse_new_session",
    "reply_json",
    "reply_sse",
    "sessions_of",
]

logger = logging.getLogger("mcpbind.http")

SESSION_NOT_FOUND = -32001
"""JSON-RPC code in the body of a 404 for an unknown or terminated session."""


async def refuse_new_session(send: Send) -> None:
    """503 with ``Retry-After``: the app already has ``max_sessions`` live sessions."""
    await send_error(
        send,
        503,
        INVALID_REQUEST,
        "Service Unavailable: too many sessions",
        [(b"retry-after", b"5")],
    )


def sessions_of(sessions: Iterable[HttpSession], address: str | None) -> int:
    """How many of ``sessions`` the client at ``address`` opened (0 when it is unknown)."""
    if address is None:
        return 0
    return sum(1 for s in sessions if s.client_address == address)


async def refuse_client_session(send: Send) -> None:
    """503 with ``Retry-After``: the client already has ``max_sessions_per_client``."""
    await send_error(
        send,
        503,
        INVALID_REQUEST,
        "Service Unavailable: too many sessions for this client",
        [(b"retry-after", b"5")],
    )


_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),  # nginx: do not buffer the stream
]
_JSON = b"application/json"


async def reply_json(
    session: HttpSession,
    stream: Stream,
    outbox: Outbox,
    send: Send,
    extra: list[tuple[bytes, bytes]],
    batch: bool,
) -> None:
    """Collect the stream's responses and answer with them as one JSON body (an array for a
    2025-03-26 batch); 404 if the session ended first, 202 if the client cancelled every
    request of the POST (cancellation.mdx: no response is sent; the session goes on, and a
    404 would tell the client to start a new one, transports.mdx §Session Management)."""
    messages = []
    try:
        while (item := await outbox.get()) is not None:
            if not isinstance(item, Timeout):
                messages.append(item[1])
    finally:
        session.detach(stream, outbox)
    if not messages and session.closed:
        await send_error(send, 404, SESSION_NOT_FOUND, "Session terminated")
        return
    if not messages:
        await send_response(send, 202, b"", extra)
        return
    body = b"[" + b",".join(messages) + b"]" if batch else messages[0]
    await send_response(send, 200, body, extra, _JSON)


async def reply_sse(
    session: HttpSession,
    stream: Stream,
    outbox: Outbox,
    send: Send,
    receive: Receive,
    extra: list[tuple[bytes, bytes]],
    *,
    head: bytes,
    last: int,
    replay: Iterable[tuple[int, bytes]],
    keepalive: float | None,
) -> None:
    """Write ``head``, the ``replay``ed events, then ``stream`` live, until it ends, is closed
    or the client leaves. ``last``: the highest event number the client already has."""
    # The standalone GET stream idles for long: watch for the client leaving (it frees the
    # one-GET-per-session slot). A POST stream ends with its response, and a client that
    # resumes it takes it over, so it needs no watcher task.
    watcher = (
        asyncio.get_running_loop().create_task(_watch_disconnect(receive, outbox))
        if stream.standalone
        else None
    )
    try:
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS + extra})
        frames = [head]
        for n, message in replay:
            frames.append(sse_frame(stream.id, n, message))
            last = n
        head = b"".join(frames)  # one join: appending frame by frame is quadratic
        # Each body message carries every event queued by then, and the last one the end of
        # the stream: a response already made when the POST gets here (an async def tool
        # that did not wait) is one message after the start, as in JSON mode, not three.
        chunk, last = _queued(outbox, stream.id, head, last)
        while not outbox.drained:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            item = await outbox.get(keepalive)
            if item is None:
                chunk = b""
                break
            if isinstance(item, Timeout):
                chunk = b": keepalive\n\n"
            else:
                chunk, last = _queued(outbox, stream.id, b"", last, item)
        tail = b"retry: %d\n\n" % outbox.retry_ms if outbox.retry_ms is not None else b""
        await send({"type": "http.response.body", "body": chunk + tail, "more_body": False})
    except OSError:
        logger.debug("client left stream %s", stream.id)
    finally:
        if watcher is not None:
            watcher.cancel()
        session.detach(stream, outbox)
        outbox.discard()  # nobody reads it now: free what it holds, wake a waiting producer


def _queued(
    outbox: Outbox, stream_id: str, chunk: bytes, last: int, item: Item | None = None
) -> tuple[bytes, int]:
    """``chunk`` followed by ``item`` and every event queued now, as SSE, skipping those the
    client already has (numbered ``last`` or below, replayed from the store); and the
    highest event number written. The frames are joined once (linear in the bytes written;
    ``chunk += frame`` copied the chunk for each event: 16,000 queued progress notifications
    took 21 s of the event loop)."""
    frames = [chunk]
    while item is not None or (item := outbox.take()) is not None:
        n, message = item
        item = None
        if n and n <= last:
            continue  # already replayed from the store
        last = n or last
        frames.append(sse_frame(stream_id, n, message))
    return b"".join(frames), last


async def _watch_disconnect(receive: Receive, outbox: Outbox) -> None:
    """End the response's writer when the client goes away."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            outbox.close()
            return
