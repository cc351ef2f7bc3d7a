"""Streams of a Streamable HTTP session on a real uvicorn server: routing, resumability,
SSE polling, concurrency, stateless and JSON modes, the event store.

Spec: 2025-11-25 basic/transports.mdx §Sending Messages to the Server, §Listening for Messages
from the Server, §Multiple Connections, §Resumability and Redelivery.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from support.polling import until

from mcpbind.http import InMemoryEventStore, StreamableHTTPApp

from ._support import LiveServer, headers, init_body, make_server, messages, sse_events
from .conftest import open_session

pytestmark = pytest.mark.anyio


def tool_call(
    rid: int, name: str, arguments: dict[str, Any], token: str | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def get_headers(sid: str, **extra: str) -> dict[str, str]:
    return {
        "accept": "text/event-stream",
        "mcp-session-id": sid,
        "mcp-protocol-version": "2025-11-25",
        **extra,
    }


def test_handler_messages_go_to_their_request_stream(
    client: httpx2.Client, live: LiveServer, session: str
) -> None:
    """§Sending Messages 6: progress a handler sends while it runs travels on that request's
    own SSE stream, before its response; §Multiple Connections 2: not also on the GET stream."""
    r = client.post(
        live.url,
        json=tool_call(10, "chatty", {"n": 3, "delay": 0.01}, "p"),
        headers=headers(session),
    )
    got = messages(list(sse_events(iter(r.text.splitlines()))))
    assert [m.get("method") for m in got] == ["notifications/progress"] * 3 + [None]
    assert [m["params"]["progress"] for m in got[:3]] == [1, 2, 3]
    assert got[-1]["id"] == 10 and got[-1]["result"]["content"][0]["text"] == "sent 3"


def test_sampling_round_trip_over_post(
    client: httpx2.Client, live: LiveServer, session: str
) -> None:
    """§Sending Messages 6 + 4: a request to the client goes out on the originating POST's
    stream; the client's response is POSTed (202) and the tool then answers on the stream."""
    with (
        httpx2.Client(timeout=10) as other,
        client.stream(
            "POST",
            live.url,
            json=tool_call(11, "ask", {"question": "2+2?"}),
            headers=headers(session),
        ) as stream,
    ):
        events = sse_events(stream.iter_lines())
        ask = None
        for event in events:
            if event.get("data"):
                ask = json.loads(event["data"])
                break
        assert ask is not None and ask["method"] == "sampling/createMessage"
        reply = {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {
                "role": "assistant",
                "content": {"type": "text", "text": "4"},
                "model": "m",
            },
        }
        assert other.post(live.url, json=reply, headers=headers(session)).status_code == 202
        rest = messages(list(events))
    assert rest[-1]["id"] == 11 and rest[-1]["result"]["content"][0]["text"] == "answer: 4"


def test_resume_after_drop_delivers_each_event_once(live: LiveServer) -> None:
    """§Resumability and Redelivery: after a dropped POST stream, GET + Last-Event-ID replays
    only what came after that id, on that stream, then continues live: every event exactly
    once."""
    n = 30
    seen: list[int] = []
    responses = 0
    with httpx2.Client(timeout=10) as client:
        sid = open_session(client, live.url)
        last_id = None
        with client.stream(
            "POST",
            live.url,
            json=tool_call(12, "chatty", {"n": n, "delay": 0.02}, "r"),
            headers=headers(sid),
        ) as stream:
            for event in sse_events(stream.iter_lines()):
                last_id = event.get("id", last_id)
                if event.get("data"):
                    seen.append(json.loads(event["data"])["params"]["progress"])
                if len(seen) == 5:
                    break  # drop the connection mid-stream
        time.sleep(0.15)  # more events are sent (and stored) while the client is away
        assert last_id is not None
        with client.stream(
            "GET", live.url, headers=get_headers(sid, **{"last-event-id": last_id})
        ) as stream:
            assert stream.status_code == 200
            for event in sse_events(stream.iter_lines()):
                if not event.get("data"):
                    continue
                message = json.loads(event["data"])
                if "method" in message:
                    seen.append(message["params"]["progress"])
                else:
                    responses += 1
                    assert message["id"] == 12
    assert seen == list(range(1, n + 1))
    assert responses == 1


def test_server_closes_stream_and_client_polls(
    client: httpx2.Client, live: LiveServer, session: str
) -> None:
    """§Sending Messages 6 (SSE polling, SEP-1699): the server closes the connection after an
    event id and a ``retry`` field; GET + Last-Event-ID gets the rest of that stream."""
    r = client.post(live.url, json=tool_call(13, "poll", {}, "q"), headers=headers(session))
    first = list(sse_events(iter(r.text.splitlines())))
    assert first[0]["data"] == "" and first[0]["id"].endswith(".0")  # priming event
    assert first[-1] == {"retry": "50"}  # the connection closed with a retry hint
    got = messages(first)
    assert [m["params"]["progress"] for m in got] == [1]
    last_id = [e["id"] for e in first if "id" in e][-1]
    time.sleep(0.2)
    r = client.get(live.url, headers=get_headers(session, **{"last-event-id": last_id}))
    rest = messages(list(sse_events(iter(r.text.splitlines()))))
    assert rest[0]["params"]["progress"] == 2
    assert rest[1]["id"] == 13 and rest[1]["result"]["content"][0]["text"] == "closed=True"


def test_last_event_id_of_another_session_replays_nothing(
    client: httpx2.Client, live: LiveServer
) -> None:
    """§Resumability 2: the server MUST NOT replay messages of a different stream (here:
    another session's)."""
    a = open_session(client, live.url)
    b = open_session(client, live.url)
    r = client.post(live.url, json=tool_call(14, "echo", {"text": "secret"}), headers=headers(a))
    ids = [e["id"] for e in sse_events(iter(r.text.splitlines())) if "id" in e]
    r = client.get(live.url, headers=get_headers(b, **{"last-event-id": ids[0]}))
    assert r.status_code == 404 and b"secret" not in r.content


def test_last_event_id_with_non_ascii_digits_is_unknown(
    client: httpx2.Client, live: LiveServer
) -> None:
    """Issue 28 (F17's class: a header number read loosely): ``str.isdigit`` holds for the
    superscripts a latin-1 header can carry (``\xb2``), which ``int()`` refuses, so the
    resume failed with a 500; an id this server never minted is 404, like any unknown one."""
    sid = open_session(client, live.url)
    for raw in (b"0.\xb2", b"0.1\xb9", b"0.+1", b"0. 1"):
        headers_ = {**get_headers(sid), "last-event-id": raw}
        r = client.get(live.url, headers=headers_)  # type: ignore[arg-type]
        assert r.status_code == 404, (raw, r.status_code, r.text)


def _stream_in_thread(
    url: str, sid: str, body: dict[str, Any], done: list[float]
) -> tuple[threading.Thread, threading.Event]:
    """POST ``body`` from a thread; the event is set once the handler's first message (a
    progress notification) arrived, i.e. it surely runs; ``done`` gets the end time."""
    running = threading.Event()

    def call() -> None:
        with (
            httpx2.Client(timeout=10) as c,
            c.stream("POST", url, json=body, headers=headers(sid)) as stream,
        ):
            for event in sse_events(stream.iter_lines()):
                if event.get("data"):
                    running.set()
        done.append(time.monotonic())

    thread = threading.Thread(target=call)
    thread.start()
    return thread, running


def test_slow_handler_blocks_nobody(live: LiveServer) -> None:
    """A server handles many sessions concurrently: a slow handler delays neither another
    session nor another request of its own session.

    Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP ("can handle multiple client
    connections"), §Multiple Connections.
    """
    with httpx2.Client(timeout=10) as client:
        s1 = open_session(client, live.url)
        s2 = open_session(client, live.url)
        done: list[float] = []
        # 5 s: the pings are answered long before it ends, even on a loaded machine.
        slow = tool_call(15, "chatty", {"n": 1, "delay": 5}, "slow")
        thread, running = _stream_in_thread(live.url, s1, slow, done)
        try:
            assert running.wait(10)  # the slow handler is now sleeping
            for sid, rid in ((s2, 16), (s1, 17)):
                r = client.post(
                    live.url,
                    json={"jsonrpc": "2.0", "id": rid, "method": "ping"},
                    headers=headers(sid),
                )
                assert messages(list(sse_events(iter(r.text.splitlines()))))[0]["id"] == rid
            assert not done  # both answered while the slow handler still runs
        finally:
            thread.join(20)
        assert done


def test_delete_ends_in_flight_streams(client: httpx2.Client, live: LiveServer) -> None:
    """§Session Management 5: DELETE terminates the session: its open streams end at once."""
    sid = open_session(client, live.url)
    ended: list[float] = []
    slow = tool_call(18, "chatty", {"n": 2, "delay": 5.0}, "d")
    thread, running = _stream_in_thread(live.url, sid, slow, ended)
    try:
        assert running.wait(10)
        deleted = time.monotonic()
        assert client.delete(live.url, headers=headers(sid)).status_code == 200
    finally:
        thread.join(10)
    assert ended and ended[0] - deleted < 1.0
    assert sid not in live.app.sessions


@pytest.fixture(scope="module")
def stateless() -> Iterator[LiveServer]:
    server = LiveServer(StreamableHTTPApp(make_server(), sessionless=True, path="/mcp")).start()
    try:
        yield server
    finally:
        server.stop()


def test_stateless_mode(stateless: LiveServer) -> None:
    """§Session Management ("MAY assign a session ID"): in stateless mode no id is issued,
    each request is served on its own, and GET/DELETE are 405 with Allow: POST."""
    with httpx2.Client(timeout=10) as client:
        r = client.post(stateless.url, json=init_body(), headers=headers(version=None))
        assert r.status_code == 200 and "mcp-session-id" not in r.headers
        assert (
            messages(list(sse_events(iter(r.text.splitlines()))))[0]["result"]["protocolVersion"]
            == "2025-11-25"
        )
        r = client.post(stateless.url, json=tool_call(2, "echo", {"text": "s"}), headers=headers())
        assert (
            messages(list(sse_events(iter(r.text.splitlines()))))[0]["result"]["content"][0]["text"]
            == "s"
        )
        assert (
            client.post(
                stateless.url,
                json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                headers=headers(),
            ).status_code
            == 202
        )
        for method in ("GET", "DELETE"):
            r = client.request(method, stateless.url, headers={"accept": "text/event-stream"})
            assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert stateless.app.sessions == {}


def test_json_response_mode() -> None:
    """§Sending Messages 5: the server may answer a request with one JSON object
    (Content-Type: application/json); then Accept: application/json suffices. A request
    still being answered keeps its session from being reaped as idle (there is no stream
    to show the client is there)."""
    # The idle timeout is shorter than the slow call below, and long enough that a loaded
    # machine's pauses between this test's requests do not reap the session (0.3 s did, and
    # 1 s did with both cores busy).
    app = StreamableHTTPApp(make_server(), json_response=True, idle_timeout=3.0, path="/mcp")
    server = LiveServer(app).start()
    try:
        with httpx2.Client(timeout=10) as client:
            r = client.post(
                server.url,
                json=init_body(),
                headers=headers(version=None, accept="application/json"),
            )
            assert r.headers["content-type"] == "application/json"
            sid = r.headers["mcp-session-id"]
            r = client.post(
                server.url,
                json=tool_call(3, "echo", {"text": "j"}),
                headers=headers(sid, accept="application/json"),
            )
            assert r.json()["result"]["content"][0]["text"] == "j"
            r = client.post(
                server.url,
                json=tool_call(4, "slow", {"seconds": 4.5}),
                headers=headers(sid, accept="application/json"),
            )
            assert r.status_code == 200 and r.json()["id"] == 4, r.text
            assert sid in app.sessions
            # §Session Management 5: DELETE during a JSON-mode request answers it at once
            # (404: the session is gone) instead of leaving it waiting.
            answers: list[httpx2.Response] = []

            def slow_call() -> None:  # 30 s: "at once" below is far shorter, even under load
                with httpx2.Client(timeout=40) as c:
                    answers.append(
                        c.post(
                            server.url,
                            json=tool_call(5, "slow", {"seconds": 30.0}),
                            headers=headers(sid, accept="application/json"),
                        )
                    )

            thread = threading.Thread(target=slow_call)
            thread.start()
            try:
                deadline = time.monotonic() + 5
                while not app.sessions[sid].busy:
                    assert time.monotonic() < deadline
                    time.sleep(0.01)
                deleted = time.monotonic()
                assert client.delete(server.url, headers=headers(sid)).status_code == 200
            finally:
                thread.join(40)
            assert answers and answers[0].status_code == 404
            assert time.monotonic() - deleted < 10  # not the handler's 30 s
    finally:
        server.stop()


async def test_in_memory_event_store_is_bounded() -> None:
    """§Resumability: the store keeps a bounded window per stream and says when a cursor
    fell out of it (no silent loss); streams are capped too."""
    store = InMemoryEventStore(max_events=3, max_streams=2)
    for i in range(1, 6):
        await store.store_event("a", i, b"m%d" % i)
    assert await store.events_after("a", 3) == [(4, b"m4"), (5, b"m5")]
    assert await store.events_after("a", 1) is None  # 2 was dropped
    assert await store.events_after("a", 9) is None  # never sent
    assert await store.events_after("b", 0) == []  # a fresh stream: only its priming event
    await store.store_event("b", 1, b"x")
    await store.store_event("c", 1, b"y")
    assert len(store) == 2 and await store.events_after("a", 4) is None
    await store.forget_stream("c")
    assert len(store) == 1


def test_cancel_ends_the_request_stream(
    client: httpx2.Client, live: LiveServer, session: str
) -> None:
    """§Sending Messages 6 ("To cancel, the client SHOULD explicitly send an MCP
    CancelledNotification"): the handler is interrupted and its stream ends without a response."""
    got: list[dict[str, Any]] = []
    ended: list[float] = []
    running = threading.Event()

    def slow_call() -> None:
        with (
            httpx2.Client(timeout=10) as c,
            c.stream(
                "POST",
                live.url,
                json=tool_call(19, "chatty", {"n": 2, "delay": 5.0}, "c"),
                headers=headers(session),
            ) as stream,
        ):
            for event in sse_events(stream.iter_lines()):
                if event.get("data"):
                    got.append(json.loads(event["data"]))
                    running.set()  # the handler runs: its first progress arrived
        ended.append(time.monotonic())

    thread = threading.Thread(target=slow_call)
    thread.start()
    try:
        assert running.wait(10)
        cancelled_at = time.monotonic()
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 19},
        }
        assert client.post(live.url, json=cancel, headers=headers(session)).status_code == 202
    finally:
        thread.join(10)
    assert ended and ended[0] - cancelled_at < 1.0
    assert [m.get("method") for m in got] == ["notifications/progress"]  # no response
    r = client.post(
        live.url, json=tool_call(19, "echo", {"text": "again"}), headers=headers(session)
    )
    assert messages(list(sse_events(iter(r.text.splitlines()))))[0]["id"] == 19  # id free again


def test_get_errors(client: httpx2.Client, live: LiveServer, session: str) -> None:
    """§Listening for Messages / §Resumability: GET needs a session (400 without, 404 for an
    unknown one) and a Last-Event-ID this session issued (404 otherwise)."""
    assert client.get(live.url, headers={"accept": "text/event-stream"}).status_code == 400
    assert client.get(live.url, headers=get_headers("unknown")).status_code == 404
    for bad in ("garbage", "abc.1", f"{'0' * 12}1.x"):
        r = client.get(live.url, headers=get_headers(session, **{"last-event-id": bad}))
        assert r.status_code == 404, bad


def test_idle_get_stream_sends_keepalive_comments() -> None:
    """§Listening for Messages from the Server: an idle GET stream carries SSE comments, so
    a dead client is noticed and proxies keep the connection; a closed GET frees the slot."""
    server = LiveServer(StreamableHTTPApp(make_server(), sse_keepalive=0.05, path="/mcp")).start()
    try:
        with httpx2.Client(timeout=10) as client:
            sid = open_session(client, server.url)
            with client.stream("GET", server.url, headers=get_headers(sid)) as stream:
                for line in stream.iter_lines():
                    if line.startswith(":"):
                        assert line == ": keepalive"
                        break
            deadline = time.monotonic() + 5
            while True:  # the server notices the client left; a new GET is then allowed
                with client.stream("GET", server.url, headers=get_headers(sid)) as again:
                    if again.status_code == 200:
                        break
                    assert again.status_code == 409 and time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        server.stop()


async def test_many_sessions_concurrently(live: LiveServer) -> None:
    """A server process handles many sessions at once: 40 sessions each run a 0.5 s tool call
    at the same time and all finish in about the time of one.

    Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP ("can handle multiple client
    connections").
    """
    async with httpx2.AsyncClient(timeout=20, limits=httpx2.Limits(max_connections=100)) as client:

        async def one(k: int) -> str:
            r = await client.post(live.url, json=init_body(), headers=headers(version=None))
            sid = r.headers["mcp-session-id"]
            r = await client.post(
                live.url, json=tool_call(1, "slow", {"seconds": 0.5}), headers=headers(sid)
            )
            text: str = messages(list(sse_events(iter(r.text.splitlines()))))[0]["result"][
                "content"
            ][0]["text"]
            await client.delete(live.url, headers=headers(sid))
            return text

        started = time.monotonic()
        results: list[str] = []

        async def run(k: int) -> None:
            results.append(await one(k))

        async with anyio.create_task_group() as tg:
            for k in range(40):
                tg.start_soon(run, k)
        elapsed = time.monotonic() - started
    assert results == ["slept 0.5"] * 40
    assert elapsed < 5.0, elapsed  # sequentially it would take 20 s


def test_get_stream_resumes_after_last_event_id(live: LiveServer) -> None:
    """§Resumability and Redelivery 2: the standalone GET stream resumes too: what the server
    sent while it was down is replayed after the Last-Event-ID, and nothing before it."""
    with httpx2.Client(timeout=10) as client:
        sid = open_session(client, live.url)
        task = live.app.sessions[sid].task
        assert task is not None
        loop = task.get_loop()
        server = live.app.server

        def changed(name: str) -> None:  # on the server's loop, as an application would
            def tool() -> str:
                return name

            loop.call_soon_threadsafe(server.tool(name=name, description="temp"), tool)

        def first_event(stream: Any) -> dict[str, str]:
            for event in sse_events(stream.iter_lines()):
                if event.get("data"):
                    return event
            raise AssertionError("stream ended")

        try:
            session = live.app.sessions[sid]
            with client.stream("GET", live.url, headers=get_headers(sid)) as stream:
                changed("temp_a")
                seen = first_event(stream)
            until(lambda: not session.attached)  # the server noticed the client left
            stored = session.standalone.n
            changed("temp_b")  # sent while no GET stream is open: kept for it
            until(lambda: session.standalone.n > stored)  # stored for a resume
            resume = get_headers(sid, **{"last-event-id": seen["id"]})
            with client.stream("GET", live.url, headers=resume) as stream:
                again = first_event(stream)
            assert json.loads(again["data"])["method"] == "notifications/tools/list_changed"
            assert again["id"] != seen["id"]
            assert again["id"].rsplit(".", 1)[0] == seen["id"].rsplit(".", 1)[0]  # same stream
            assert int(again["id"].rsplit(".", 1)[1]) == int(seen["id"].rsplit(".", 1)[1]) + 1
        finally:
            for name in ("temp_a", "temp_b"):
                loop.call_soon_threadsafe(server.remove_tool, name)


def test_resume_replays_only_that_streams_events(live: LiveServer) -> None:
    """§Resumability and Redelivery 2 and §Multiple Connections 2: two requests of one
    session stream at the same time; one connection drops and is resumed with its
    Last-Event-ID. The replay carries that request's events (each once) and its response,
    never an event of the other request's stream, which is delivered on its own stream."""
    n = 12
    other: list[dict[str, Any]] = []
    with httpx2.Client(timeout=10) as client:
        sid = open_session(client, live.url)

        def other_call() -> None:
            with httpx2.Client(timeout=10) as c:
                r = c.post(
                    live.url,
                    json=tool_call(21, "chatty", {"n": n, "delay": 0.02}, "other"),
                    headers=headers(sid),
                )
                other.extend(messages(list(sse_events(iter(r.text.splitlines())))))

        thread = threading.Thread(target=other_call)
        thread.start()
        try:
            seen: list[dict[str, Any]] = []
            last_id = None
            with client.stream(
                "POST",
                live.url,
                json=tool_call(20, "chatty", {"n": n, "delay": 0.02}, "mine"),
                headers=headers(sid),
            ) as stream:
                for event in sse_events(stream.iter_lines()):
                    last_id = event.get("id", last_id)
                    if event.get("data"):
                        seen.append(json.loads(event["data"]))
                    if len(seen) == 3:
                        break  # drop this connection; the other request keeps streaming
            time.sleep(0.1)
            assert last_id is not None
            resume = get_headers(sid, **{"last-event-id": last_id})
            with client.stream("GET", live.url, headers=resume) as stream:
                assert stream.status_code == 200
                for event in sse_events(stream.iter_lines()):
                    if event.get("data"):
                        assert event["id"].rsplit(".", 1)[0] == last_id.rsplit(".", 1)[0]
                        seen.append(json.loads(event["data"]))
        finally:
            thread.join(10)
    notes = [m for m in seen if "method" in m]
    assert {m["params"]["progressToken"] for m in notes} == {"mine"}
    assert [m["params"]["progress"] for m in notes] == list(range(1, n + 1))
    assert [m["id"] for m in seen if "id" in m] == [20]
    assert {m["params"]["progressToken"] for m in other if "method" in m} == {"other"}
    assert len(other) == n + 1 and other[-1]["id"] == 21


async def test_get_stream_of_a_client_that_stops_reading_is_bounded() -> None:
    """§Listening for Messages / §Resumability: the standalone stream's connection buffers at
    most MAX_PENDING messages for a client that stopped reading; past that the connection is
    ended (its writer drains what it had), later messages wait in the bounded backlog and
    the event store, and a resume picks them up from there: no unbounded memory."""
    from mcpbind.http.server.http_session import HttpSession
    from mcpbind.http.server.streams import MAX_PENDING, Outbox

    store = InMemoryEventStore(max_events=5000)
    session = HttpSession(make_server(), "sid", event_store=store)
    outbox = Outbox(MAX_PENDING)
    stream = session.standalone
    session.attach(stream, outbox)
    note = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    try:
        for _ in range(MAX_PENDING + 500):
            await session.route(note)
        assert outbox.closed and stream.outbox is None and not session.attached
        assert len(stream.backlog) == stream.backlog.maxlen == 256
        drained = 0
        while await outbox.get() is not None:
            drained += 1
        assert drained == MAX_PENDING
        rest = await store.events_after(stream.id, MAX_PENDING)
        assert rest is not None and len(rest) == 500  # what a resume replays
    finally:
        await session.close()
