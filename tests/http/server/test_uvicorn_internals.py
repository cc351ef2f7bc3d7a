"""The uvicorn internals ``mcpbind.http.server._header_deadline`` subclasses (its slowloris
header deadline): the protocol classes, the methods it overrides and the attributes it reads.
A uvicorn release that moves or renames any of them fails here, not in a user's server; the
behaviour itself is tested in test_http_server_header_deadline.py. pyproject.toml bounds
uvicorn above for the same reason: this test says when the bound may move."""

from __future__ import annotations

import asyncio
import inspect
import re
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("httptools")

from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from mcpbind.http.server._header_deadline import header_deadline_protocol

ROOT = Path(__file__).resolve().parents[3]

#: What each subclass overrides (and calls through ``super()``) and reads on the instance.
OVERRIDDEN = {
    H11Protocol: ("connection_made", "connection_lost", "handle_events", "on_response_complete"),
    HttpToolsProtocol: (
        "connection_made",
        "connection_lost",
        "data_received",  # the header size cap
        "on_message_begin",
        "on_headers_complete",
        "on_response_complete",
    ),
}
READ = {H11Protocol: ("cycle", "loop"), HttpToolsProtocol: ("pipeline", "loop", "cycle")}


def _bound() -> str:
    """The upper bound pyproject.toml puts on uvicorn in the ``http`` extra."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    spec = next(s for s in extras["http"] if s.startswith("uvicorn"))
    found = re.search(r"<\s*([\d.]+)", spec)
    assert found is not None, f"uvicorn is not bounded above in the http extra: {spec!r}"
    return found.group(1)


def _as_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2])


def test_installed_uvicorn_is_within_the_pin() -> None:
    assert _as_tuple(version("uvicorn")) < _as_tuple(_bound())


@pytest.mark.parametrize("base", [H11Protocol, HttpToolsProtocol], ids=["h11", "httptools"])
def test_overridden_methods_exist_with_their_signatures(base: type[Any]) -> None:
    for name in OVERRIDDEN[base]:
        method = getattr(base, name, None)
        assert callable(method), f"{base.__name__}.{name} is gone"
        expected = ["self", "exc"] if name == "connection_lost" else ["self"]
        if name == "connection_made":
            expected = ["self", "transport"]
        if name == "data_received":
            expected = ["self", "data"]
        assert list(inspect.signature(method).parameters) == expected, (base.__name__, name)


@pytest.mark.parametrize("http", ["h11", "httptools"])
def test_instance_has_the_attributes_read(http: str) -> None:
    """A protocol built the way uvicorn builds one, then connected to a real socket, has the
    attributes the deadline reads (``loop``, ``transport``, ``cycle`` / ``pipeline``)."""
    cls = header_deadline_protocol(5.0, http)
    base = H11Protocol if http == "h11" else HttpToolsProtocol

    async def main() -> None:
        async def app(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover
            pass

        config = Config(app=app, http=cls, lifespan="off")
        config.load()
        loop = asyncio.get_running_loop()
        made: list[Any] = []

        def factory() -> asyncio.Protocol:
            protocol = cls(config=config, server_state=ServerState(), app_state={}, _loop=loop)
            made.append(protocol)
            return protocol

        server = await loop.create_server(factory, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for _ in range(100):
                if made and getattr(made[0], "transport", None) is not None:
                    break
                await asyncio.sleep(0.01)
            protocol = made[0]
            assert isinstance(protocol, base)
            assert isinstance(protocol.transport, asyncio.Transport)
            for name in READ[base]:
                assert hasattr(protocol, name), f"{base.__name__} instances lost {name!r}"
            assert protocol._header_timer is not None  # connection_made armed the deadline
        finally:
            writer.close()
            await writer.wait_closed()
            server.close()
            await server.wait_closed()
        del reader

    asyncio.run(main())


def test_httptools_cycle_says_when_its_response_is_complete() -> None:
    """The header size cap writes its 431 only when no response is being written: it reads
    ``cycle.response_complete``, set by the cycle's constructor."""
    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

    assert "self.response_complete = False" in inspect.getsource(RequestResponseCycle.__init__)
