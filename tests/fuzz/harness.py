"""Fuzz targets over the receive path (issue 16): bytes -> decode -> dispatch, for both
protocol eras, at the session core and through the ASGI app. Shared by the coverage-guided
fuzzer (``run.py``, atheris) and the corpus replay test (``test_corpus_replay.py``).

Each target raises :class:`Finding` when an invariant breaks; any other exception escaping
a target is a finding too. Invariants: nothing raises (no ``RecursionError``, no
``DecodeError``); everything the server writes is one JSON-RPC 2.0 message (or a batch of
them); HTTP never answers 500; no call hangs (5 s).
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from mcpbind import Server
from mcpbind.http import StreamableHTTPApp
from mcpbind.http.client._peek import peek, stateless_headers
from mcpbind.protocol import ErrorReceived, Outgoing, RequestReceived, Session
from mcpbind.protocol.classify import classify
from mcpbind.server.dispatch import answer

from .authz import AuthTarget
from .checks import Finding, check_message
from .legacy import LegacyTarget
from .tasks import TasksTarget

__all__ = ["COUNT", "Finding", "Targets"]

STATELESS = "2026-07-28"
HANDSHAKE = "2025-11-25"
_ACCEPT = "application/json, text/event-stream"
_TIMEOUT = 5.0
#: The targets, picked by an input's first byte: core, stateless dispatch, HTTP session era,
#: HTTP stateless era, legacy HTTP+SSE, authorization, tasks.
COUNT = 7


def make_server() -> Server:
    server = Server("fuzz", version="1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def query(region: str, limit: int = 0) -> str:
        return f"{region}:{limit}"

    schema = server.tools["query"].tool.input_schema
    assert isinstance(schema, dict)
    props = dict(schema["properties"])
    props["region"] = {**props["region"], "x-mcp-header": "Region"}
    props["limit"] = {**props["limit"], "x-mcp-header": "Limit"}
    server.tools["query"].tool.input_schema = {**schema, "properties": props}

    @server.resource("test://hello", mime_type="text/plain")
    def hello() -> str:
        return "hello"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


def _server_session(version: str) -> Session:
    server = Session("server", version=version)
    server.set_local_capabilities({"tools": {}, "resources": {}, "prompts": {}, "logging": {}})
    return server


class Targets:
    """One event loop, one server, one HTTP app with an open handshake-era session, reused
    across inputs (as a real server is)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = make_server()
        self.app = StreamableHTTPApp(self.server, json_response=True)
        status, headers, body = self._run(self._post(_initialize(), {}))
        if status != 200:
            raise RuntimeError(f"initialize failed: {status} {body!r}")
        self.session_id = headers["mcp-session-id"]
        self._run(self._post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', {}))
        self.legacy = LegacyTarget(self._run, make_server())
        self.auth = AuthTarget(self._run)
        self.tasks = TasksTarget(self._run)

    def close(self) -> None:
        self.tasks.close()
        self.auth.close()
        self.legacy.close()
        self._run(self.app.aclose())
        self.loop.close()

    def all(self, data: bytes) -> None:
        for target in range(COUNT):
            self.pick(bytes([target]) + data)

    def pick(self, data: bytes) -> None:
        """The fuzzer's entry: the first byte picks the target, the rest is the input."""
        if not data:
            return
        kind, body = data[0] % COUNT, data[1:]
        if kind == 0:
            self.core(body)
        elif kind == 1:
            self.stateless(body)
        elif kind in (2, 3):
            self.http(body, stateless=kind == 3)
        elif kind == 4:
            self.legacy(body)
        elif kind == 5:
            self.auth(body)
        else:
            self.tasks(body)

    # -- the session core (stdio and in-memory connections) ---------------------------------
    def core(self, data: bytes) -> None:
        classify(data)  # the stdio era router's first look
        for version in (HANDSHAKE, "2025-03-26"):
            for event in _server_session(version).receive(data):
                if isinstance(event, Outgoing):
                    check_message(event.data, f"core {version}")
        client = Session("client", version=HANDSHAKE)
        client.set_peer_capabilities({"tools": {}})
        for method in ("ping", "tools/list"):
            client.send_request(method)
        for event in client.receive(data):
            if isinstance(event, Outgoing):
                check_message(event.data, "client core")
            elif isinstance(event, RequestReceived | ErrorReceived):
                pass

    # -- the 2026-07-28 dispatcher (what the stdio router hands a stateless request) -------
    def stateless(self, data: bytes) -> None:
        incoming = classify(data)
        if incoming.kind != "stateless" or incoming.id is None or incoming.method is None:
            return
        if incoming.method == "subscriptions/listen":
            return  # a stream, not a reply (the HTTP target covers it)
        reply = self._run(answer(self.server, incoming.id, incoming.method, incoming.params))
        check_message(reply.data, "stateless dispatch")

    # -- the ASGI app (both eras) ------------------------------------------------------------
    def http(self, data: bytes, *, stateless: bool) -> None:
        if stateless:
            info = peek(data)
            headers = stateless_headers(data, info.method) or {"mcp-protocol-version": STATELESS}
        else:
            headers = {"mcp-session-id": self.session_id, "mcp-protocol-version": HANDSHAKE}
        status, got, body = self._run(self._post(data, headers))
        where = f"http {'stateless' if stateless else 'session'}"
        if status >= 500 and status != 503:
            raise Finding(f"{where}: HTTP {status}: {body[:300]!r}")
        if body and got.get("content-type", "").startswith("application/json"):
            check_message(body, where)

    # -- plumbing ----------------------------------------------------------------------------
    def _run(self, coro: Any) -> Any:
        try:
            return self.loop.run_until_complete(asyncio.wait_for(coro, _TIMEOUT))
        except TimeoutError:
            raise Finding(f"no answer within {_TIMEOUT} s") from None

    async def _post(self, body: bytes, extra: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        headers = {
            "host": "127.0.0.1:8000",
            "content-type": "application/json",
            "accept": _ACCEPT,
            **extra,
        }
        sent: list[dict[str, Any]] = []
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                await asyncio.sleep(_TIMEOUT * 2)  # the client stays connected
                return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/",
            "headers": [
                (k.encode(), v.encode("utf-8", "surrogateescape")) for k, v in headers.items()
            ],
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
        }
        await self.app(scope, receive, send)
        start = sent[0]
        out = b"".join(m.get("body", b"") for m in sent[1:])
        got = {k.decode(): v.decode() for k, v in start["headers"]}
        return start["status"], got, out


def _initialize() -> bytes:
    return msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "1"},
            },
        }
    )
