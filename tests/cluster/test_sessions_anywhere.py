"""Handshake-era sessions on any worker (basic/transports.mdx, Streamable HTTP, 2025-11-25):
behind haproxy round-robin over two workers, consecutive requests of one session reach
different workers (each tags its responses, ``x-test-worker``), and the whole session works:
the registry names the owner and the other worker forwards to it."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from mcpbind.http.server.events import parse_event_id

from .processes import haproxy, workers
from .wire import HANDSHAKE, SSE, iter_events

INIT = {
    "protocolVersion": HANDSHAKE,
    "capabilities": {"sampling": {}},
    "clientInfo": {"name": "cluster-test", "version": "0"},
}
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Paris"},
    "model": "test-model",
    "stopReason": "endTurn",
}


class Session:
    """One client's session through the balancer; ``tags`` lists, request by request, the
    worker that answered (the last ``x-test-worker``: a forwarded answer carries the owner's
    too)."""

    def __init__(self, http: httpx.Client, url: str) -> None:
        self.http, self.url = http, url
        self.tags: list[str] = []
        self.id = ""
        self._next = 0

    def headers(self, **more: str) -> dict[str, str]:
        base = {**SSE, "mcp-protocol-version": HANDSHAKE}
        return {**base, "mcp-session-id": self.id, **more} if self.id else base

    def tag(self, response: httpx.Response) -> None:
        self.tags.append(response.headers.get_list("x-test-worker")[-1])

    def post(self, message: dict[str, Any]) -> httpx.Response:
        response = self.http.post(self.url, json=message, headers=self.headers())
        self.tag(response)
        return response

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        message = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}
        return message

    def stream(self, method: str, message: dict[str, Any] | None = None, **headers: str) -> Any:
        """A streamed request (POST ``message``, or GET): enter it, then read its events."""
        context = self.http.stream(method, self.url, json=message, headers=self.headers(**headers))
        return _Tagging(self, context)


class _Tagging:
    def __init__(self, session: Session, context: Any) -> None:
        self.session, self.context = session, context

    def __enter__(self) -> httpx.Response:
        response: httpx.Response = self.context.__enter__()
        self.session.tag(response)
        assert response.status_code == 200, response.read()
        return response

    def __exit__(self, *exc: object) -> None:
        self.context.__exit__(*exc)


def _run_session(s: Session) -> None:
    # initialize, then notifications/initialized
    response = s.post(s.request("initialize", INIT))
    assert response.status_code == 200
    s.id = response.headers["mcp-session-id"]
    assert s.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202

    # a call, and a call with progress (streamed back through the forwarding worker)
    add = s.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    with s.stream("POST", add) as response:
        (answer,) = [e.message for e in iter_events(response) if e.message]
    assert answer["result"]["structuredContent"] == {"result": 5}
    count = s.request(
        "tools/call", {"name": "count", "arguments": {"to": 5}, "_meta": {"progressToken": "p"}}
    )
    with s.stream("POST", count) as response:
        messages = [e.message for e in iter_events(response) if e.message]
    assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2, 3, 4, 5]
    assert messages[-1]["result"]["structuredContent"] == {"result": 5}

    # a sampling request, answered by the client in a POST that another worker receives
    capital = s.request("tools/call", {"name": "capital", "arguments": {}})
    with s.stream("POST", capital) as response:
        events = iter_events(response)
        asked = next(e.message for e in events if e.message)
        assert asked["method"] == "sampling/createMessage"
        reply = {"jsonrpc": "2.0", "id": asked["id"], "result": SAMPLED}
        assert s.post(reply).status_code == 202
        (answer,) = [e.message for e in events if e.message]
    assert answer["result"]["content"][0]["text"] == "Paris"

    # cancellation: the client gives up on a slow call
    slow = s.request(
        "tools/call", {"name": "count", "arguments": {"to": 200}, "_meta": {"progressToken": "s"}}
    )
    started = time.monotonic()
    with s.stream("POST", slow) as response:
        events = iter_events(response)
        first = next(e.message for e in events if e.message)
        assert first["method"] == "notifications/progress"
        cancel = {"requestId": slow["id"], "reason": "changed my mind"}
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
        assert s.post(note).status_code == 202
        rest = [e.message for e in events if e.message]
    assert all("result" not in m and "error" not in m for m in rest)
    assert time.monotonic() - started < 3.5  # 200 steps would take 4 s

    # a GET stream: resources/updated arrives on it; dropped, then resumed with Last-Event-ID
    subscribe = s.request("resources/subscribe", {"uri": "mem://note"})
    with s.stream("POST", subscribe) as response:
        assert next(e.message for e in iter_events(response) if e.message)["result"] == {}
    touch = s.request("tools/call", {"name": "touch", "arguments": {"uri": "mem://note"}})
    with s.stream("GET", accept="text/event-stream") as stream:  # attached once it answers
        events = iter_events(stream)
        with s.stream("POST", touch) as response:
            list(iter_events(response))
        updated = next(e for e in events if e.message)
    assert updated.message is not None
    assert updated.message["method"] == "notifications/resources/updated"
    assert updated.id is not None
    stream_id, seen = parse_event_id(updated.id) or ("", -1)
    again = s.request("tools/call", {"name": "touch", "arguments": {"uri": "mem://note"}})
    with s.stream("POST", again) as response:
        list(iter_events(response))  # sent while no GET stream is open: kept in the store
    resume = {"accept": "text/event-stream", "last-event-id": updated.id}
    with s.stream("GET", **resume) as stream:
        replayed = next(e for e in iter_events(stream) if e.message)
    assert replayed.id == f"{stream_id}.{seen + 1}"
    assert replayed.message is not None
    assert replayed.message["params"] == {"uri": "mem://note"}

    # DELETE ends it everywhere
    response = s.http.delete(s.url, headers=s.headers())
    s.tag(response)
    assert response.status_code == 200
    ping = s.post(s.request("ping", {}))
    assert ping.status_code == 404


@pytest.mark.parametrize("count", [2, 4])
def test_a_session_roams_over_workers_behind_round_robin(
    count: int, redis_url: str, tmp_path: Path
) -> None:
    options = {"redis_sessions": redis_url, "redis_events": redis_url}
    with (
        workers(count, options=options) as ports,
        haproxy(ports, tmp_path) as url,
        httpx.Client(timeout=10) as http,
    ):
        session = Session(http, url)
        _run_session(session)
    tags = session.tags
    assert len(tags) == 15 and set(tags) == {f"w{i}" for i in range(count)}
    assert all(a != b for a, b in itertools.pairwise(tags)), tags
