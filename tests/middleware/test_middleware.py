"""Middleware (issue 32): one typed chain around every inbound request on both protocol eras and
every entry (in-memory connection, Streamable HTTP session, 2026-07-28 POST, 2025 sessionless
POST), composed in registration order; the built-ins (timing, rate limit, error reporting); and
client middleware around every outgoing request.

The rate limit's refusal is JSON-RPC -32000 (the implementation-defined server error range of
JSON-RPC 2.0 §5.1) with ``data.retryAfterMs``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import pytest

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Client, Server
from mcpbind import types as t
from mcpbind.client.middleware import OutgoingCall, SendNext
from mcpbind.connection import PeerError
from mcpbind.http import StreamableHTTPApp
from mcpbind.server.builtin_middleware import (
    RATE_LIMITED,
    ErrorReport,
    RateLimit,
    Timing,
    ToolFailed,
)
from mcpbind.server.middleware import IncomingCall, Next
from tests.http.server._support import LiveServer

pytestmark = pytest.mark.anyio

ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]
ENTRIES = [
    ("memory", LATEST_HANDSHAKE),
    ("memory", LATEST_STATELESS),
    ("http", LATEST_HANDSHAKE),
    ("http", LATEST_STATELESS),
    ("sessionless", LATEST_HANDSHAKE),
]


def make_server(*middleware: Any) -> Server:
    server = Server("mw", middleware=list(middleware))

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def broken() -> str:
        raise RuntimeError("tool bug")

    @server.method("acme/fail")
    async def fail(params: dict[str, Any], ctx: Any) -> dict[str, Any]:
        raise KeyError("handler bug")

    return server


@asynccontextmanager
async def connected(server: Server, entry: str, era: str, **options: Any) -> AsyncIterator[Client]:
    if entry == "memory":
        async with Client(server, protocol_version=era, **options) as client:
            yield client
        return
    live = LiveServer(StreamableHTTPApp(server, sessionless=entry == "sessionless")).start()
    try:
        async with Client(live.url, protocol_version=era, **options) as client:
            yield client
    finally:
        live.stop()


class Recorder:
    """A middleware that logs entering and leaving, with what it saw."""

    def __init__(self, name: str, log: list[tuple[str, str, str]]) -> None:
        self.name = name
        self.log = log
        self.calls: list[IncomingCall] = []

    async def __call__(self, call: IncomingCall, call_next: Next) -> Any:
        self.calls.append(call)
        self.log.append((self.name, "in", call.method))
        try:
            return await call_next(call)
        finally:
            self.log.append((self.name, "out", call.method))


@pytest.mark.parametrize(("entry", "era"), ENTRIES)
async def test_every_entry_runs_the_chain_in_order(entry: str, era: str) -> None:
    log: list[tuple[str, str, str]] = []
    outer, inner = Recorder("outer", log), Recorder("inner", log)
    server = make_server(outer)
    server.add_middleware(inner)
    async with connected(server, entry, era) as client:
        result = await client.call("add", {"a": 2, "b": 3})
    assert result.structured_content is not msgspec.UNSET
    calls = [c for c in outer.calls if c.method == "tools/call"]
    assert len(calls) == 1
    call = calls[0]
    # Typed params, the handler's context, the era's version.
    assert type(call.params).__name__ == "CallToolRequestParams"
    assert call.target == "add"
    assert call.protocol_version == era
    assert call.request_id is not None
    i = log.index(("outer", "in", "tools/call"))
    assert log[i : i + 4] == [
        ("outer", "in", "tools/call"),
        ("inner", "in", "tools/call"),
        ("inner", "out", "tools/call"),
        ("outer", "out", "tools/call"),
    ]


async def test_the_session_s_own_methods_pass_the_chain() -> None:
    log: list[tuple[str, str, str]] = []
    recorder = Recorder("r", log)
    async with Client(make_server(recorder), protocol_version=LATEST_HANDSHAKE) as client:
        await client.ping()
        await client.set_level(t.SetLevelRequestParams(level="info"))
    methods = [c.method for c in recorder.calls]
    assert methods[0] == "initialize"
    assert "ping" in methods and "logging/setLevel" in methods


class Only(Recorder):
    """A recorder that names the methods it wraps."""

    methods = frozenset({"tools/list", "ping"})


@pytest.mark.parametrize(("entry", "era"), ENTRIES)
async def test_a_layer_naming_its_methods_wraps_those_only(entry: str, era: str) -> None:
    """A layer with ``methods`` sees those requests, handler or session answered, and no
    other; the layers around it still see everything, in order."""
    log: list[tuple[str, str, str]] = []
    outer, only = Recorder("outer", log), Only("only", log)
    server = make_server(outer, only)
    async with connected(server, entry, era) as client:
        assert (await client.call("add", {"a": 2, "b": 3})).is_error is not True
        await client.list_tools()
        if era == LATEST_HANDSHAKE and entry == "memory":
            await client.ping()
    seen = {c.method for c in only.calls}
    assert seen == (
        {"tools/list", "ping"} if era == LATEST_HANDSHAKE and entry == "memory" else {"tools/list"}
    )
    assert "tools/call" in {c.method for c in outer.calls}
    i = log.index(("outer", "in", "tools/list"))
    assert log[i : i + 4] == [
        ("outer", "in", "tools/list"),
        ("only", "in", "tools/list"),
        ("only", "out", "tools/list"),
        ("outer", "out", "tools/list"),
    ]
    # Alone, it leaves the other methods' handlers as they are (tools/call the server's own).
    assert make_server(Only("alone", log)).own_tool_calls
    assert not make_server(Recorder("every", log)).own_tool_calls


@pytest.mark.parametrize("era", ERAS)
async def test_a_middleware_changes_params_and_results(era: str) -> None:
    async def double_a(call: IncomingCall, call_next: Next) -> Any:
        if call.method == "tools/call":
            arguments = msgspec.json.decode(call.params.arguments)
            arguments["a"] *= 2
            params = msgspec.structs.replace(
                call.params, arguments=msgspec.Raw(msgspec.json.encode(arguments))
            )
            call = msgspec.structs.replace(call, params=params)
        return await call_next(call)

    async with Client(make_server(double_a), protocol_version=era) as client:
        result = await client.call("add", {"a": 2, "b": 3})
    assert msgspec.json.decode(result.structured_content) == {"result": 7}


@pytest.mark.parametrize("era", ERAS)
async def test_a_middleware_that_raises_answers_the_error(era: str) -> None:
    async def deny(call: IncomingCall, call_next: Next) -> Any:
        if call.method == "tools/call":
            from mcpbind.protocol import McpError

            raise McpError(-32001, "denied by policy")
        return await call_next(call)

    async with Client(make_server(deny), protocol_version=era) as client:
        with pytest.raises(PeerError) as raised:
            await client.call("add", {"a": 1, "b": 1})
    assert (raised.value.code, raised.value.message) == (-32001, "denied by policy")


# ---------------------------------------------------------------------- Timing
@pytest.mark.parametrize("era", ERAS)
async def test_timing_records_each_request_with_its_outcome(era: str) -> None:
    seen: list[tuple[str, str | None, float, str]] = []
    ticks = iter(range(100))

    def record(call: IncomingCall, seconds: float, outcome: str) -> None:
        seen.append((call.method, call.target, seconds, outcome))

    timing = Timing(record, clock=lambda: float(next(ticks)))
    async with Client(make_server(timing), protocol_version=era) as client:
        await client.call("add", {"a": 1, "b": 1})
        await client.call_tool(_call("broken"))
        with pytest.raises(PeerError):
            await client.request("acme/fail", {})
    calls = [s for s in seen if s[0] in ("tools/call", "acme/fail")]
    assert calls == [
        ("tools/call", "add", 1.0, "ok"),
        ("tools/call", "broken", 1.0, "tool_error"),
        ("acme/fail", None, 1.0, "error KeyError"),
    ]


async def test_timing_logs_by_default(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "mcpbind.server.timing")
    async with Client(make_server(Timing()), protocol_version=LATEST_HANDSHAKE) as client:
        await client.call("add", {"a": 1, "b": 1})
    lines = [r.getMessage() for r in caplog.records if r.name == "mcpbind.server.timing"]
    assert any(line.startswith("tools/call add ") and line.endswith(" ok") for line in lines)


# ---------------------------------------------------------------------- RateLimit
class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("entry", "era"), ENTRIES)
async def test_a_rate_limited_caller_gets_the_documented_error(entry: str, era: str) -> None:
    clock = Clock()
    limit = RateLimit(2, 2, methods={"tools/call"}, clock=clock)
    async with connected(make_server(limit), entry, era) as client:
        for _ in range(2):
            await client.call_tool(_call("add", a=1, b=1))
        with pytest.raises(PeerError) as raised:
            await client.call_tool(_call("add", a=1, b=1))
        assert raised.value.code == RATE_LIMITED == -32000
        assert raised.value.message.startswith("Rate limit exceeded")
        assert raised.value.data == {"retryAfterMs": 500}  # 1 token at 2 a second
        clock.now += 0.5  # one token back
        await client.call_tool(_call("add", a=1, b=1))
        with pytest.raises(PeerError):
            await client.call_tool(_call("add", a=1, b=1))


async def test_each_session_has_its_own_bucket() -> None:
    clock = Clock()
    server = make_server(RateLimit(1, 1, methods={"tools/call"}, clock=clock))
    async with (
        Client(server, protocol_version=LATEST_HANDSHAKE) as first,
        Client(server, protocol_version=LATEST_HANDSHAKE) as second,
    ):
        await first.call_tool(_call("add", a=1, b=1))
        await second.call_tool(_call("add", a=1, b=1))  # not limited by the first's use
        with pytest.raises(PeerError):
            await first.call_tool(_call("add", a=1, b=1))


def test_the_bucket_key_is_the_principal_first() -> None:
    from mcpbind.server import Context, Principal

    limit = RateLimit(1)
    principal = Principal("alice", "app")
    call = IncomingCall("tools/call", None, Context(peer=None, principal=principal))  # type: ignore[arg-type]
    assert limit.caller(call) == ("principal", principal.key)
    anonymous = IncomingCall("tools/call", None, Context(peer=None, principal=None))  # type: ignore[arg-type]
    assert limit.caller(anonymous) == "anonymous"


# ---------------------------------------------------------------------- ErrorReport
@pytest.mark.parametrize("era", ERAS)
async def test_error_report_gets_failures_not_answers(era: str) -> None:
    reported: list[tuple[str, BaseException]] = []

    async def report(call: IncomingCall, exc: BaseException) -> None:
        reported.append((call.method, exc))

    async with Client(make_server(ErrorReport(report)), protocol_version=era) as client:
        await client.call("add", {"a": 1, "b": 1})
        await client.call_tool(_call("broken"))
        with pytest.raises(PeerError):
            await client.request("acme/fail", {})
        with pytest.raises(PeerError):
            await client.call("missing", {})  # an McpError (unknown tool): not reported
    assert [m for m, _ in reported] == ["tools/call", "acme/fail"]
    assert isinstance(reported[0][1], ToolFailed)
    assert isinstance(reported[1][1], KeyError)


async def test_error_report_survives_its_reporter() -> None:
    def report(call: IncomingCall, exc: BaseException) -> None:
        raise RuntimeError("reporter down")

    async with Client(make_server(ErrorReport(report)), protocol_version=LATEST_HANDSHAKE) as c:
        with pytest.raises(PeerError) as raised:
            await c.request("acme/fail", {})
    assert raised.value.code == -32603  # the handler's failure, not the reporter's


# ---------------------------------------------------------------------- wrap
async def test_wrap_still_wraps_inside_the_middleware() -> None:
    log: list[tuple[str, str, str]] = []

    def wrapper(inner: Callable[[Any, Any], Awaitable[Any]]) -> Any:
        async def wrapped(params: Any, ctx: Any) -> Any:
            log.append(("wrap", "in", "tools/call"))
            return await inner(params, ctx)

        return wrapped

    server = make_server(Recorder("mw", log))
    server.wrap("tools/call", wrapper)
    async with Client(server, protocol_version=LATEST_HANDSHAKE) as client:
        await client.call_tool(_call("add", a=1, b=1))
    i = log.index(("mw", "in", "tools/call"))
    assert log[i + 1] == ("wrap", "in", "tools/call")


# ---------------------------------------------------------------------- client side
@pytest.mark.parametrize(("entry", "era"), ENTRIES)
async def test_client_middleware_sees_every_outgoing_request(entry: str, era: str) -> None:
    sent: list[str] = []
    received: list[str] = []

    async def outgoing(call: OutgoingCall, send_next: SendNext) -> Any:
        sent.append(call.method)
        return await send_next(call)

    async def incoming(call: IncomingCall, call_next: Next) -> Any:
        received.append(call.method)
        return await call_next(call)

    async with connected(make_server(incoming), entry, era, middleware=[outgoing]) as client:
        await client.call("add", {"a": 1, "b": 1})
        await client.list_tools()
        await client.ping()
    # Every request the server ran was seen leaving the client. Answered outside the server's
    # chain: the server/discover probe (a 2026-07-28 ping is one too), and in the sessionless
    # mode its own initialize and ping.
    unwrapped = {"server/discover"} | ({"initialize", "ping"} if entry == "sessionless" else set())
    assert received and [m for m in sent if m not in unwrapped] == received
    assert sent.count("tools/call") == 1


async def test_client_middleware_in_order_and_may_change_the_request() -> None:
    log: list[str] = []

    def layer(name: str) -> Callable[[OutgoingCall, SendNext], Awaitable[Any]]:
        async def step(call: OutgoingCall, send_next: SendNext) -> Any:
            log.append(f"{name} {call.method}")
            if name == "inner" and call.method == "tools/call":
                params = msgspec.structs.replace(call.params, name="add")
                call = msgspec.structs.replace(call, params=params)
            return await send_next(call)

        return step

    async with Client(
        make_server(),
        protocol_version=LATEST_HANDSHAKE,
        middleware=[layer("outer"), layer("inner")],
    ) as client:
        result = await client.call_tool(_call("renamed-away", a=2, b=2))
    assert msgspec.json.decode(result.structured_content) == {"result": 4}
    assert log[-2:] == ["outer tools/call", "inner tools/call"]


def _call(name: str, **arguments: Any) -> t.CallToolRequestParams:
    return t.CallToolRequestParams(name=name, arguments=arguments)
