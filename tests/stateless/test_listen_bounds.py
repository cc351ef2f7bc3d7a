"""Issue 16 (4): ``subscriptions/listen`` (2026-07-28 basic/patterns/subscriptions.mdx) streams
are bounded: a listener that stops reading holds at most one queued message per notification
kind and subscribed URI (an unread change is not queued twice: the client re-reads the
resource or list anyway), a hub holds at most ``MAX_SUBSCRIPTIONS`` streams, and one request
names at most ``MAX_LISTEN_URIS`` resources."""

from __future__ import annotations

import gc
import tracemalloc

import msgspec
import pytest

from mcpbind import Server
from mcpbind.http import StreamableHTTPApp
from mcpbind.protocol import INVALID_PARAMS, INVALID_REQUEST
from mcpbind.server.dispatch import Reply
from mcpbind.server.listen_hub import (
    MAX_LISTEN_URI_CHARS,
    MAX_LISTEN_URIS,
    ListenHub,
    ListenSubscription,
)

from .helpers import META

pytestmark = pytest.mark.anyio


def make_server() -> Server:
    server = Server("listen-bounds")

    @server.tool()
    def noop() -> str:
        return ""

    @server.resource("test://a")
    def a() -> str:
        return "a"

    return server


def listen_params(notifications: dict[str, object]) -> bytes:
    return msgspec.json.encode({"notifications": notifications, "_meta": META})


async def test_listeners_that_stop_reading_hold_bounded_queues() -> None:
    """Five listeners that never read, 200,000 updates: memory stays flat (271 MB before)."""
    server = make_server()
    hub = ListenHub(server)
    wanted = {"toolsListChanged": True, "resourceSubscriptions": ["test://a", "test://b"]}
    subs = [hub.open(i, listen_params(wanted)) for i in range(5)]
    assert all(isinstance(s, ListenSubscription) for s in subs)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(100_000):
            server.resource_updated("test://a")
            server.resource_updated("test://b")
            if n % 1000 == 0:
                server._changed("tools")
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 256 * 1024, f"{grown} bytes held by 5 idle listeners"
    first = subs[0]
    assert isinstance(first, ListenSubscription)
    queued = [await first.next() for _ in range(first._queue.qsize())]
    methods = sorted(msgspec.json.decode(m)["method"] for m in queued if m is not None)
    assert methods == [
        "notifications/resources/updated",
        "notifications/resources/updated",
        "notifications/tools/list_changed",
    ]
    # Taken: the next change is queued again.
    server.resource_updated("test://a")
    assert first._queue.qsize() == 1


async def test_listen_stream_count_is_bounded() -> None:
    hub = ListenHub(make_server(), max_subscriptions=3)
    params = listen_params({"toolsListChanged": True})
    opened = [hub.open(i, params) for i in range(3)]
    refused = hub.open(99, params)
    assert isinstance(refused, Reply)
    error = msgspec.json.decode(refused.data)["error"]
    assert error["code"] == INVALID_REQUEST and "limit 3" in error["message"]
    first = opened[0]
    assert isinstance(first, ListenSubscription)
    hub.close(first)
    assert isinstance(hub.open(100, params), ListenSubscription)  # a freed slot is reusable


async def test_one_listen_names_a_bounded_number_of_uris() -> None:
    hub = ListenHub(make_server())
    uris = [f"test://{i}" for i in range(MAX_LISTEN_URIS + 1)]
    refused = hub.open(1, listen_params({"resourceSubscriptions": uris}))
    assert isinstance(refused, Reply)
    assert msgspec.json.decode(refused.data)["error"]["code"] == INVALID_PARAMS
    assert isinstance(
        hub.open(2, listen_params({"resourceSubscriptions": uris[:-1]})), ListenSubscription
    )


async def test_one_listen_names_uris_of_a_bounded_total_size() -> None:
    """Issue 28 F5: 1,000 URIs of 4 KB cost ~15.5 MB per unread stream. Together a listen's
    URIs may have ``MAX_LISTEN_URI_CHARS`` characters; more is refused (-32602), and the
    refused request leaves nothing in the hub."""
    hub = ListenHub(make_server())
    long = [f"test://{i}/" + "x" * 4000 for i in range(1000)]
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        refused = hub.open(1, listen_params({"resourceSubscriptions": long}))
        del long
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert isinstance(refused, Reply)
    error = msgspec.json.decode(refused.data)["error"]
    assert error["code"] == INVALID_PARAMS
    assert f"at most {MAX_LISTEN_URI_CHARS} characters" in error["message"]
    assert not hub.subscriptions and held < 64 * 1024, held
    fits = [f"test://{i}/" + "x" * 4000 for i in range(MAX_LISTEN_URI_CHARS // 4100)]
    assert isinstance(
        hub.open(2, listen_params({"resourceSubscriptions": fits})), ListenSubscription
    )


async def test_listen_streams_per_client_are_capped() -> None:
    """Issue 28 F5: 1,000 streams per app and no per-client cap. One client address may hold
    ``max_per_client`` streams (what a ``StreamableHTTPApp`` takes from its
    ``max_sessions_per_client``); the next is refused with a clear error, other clients are
    not affected, and a closed stream frees its slot."""
    hub = ListenHub(make_server(), max_per_client=2)
    params = listen_params({"toolsListChanged": True})
    first, second = hub.open(1, params, "10.0.0.1"), hub.open(2, params, "10.0.0.1")
    refused = hub.open(3, params, "10.0.0.1")
    assert isinstance(refused, Reply)
    error = msgspec.json.decode(refused.data)["error"]
    assert error["code"] == INVALID_REQUEST
    assert (
        error["message"] == "Too many open subscriptions/listen streams for this client (limit 2)"
    )
    assert isinstance(hub.open(4, params, "10.0.0.2"), ListenSubscription)
    assert isinstance(first, ListenSubscription) and isinstance(second, ListenSubscription)
    hub.close(first)
    assert hub.streams_of("10.0.0.1") == 1
    assert isinstance(hub.open(5, params, "10.0.0.1"), ListenSubscription)
    app = StreamableHTTPApp(make_server(), max_sessions_per_client=7)
    assert app.per_request.hub.max_per_client == 7
