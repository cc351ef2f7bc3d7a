"""The suite's live-server helper (support/live_server.py) under pytest-xdist: a LiveServer
holds its port from the moment it is made, so another worker's server cannot take it."""

from __future__ import annotations

import errno
import socket

import httpx2
import pytest
from support.live_server import LiveServer, answer_lifespan


async def _hello(scope: dict[str, object], receive: object, send: object) -> None:
    if scope["type"] == "lifespan":
        await answer_lifespan(receive, send)
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
    await send({"type": "http.response.body", "body": b"hello"})  # type: ignore[operator]


def test_the_port_is_held_from_construction_and_served() -> None:
    live = LiveServer(_hello)
    try:
        with socket.socket() as other, pytest.raises(OSError) as taken:
            other.bind(("127.0.0.1", live.port))
        assert taken.value.errno == errno.EADDRINUSE
        live.start()
        assert httpx2.get(f"http://127.0.0.1:{live.port}/").text == "hello"
    finally:
        live.stop()
