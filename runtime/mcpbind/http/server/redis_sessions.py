"""``RedisSessionRegistry``: handshake-era sessions served whichever worker a request reaches.

A session lives in the worker that created it (its running handlers, the server-to-client
requests waiting for an answer, its open streams). The registry records, in Redis, which
worker owns each session (``<prefix>:session:<id>`` → the owner's internal MCP URL, expiring
``ttl`` seconds after the owner last saw it used); a worker that gets a request for a session
it does not hold forwards the request to the owner, unchanged but for a marker header, and
streams the owner's response back (SSE included), so a ``POST``, a response to a sampling
request, a cancellation, a ``GET`` stream, a resume with ``Last-Event-ID`` and a ``DELETE``
all reach the session's live state. See docs/guides/deployment.md for why this design and
its failure modes:

- the owner is gone (connection refused): the entry is dropped (if it still names that
  owner) and the client gets 404, so it re-initializes;
- Redis is unreachable: ``initialize`` and requests for sessions held elsewhere get 503 with
  ``Retry-After`` within twice ``timeout`` (a call that times out is tried once more: a
  stall of Redis, or of this worker's own event loop under load, shorter than that fails
  nothing); sessions a worker holds itself are served without Redis;
- a forwarded request is never forwarded again (the marker), so no request loops.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any, Final

import httpx2

from ..._lazy import lazy_logger
from ...protocol import INVALID_REQUEST
from ._asgi import Receive, Scope, Send, send_error

__all__ = ["FORWARDED_HEADER", "RedisSessionRegistry"]

logger = lazy_logger("mcpbind.http")

FORWARDED_HEADER: Final = b"x-mcpbind-forwarded"
"""Marks a request one worker forwarded to the session's owner (its value: the sender)."""

# Hop-by-hop headers (RFC 9110 §7.6.1) and the framing the next hop recomputes.
_HOP: Final = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"content-length",
    }
)

# KEYS[1] the entry; ARGV[1] the owner that may delete it.
_RELEASE = """
local value = redis.call('GET', KEYS[1])
if value and cjson.decode(value)['owner'] == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisSessionRegistry:
    """The session registry in the Redis at ``url``; ``advertise``: this worker's MCP URL as
    the other workers reach it (``http://10.0.0.7:8001/mcp``). ``ttl``: seconds an entry
    outlives the last use its owner saw (renewed at most every ``ttl / 4``)."""

    def __init__(
        self,
        url: str,
        advertise: str,
        *,
        prefix: str = "mcpbind",
        ttl: float = 3600.0,
        timeout: float = 0.5,
    ) -> None:
        import redis.asyncio

        self.advertise = advertise
        self.ttl = ttl
        self.timeout = timeout
        self._redis: Any = redis.asyncio.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self._release = self._redis.register_script(_RELEASE)
        self._prefix = prefix
        self._ttl_ms = int(ttl * 1000)
        #: Sessions this worker owns -> when their entry was last renewed (monotonic).
        self._renewed: dict[str, float] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._http: httpx2.AsyncClient | None = None
        #: The GET streams relayed through this worker now, each set to end it.
        self._relayed_streams: set[asyncio.Event] = set()

    def _key(self, session_id: str) -> str:
        return f"{self._prefix}:session:{session_id}"

    def _errors(self) -> tuple[type[Exception], ...]:
        import redis.exceptions

        return (redis.exceptions.RedisError, OSError)

    async def _twice(self, command: Any, *args: Any, **kwargs: Any) -> Any:
        """``command(*args, **kwargs)``, once more if it timed out. Both calls are
        idempotent (a ``GET``, a ``SET`` of this worker's entry). A timeout is most often a
        stall, of Redis or of this worker's event loop (its reply read late), so the second
        try usually succeeds on a fresh connection; a refused connection (Redis down) is not
        tried again: its 503 comes at once."""
        import redis.exceptions

        try:
            return await command(*args, **kwargs)
        except redis.exceptions.TimeoutError as exc:
            logger.info("session registry slow (%s); trying once more", exc)
            return await command(*args, **kwargs)

    # ------------------------------------------------------------------ the owner's side
    async def claim(self, session_id: str) -> bool:
        """Record this worker as the owner of a new session; ``False`` when Redis does not
        answer within the timeout (logged)."""
        entry = json.dumps({"owner": self.advertise, "created": int(time.time())})
        try:
            await self._twice(self._redis.set, self._key(session_id), entry, px=self._ttl_ms)
        except self._errors() as exc:
            logger.warning("session registry unreachable: %s", exc)
            return False
        self._renewed[session_id] = time.monotonic()
        return True

    def used(self, session_id: str) -> None:
        """A request of an owned session arrived: renew its entry if it is getting old."""
        renewed = self._renewed.get(session_id)
        if renewed is not None and time.monotonic() - renewed > self.ttl / 4:
            self._renewed[session_id] = time.monotonic()
            self._spawn(self._redis.pexpire(self._key(session_id), self._ttl_ms))

    def release(self, session_id: str) -> None:
        """The session ended here: drop its entry (in the background)."""
        if self._renewed.pop(session_id, None) is not None:
            self._spawn(self._release(keys=[self._key(session_id)], args=[self.advertise]))

    def _spawn(self, work: Any) -> None:
        async def run() -> None:
            with contextlib.suppress(*self._errors()):
                await work  # lost: the entry expires by itself

        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def reachable(self) -> bool:
        """Whether Redis answers within the timeout (readiness)."""
        try:
            return bool(await self._redis.ping())
        except self._errors():
            return False

    # ------------------------------------------------------------------ any worker's side
    async def forward(
        self, scope: Scope, receive: Receive, send: Send, session_id: str, body: bytes
    ) -> bool:
        """Serve a request for a session this worker does not hold by forwarding it to the
        owner: ``True`` once answered (by the owner, or 503 when Redis is unreachable);
        ``False`` when no live owner elsewhere has it (the caller answers 404)."""
        if any(name == FORWARDED_HEADER for name, _ in scope["headers"]):
            return False  # forwarded here by a worker that thought we own it: we do not
        try:
            raw = await self._twice(self._redis.get, self._key(session_id))
        except self._errors() as exc:
            logger.warning("session registry unreachable: %s", exc)
            await send_error(
                send,
                503,
                INVALID_REQUEST,
                "Service Unavailable: the session registry cannot be reached",
                [(b"retry-after", b"1")],
            )
            return True
        if raw is None:
            return False
        owner = json.loads(raw)["owner"]
        if owner == self.advertise:
            return False  # ours once, ended since (this worker restarted): gone
        try:
            await self._relay(owner, scope, receive, send, body)
        except httpx2.TransportError:
            # The owner is gone: its sessions with it. Drop the entry if it still names it.
            with contextlib.suppress(*self._errors()):
                await self._release(keys=[self._key(session_id)], args=[owner])
            return False
        return True

    async def _relay(
        self, owner: str, scope: Scope, receive: Receive, send: Send, body: bytes
    ) -> None:
        http = self._http
        if http is None:
            timeout = httpx2.Timeout(None, connect=self.timeout)
            # A relayed request holds its connection as long as its client holds the worker's
            # (a GET stream, the session's life): a bounded pool (httpx's 100) would make every
            # forwarded request wait, with no timeout, behind the long-lived streams. The
            # inbound connections bound these already.
            limits = httpx2.Limits(max_connections=None, max_keepalive_connections=64)
            http = self._http = httpx2.AsyncClient(timeout=timeout, limits=limits)
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _HOP]
        headers.append((FORWARDED_HEADER, self.advertise.encode()))
        query = scope.get("query_string") or b""
        url = owner + ("?" + query.decode("latin-1") if query else "")
        request = http.build_request(scope["method"], url, headers=headers, content=body)
        upstream = await http.send(request, stream=True)
        try:
            out = [(k.lower(), v) for k, v in upstream.headers.raw if k.lower() not in _HOP]
            await send(
                {"type": "http.response.start", "status": upstream.status_code, "headers": out}
            )
            copy = asyncio.ensure_future(self._copy(upstream, send))
            gone = asyncio.ensure_future(_disconnected(receive))
            waits: list[asyncio.Future[Any]] = [copy, gone]
            handed = asyncio.Event()
            if scope["method"] == "GET":  # a session's stream: handed back on shutdown
                self._relayed_streams.add(handed)
                waits.append(asyncio.ensure_future(handed.wait()))
            try:
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                self._relayed_streams.discard(handed)
                for task in waits:
                    task.cancel()
                await asyncio.gather(*waits, return_exceptions=True)
            if (copy in done and copy.exception() is None) or handed.is_set():
                # Ended by the owner, or handed back: a clean end the client resumes from
                # (Last-Event-ID), through whichever worker it reaches next.
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await upstream.aclose()

    @staticmethod
    async def _copy(upstream: httpx2.Response, send: Send) -> None:
        async for chunk in upstream.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})

    def hand_back(self) -> int:
        """Shutdown: end the ``GET`` streams relayed through this worker (each cleanly, so
        its client reconnects through another worker and resumes with ``Last-Event-ID`` from
        the owner's event store); requests relayed now run on to their answer. How many."""
        streams = list(self._relayed_streams)
        for handed in streams:
            handed.set()
        return len(streams)

    async def aclose(self) -> None:
        for task in list(self._background):
            with contextlib.suppress(Exception):
                await task
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        await self._redis.aclose()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
