"""Fuzz target: the 2024-11-05 HTTP+SSE transport (``GET /sse`` + ``POST /messages/``) in
process, through ``with_legacy_sse`` (the ASGI app ``serve_http(legacy_sse=True)`` serves).

One initialized legacy session stays open across inputs (as a real client's does): its
``GET /sse`` runs as a task whose events are parsed as they arrive. Each input is POSTed to
the session's message URL (``asgi.parse``: a head may override the headers, the request line
the path and query; ``{session}`` is replaced by the session id). Invariants: nothing raises;
the POST gets 202 or a 4xx whose body is one JSON-RPC error (never 5xx); every ``message``
event is one JSON-RPC 2.0 message; a well-formed request with an id accepted with 202 gets its
answer on the stream.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpbind.http import StreamableHTTPApp, with_legacy_sse

from . import asgi
from .checks import Finding, check_message, request_ids

__all__ = ["LegacyStream", "LegacyTarget"]

_TIMEOUT = 4.0  # below the harness's 5 s for a whole input, so the finding names the id
_HEADERS = [("host", "127.0.0.1:8000"), ("content-type", "application/json")]


class LegacyStream:
    """One ``GET /sse`` kept open (with ``headers`` on it and on its POSTs), its session
    initialized; the ids answered on it are collected in ``seen`` as events come."""

    def __init__(self, app: Any, headers: list[tuple[str, str]] | None = None) -> None:
        self.app = app
        self.headers = [*_HEADERS, *(headers or [])]
        self.endpoint = asyncio.get_running_loop().create_future()
        self.seen: set[object] = set()  # ids answered on the stream (since the last input)
        self.arrived = asyncio.Event()
        self.leave = asyncio.Event()
        self._buffer = b""
        self.status = 0
        self.task = asyncio.ensure_future(self._run())
        self.path, self.query = "", b""

    async def open(self) -> LegacyStream:
        """Wait for the endpoint event, then initialize the session."""
        path, _, query = (await self.endpoint).partition("?")
        self.path, self.query = path, query.encode()
        init = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "1"},
            },
        }
        await self.post(json.dumps(init).encode())
        await self.wait_for("init")
        await self.post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return self

    @property
    def session_id(self) -> str:
        return self.query.decode().partition("=")[2]

    async def post(self, body: bytes) -> asgi.Reply:
        request = asgi.Request("POST", self.path, self.query, list(self.headers), body)
        return await asgi.call(self.app, request)

    async def wait_for(self, wanted: object) -> None:
        """Return once ``wanted`` (an id) or an error for a whole body was answered."""

        async def find() -> None:
            while wanted not in self.seen and None not in self.seen:
                self.arrived.clear()
                await self.arrived.wait()

        try:
            await asyncio.wait_for(find(), _TIMEOUT)
        except TimeoutError:
            raise Finding(f"legacy: no answer to id {wanted!r} on the stream") from None

    async def _run(self) -> None:
        async def receive() -> dict[str, Any]:
            await self.leave.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.status = message["status"]
                return
            self._buffer += message.get("body", b"")
            while b"\n\n" in self._buffer:
                event, self._buffer = self._buffer.split(b"\n\n", 1)
                self._event(event)

        headers = [*self.headers, ("accept", "text/event-stream")]
        scope = {
            "type": "http",
            "method": "GET",
            "path": "/sse",
            "query_string": b"",
            "root_path": "",
            "headers": asgi.encode_headers(headers),
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
        }
        try:
            await self.app(scope, receive, send)
        finally:
            if not self.endpoint.done():
                self.endpoint.set_exception(Finding(f"legacy: GET /sse gave {self.status}"))

    def _event(self, raw: bytes) -> None:
        kind, data = "message", []
        for line in raw.split(b"\n"):
            if line.startswith(b"event:"):
                kind = line[6:].strip().decode()
            elif line.startswith(b"data:"):
                data.append(line[5:].removeprefix(b" "))
        if not data:
            return  # a comment (keep-alive) or a priming event
        payload = b"\n".join(data)
        if kind == "endpoint":
            if not self.endpoint.done():
                self.endpoint.set_result(payload.decode())
        else:
            check_message(payload, "legacy stream")
            value = json.loads(payload)
            for item in value if isinstance(value, list) else [value]:
                answered = item.get("id")
                if isinstance(answered, str | int) or answered is None:
                    self.seen.add(answered)  # None: an error for the whole body (a batch)
            self.arrived.set()

    async def close(self) -> None:
        self.leave.set()
        await self.task


class LegacyTarget:
    def __init__(self, run: Any, server: Any) -> None:
        self._run = run
        self.app = with_legacy_sse(StreamableHTTPApp(server, json_response=True))
        self.stream: LegacyStream | None = None
        self.sync = 0

    def close(self) -> None:
        if self.stream is not None:
            self._run(self.stream.close())
        self._run(self.app.aclose())

    def __call__(self, data: bytes) -> None:
        self._run(self._one(data))

    async def _open(self) -> LegacyStream:
        if self.stream is None or self.stream.task.done():  # (an input may end it)
            self.stream = await LegacyStream(self.app).open()
        return self.stream

    async def _one(self, data: bytes) -> None:
        stream = await self._open()
        stream.seen.clear()
        request, named = asgi.parse(data.replace(b"{session}", stream.session_id.encode()))
        if named:
            given = {k for k, _ in request.headers}
            request.headers = [h for h in _HEADERS if h[0] not in given] + request.headers
            if request.path == "/":
                request.path, request.query = stream.path, request.query or stream.query
        else:
            request = asgi.Request("POST", stream.path, stream.query, list(_HEADERS), request.body)
        reply = await asgi.call(self.app, request)
        where = f"legacy {request.method} {request.path}"
        if reply.status >= 500 and reply.status != 503:
            raise Finding(f"{where}: HTTP {reply.status}: {reply.body[:300]!r}")
        if reply.status >= 400 and reply.headers.get("content-type", "").startswith(
            "application/json"
        ):
            check_message(reply.body, where)
        accepted = (
            reply.status == 202 and request.path == stream.path and request.query == stream.query
        )
        # A sync ping: everything the input caused before it has been checked as it arrived.
        self.sync += 1
        ping = f'{{"jsonrpc":"2.0","id":"sync-{self.sync}","method":"ping"}}'.encode()
        if (await stream.post(ping)).status != 202:
            return  # the input ended the session; the next input opens another
        await stream.wait_for(f"sync-{self.sync}")
        if accepted:
            for wanted in request_ids(request.body):  # answered before or after the ping
                await stream.wait_for(wanted)
