"""The 2026-07-28 era on the Streamable HTTP endpoint (basic/transports/streamable-http.mdx).

``StreamableHTTPApp`` hands every POST whose body carries the modern per-request ``_meta`` (or
whose ``MCP-Protocol-Version`` names a stateless version) to its :class:`PerRequestEndpoint`. No
session is looked up or created: the request metadata headers are checked against the body
(Server Validation, -32020 with 400), the request is answered by
:func:`mcpbind.server.dispatch.answer`, as one JSON body or, as soon as the handler emits a
request-scoped notification (progress, log), as an SSE stream scoped to this request. A client
that closes the response cancels the request (Cancellation): the handler is cancelled and
nothing more is written. ``subscriptions/listen`` gets a long-lived SSE stream of its own.

The 2025 sessionless mode (``StreamableHTTPApp(sessionless=True)``) is answered here too, by
the same :func:`~mcpbind.server.dispatch.answer` at the version its POST names, through the
same response writer and disconnect watcher (:meth:`PerRequestEndpoint.sessionless`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec

from ...protocol import HEADER_MISMATCH, PARSE_ERROR, McpError, SessionOptions
from ...protocol.classify import Classified
from ...protocol.mcp_headers import HeaderPath, check_header_values, header_params
from ...protocol.wire import encode_error
from ...runner import Answer, Runner
from ...server.app import Server
from ...server.dispatch import (
    Posted,
    Reply,
    answer_status,
    handle_sessionless,
    handle_stateless,
    post_runner,
)
from ...server.listen_hub import LISTEN, ListenHub, ListenSubscription
from ...server.principal import principal_key
from ._asgi import (
    Headers,
    Receive,
    RequestHeaders,
    Scope,
    Send,
    client_address,
    send_response,
)
from .ticks import Ticks, ticks

__all__ = ["PerRequestEndpoint"]

logger = logging.getLogger("mcpbind.http")

_JSON: Final = b"application/json"
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


def _frame(message: bytes) -> bytes:
    # No event ids: 2026-07-28 streams are not resumable.
    return b"event: message\ndata: " + message + b"\n\n"


_NO_PARAMS = msgspec.Raw(b"{}")


async def _send_json(send: Send, status: int, data: bytes) -> None:
    """The whole response: ``data`` as one JSON body. A copy of ``send_response``'s steps,
    kept for every 2026-07-28 answer that ends here (``make bench-inlines``; its test:
    ``tests/test_inlines.py``)."""
    headers = [(b"content-type", _JSON), (b"content-length", b"%d" % len(data))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data, "more_body": False})


class PerRequestEndpoint:
    """The 2026-07-28 requests of one ``StreamableHTTPApp``, and its listen streams."""

    __slots__ = (
        "_handle_sessionless",
        "_handle_stateless",
        "_hub",
        "_mirrored",
        "_runner",
        "json_response",
        "max_listens_per_client",
        "principal",
        "server",
        "sse_keepalive",
    )

    def __init__(
        self,
        server: Server,
        *,
        principal: Callable[[Scope], object],
        json_response: bool,
        sse_keepalive: float | None,
        max_listens_per_client: int | None = None,
        options: SessionOptions | None = None,
    ) -> None:
        self.server = server
        #: ``subscriptions/listen`` streams one client address may hold open.
        self.max_listens_per_client = max_listens_per_client
        self.principal = principal
        self.json_response = json_response
        self.sse_keepalive = sse_keepalive
        self._hub: ListenHub | None = None
        #: Runs every request of this endpoint: its in-flight table (keyed by POST, since ids
        #: of different clients may repeat), the server's shared bound, cancellation, answers.
        self._runner = post_runner(server, options)
        #: The runner's handlers of this endpoint's requests, bound to its server once.
        self._handle_stateless = functools.partial(handle_stateless, server)
        self._handle_sessionless = functools.partial(handle_sessionless, server)
        #: Tool name -> (its input schema, that schema's ``x-mcp-header`` parameters): walked
        #: once per schema, not on every call.
        self._mirrored: dict[str, tuple[object, list[HeaderPath]]] = {}

    @property
    def hub(self) -> ListenHub:
        """The ``subscriptions/listen`` streams (created on first use)."""
        if self._hub is None:
            self._hub = ListenHub(self.server, max_per_client=self.max_listens_per_client)
        return self._hub

    def close(self) -> None:
        """End every listen stream gracefully (the final ``subscriptions/listen`` result)."""
        if self._hub is not None:
            self._hub.close_all()

    def hand_back(self) -> int:
        """End every listen stream without its final result (see ``ListenHub.hand_back_all``)."""
        return 0 if self._hub is None else self._hub.hand_back_all()

    def _mirrored_of(self, name: str) -> list[HeaderPath]:
        """The ``x-mcp-header`` parameters of the tool ``name`` (none if it is unknown)."""
        entry = self.server.tools.get(name)
        if entry is None:
            return []
        schema = entry.tool.input_schema
        cached = self._mirrored.get(name)
        if cached is not None and cached[0] is schema:
            return cached[1]
        plain = schema if isinstance(schema, dict) else msgspec.to_builtins(schema)
        paths = list(header_params(plain))
        self._mirrored[name] = (schema, paths)
        return paths

    async def serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        classified: Classified,
    ) -> None:
        """Serve one 2026-07-28 POST (Host, Origin, media types and size are already
        checked; ``classified`` is its body, decoded once)."""
        if not classified.request_ids:
            # No client-to-server notification is defined on this transport: accepted, ignored.
            await send_response(send, 202)
            return
        rid, method = classified.request_ids[0], classified.methods[0]
        try:
            reason = check_header_values(
                headers.mcp,
                headers.mcp_repeated,
                headers.get(b"mcp-protocol-version"),
                method,
                classified.peek,
                classified.meta_version,
                self._mirrored_of,
            )
        except msgspec.DecodeError as exc:  # e.g. invalid UTF-8 in a mirrored argument
            error = McpError(PARSE_ERROR, f"Parse error: {exc}")
            await _send_json(send, 400, encode_error(rid, error))
            return
        if reason is not None:
            await _send_json(send, 400, encode_error(rid, McpError(HEADER_MISMATCH, reason)))
            return
        raw = classified.request_params[0]  # (Classified.params, without the property)
        if raw is None:
            raw = _NO_PARAMS
        if method == LISTEN:
            await self._listen(receive, send, rid, raw, client_address(scope))
            return
        who = self.principal(scope)
        principal = None if who is None else principal_key(who)
        posted = Posted(rid, method, raw, None, principal, None, None, RequestHeaders(headers.raw))
        await self._request(receive, send, posted, self._handle_stateless)

    async def sessionless(
        self,
        receive: Receive,
        send: Send,
        headers: Headers,
        classified: Classified,
        version: str | None,
        options: SessionOptions | None,
    ) -> None:
        """Serve one POST of the 2025 sessionless mode carrying requests (checked, and
        classified with their params kept, by the app): each is answered at ``version`` (the
        POST's ``MCP-Protocol-Version``; ``None`` for an ``initialize``), a batch's at once."""
        fields = RequestHeaders(headers.raw)
        posted = [
            Posted(rid, method, raw or _NO_PARAMS, None, None, version, options, fields)
            for rid, method, raw in zip(
                classified.request_ids, classified.methods, classified.request_params, strict=True
            )
        ]
        requests = posted if classified.batch else posted[0]
        await self._request(receive, send, requests, self._handle_sessionless, handshake=True)

    async def _request(
        self,
        receive: Receive,
        send: Send,
        requests: Posted | list[Posted],
        handler: Callable[[Posted], Awaitable[Any]],
        *,
        handshake: bool = False,
    ) -> None:
        """Answer a POST of one request or a batch (a list) by running each with ``handler``
        in the endpoint's runner, as JSON or SSE; on the handshake era (the 2025 sessionless
        mode) always with status 200, as SSE unless JSON is asked for. The requests of a batch
        take their slots of the server's in-flight bound at once: a batch that does not fit
        whole is refused whole, each request answered "Server busy" (one request takes its
        slot in the runner, refused the same way). The runner keys a POST's requests by its
        response (a batch's by the response and their index), which cancels them when the
        client leaves; what they emit goes to that response."""
        runner = self._runner
        needed = len(requests) if isinstance(requests, list) else 0
        if needed:
            refusal = runner.reserve(needed)
            if refusal is not None:
                ids = [r.id for r in requests] if isinstance(requests, list) else []
                busy = b"[" + b",".join(encode_error(r, refusal) for r in ids) + b"]"
                await _send_json(send, 200 if handshake else 503, busy)
                return
        response = _PostResponse(receive, send, not self.json_response, handshake, runner, needed)
        emit = response.emit
        try:
            try:
                if isinstance(requests, Posted):
                    requests.emit = emit
                    reply: Answer | list[Answer] = await runner.run_here(
                        requests, handler, key=response
                    )
                else:
                    for request in requests:
                        request.emit = emit
                    reply = list(
                        await asyncio.gather(
                            *(
                                runner.run_here(
                                    request, handler, key=(response, index), reserved=True
                                )
                                for index, request in enumerate(requests)
                            )
                        )
                    )
            finally:
                response.stop()  # the reply is written unwatched: the client can no longer cancel
            if not response.gone:
                await response.finish(reply)
        except OSError:
            rid = requests.id if isinstance(requests, Posted) else [r.id for r in requests]
            logger.debug("client left during request %r", rid)
        finally:
            if needed:
                runner.unreserve(needed)

    async def _listen(
        self,
        receive: Receive,
        send: Send,
        rid: int | str,
        raw: msgspec.Raw | None,
        client: str | None,
    ) -> None:
        hub = self.hub
        opened = hub.open(rid, raw, client)
        if isinstance(opened, Reply):
            await _send_json(send, opened.http_status, opened.data)
            return
        sub: ListenSubscription = opened
        watch = _PostResponse(receive, send, True)  # written here: only its watch is used
        keepalive = self.sse_keepalive
        try:
            await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
            ack = _frame(sub.acknowledgement())
            await send({"type": "http.response.body", "body": ack, "more_body": True})
            while True:
                try:
                    async with asyncio.timeout(keepalive):
                        message = await sub.next()
                except TimeoutError:
                    await send({"type": "http.response.body", "body": b":\n\n", "more_body": True})
                    continue
                if message is None:
                    # Graceful Closure: the response to the listen request ends the stream;
                    # handed back, it ends without one (the client listens again elsewhere).
                    chunk = b"" if sub.handed_back else _frame(sub.final_result())
                    await send({"type": "http.response.body", "body": chunk, "more_body": False})
                    return
                chunk = _frame(message)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except asyncio.CancelledError:
            if not watch.swallow():
                raise
        except OSError:
            logger.debug("client left listen stream %r", rid)
        finally:
            watch.stop()
            hub.close(sub)


#: Seconds a request runs before its client is watched: most (a ``def`` tool's thread
#: included) are answered sooner, so they cost an entry on the shared clock (ticks.py), not a
#: watching task.
WATCH_AFTER: Final = 0.05


class _PostResponse:
    """One POST's response, and the watch on its client.

    Writes it: JSON unless something is emitted before the reply (on the 2026-07-28 era), or
    SSE whenever it may be (the 2025 sessionless mode, ``handshake``, as its sessions did); a
    2025 batch's replies as a JSON array or one event each.

    Watches it from creation to :meth:`stop`: the POST's requests are cancelled by their
    runner when the client closes the response (it is cancellation; the runner keys them by
    this object, a batch's by this object and their index). The watching task starts once the request has
    run for :data:`WATCH_AFTER` (up to a tick of the shared clock more): a request answered
    sooner costs no task; one that takes longer is watched from then on (a client gone before
    then is seen at once). One object for both: a request builds one.
    """

    __slots__ = (
        "_batch",
        "_clock",
        "_receive",
        "_runner",
        "_task",
        "_watcher",
        "gone",
        "handshake",
        "send",
        "sse",
        "started",
    )

    def __init__(
        self,
        receive: Receive,
        send: Send,
        sse: bool,
        handshake: bool = False,
        runner: Runner | None = None,
        batch: int = 0,
    ) -> None:
        self.send = send
        self.sse = sse
        self.handshake = handshake
        self.started = False
        loop = asyncio.get_running_loop()
        self._runner = runner
        self._batch = batch
        #: Without a runner (a listen stream), the task cancelled when the client leaves.
        self._task = asyncio.current_task(loop) if runner is None else None
        self.gone = False
        self._receive = receive
        self._watcher: asyncio.Task[None] | None = None
        self._clock: Ticks | None = ticks(loop)  # the shared clock: no timer of its own
        self._clock.arm(self, WATCH_AFTER, self._begin)

    async def emit(self, message: bytes) -> None:
        if not self.sse:
            return  # JSON responses only: request-scoped notifications have no channel
        if not self.started:
            self.started = True
            await self.send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        await self.send({"type": "http.response.body", "body": _frame(message), "more_body": True})

    async def finish(self, reply: Answer | list[Answer]) -> None:
        if isinstance(reply, Answer):
            data = reply.data
            if data is None:
                return  # cancelled: nothing is sent
            if self.started:
                body = _frame(data)
                await self.send({"type": "http.response.body", "body": body, "more_body": False})
            elif self.handshake and self.sse:
                await self._sse(_frame(data))
            else:
                ok = self.handshake or reply.error is None
                status = 200 if ok else answer_status(reply)
                await _send_json(self.send, status, data)
            return
        replies = [r.data for r in reply if r.data is not None]  # (none unless cancelled)
        if self.sse:
            await self._sse(b"".join(_frame(data) for data in replies))
        else:
            await _send_json(self.send, 200, b"[" + b",".join(replies) + b"]")

    async def _sse(self, body: bytes) -> None:
        """The (rest of the) SSE stream, ending it."""
        if not self.started:
            self.started = True
            await self.send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        await self.send({"type": "http.response.body", "body": body, "more_body": False})

    def _begin(self) -> None:
        self._clock = None
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self.gone = True
                self._cancel()
                return
            # Past the body an ASGI server only reports the disconnect; one that answers at
            # once instead (a test's in-process call) must not starve the request.
            await asyncio.sleep(0)

    def stop(self) -> None:
        if self._clock is not None:
            self._clock.disarm(self)
            self._clock = None
        if self._watcher is not None:
            self._watcher.cancel()

    def _cancel(self) -> None:
        runner = self._runner
        if runner is None:
            if self._task is not None:
                self._task.cancel()
            return
        if not self._batch:
            runner.cancel(self)
        else:
            for index in range(self._batch):
                runner.cancel((self, index))

    def swallow(self) -> bool:
        """After a ``CancelledError`` in a listen stream: whether it was ours (the client
        left), now absorbed."""
        if self.gone and self._task is not None:
            self._task.uncancel()
            return True
        return False
