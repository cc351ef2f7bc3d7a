"""The Host on both protocol eras: each server negotiates its own (transports/stdio.mdx,
Backward Compatibility: ``server/discover``, then ``initialize`` for older servers), and the
Host's features hold on both: list changes (handshake: unsolicited ``list_changed``;
2026-07-28: basic/patterns/subscriptions.mdx), sampling and elicitation (handshake: requests
to the client; 2026-07-28: basic/patterns/mrtr.mdx input rounds), cache hints
(server/utilities/caching.mdx) and a per-server pin (``protocolVersion``)."""

from __future__ import annotations

import anyio
import pytest

from mcpbind import types as t
from mcpbind.host import (
    USER_REJECTED,
    ApprovalDenied,
    ApprovalPolicy,
    ConfigError,
    Host,
    HostEvent,
    SamplingReview,
    ToolCallRequest,
    parse_server,
)
from mcpbind.protocol import McpError
from mcpbind.server.options import CacheHint

from .helpers import recorded, stdio, text_of, wait_for
from .servers import legacy, modern, normal

pytestmark = pytest.mark.anyio

ERAS = {"old": "2025-11-25", "new": "2026-07-28", "both": "2026-07-28"}


class Model:
    """The host's model: upper-cases the last message."""

    async def __call__(
        self, server: str, params: t.CreateMessageRequestParams
    ) -> t.CreateMessageResult:
        content = params.messages[-1].content
        text = content.text if isinstance(content, t.TextContent) else "?"
        return t.CreateMessageResult(
            content=t.TextContent(text=text.upper()), model="m1", role="assistant"
        )


class Reviewer:
    """One hook for every server: approve, edit, deny, in turn per server."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def __call__(self, server: str, params: t.CreateMessageRequestParams) -> SamplingReview:
        content = params.messages[-1].content
        self.seen.append((server, content.text if isinstance(content, t.TextContent) else "?"))
        turn = sum(1 for s, _ in self.seen if s == server)
        if turn == 1:
            return SamplingReview.approve()
        if turn == 2:
            edited = with_text(params, "edited")
            return SamplingReview.edit(edited)
        return SamplingReview.deny("not today")


def with_text(params: t.CreateMessageRequestParams, text: str) -> t.CreateMessageRequestParams:
    return t.CreateMessageRequestParams(
        max_tokens=params.max_tokens,
        messages=[t.SamplingMessage(role="user", content=t.TextContent(text=text))],
    )


async def test_three_servers_on_two_eras_in_one_host() -> None:
    """A handshake-only server, a 2026-07-28-only one and one speaking both: each negotiates
    its newest era; the catalog spans all three; calls go through the one approval policy; a
    list change on each reaches the catalog (list_changed on the handshake era, the listen
    stream on 2026-07-28); each server's sampling request goes through the same reviewer.
    A denied round: the handshake-era tool gets -1 and reports it (sampling.mdx §Error
    Handling, 2025-11-25); on 2026-07-28 the server is not waiting, so the call ends with -1
    and the retry is never sent (sampling.mdx §Error Handling, 2026-07-28)."""
    servers = {"old": legacy("old"), "new": modern("new"), "both": normal("both")}
    connectors = {name: recorded(server) for name, server in servers.items()}
    asked: list[ToolCallRequest] = []

    async def approve(request: ToolCallRequest) -> bool:
        asked.append(request)
        return request.tool != "wipe"

    reviewer = Reviewer()
    async with Host(
        {name: connect for name, (connect, _) in connectors.items()},
        approve=approve,
        sampler=Model(),
        review_sampling=reviewer,
    ) as host:
        states = {s.name: s for s in host.servers()}
        assert {name: s.protocol_version for name, s in states.items()} == ERAS
        assert all(s.status == "running" for s in states.values())
        for name in ERAS:
            assert f"{name}__echo" in host.catalog.tools
            assert f"{name}__greet" in host.catalog.prompts
            assert text_of(await host.call_tool(f"{name}__echo", {"text": "hi"})) == f"{name}: hi"
            assert text_of(await host.call_tool(f"{name}__write", {"value": "v"})) == "wrote v"
            with pytest.raises(ApprovalDenied):
                await host.call_tool(f"{name}__wipe")
        assert [(r.server, r.tool) for r in asked] == [
            (name, tool) for name in ERAS for tool in ("write", "wipe")
        ]

        # A list change on each server reaches the catalog.
        for name, server in servers.items():
            server.remove_tool("append")
            await wait_for(lambda name=name: f"{name}__append" not in host.catalog.tools)  # type: ignore[misc]
            assert f"{name}__echo" in host.catalog.tools
        for name in ("new", "both"):
            assert host.supervisor.handles[name].subscription is not None
        _, new_wire = connectors["new"]
        assert "subscriptions/listen" in new_wire.methods()

        # Sampling from each server: approved, edited, denied, through the same reviewer.
        for name in ERAS:
            sample = f"{name}__sample"
            assert text_of(await host.call_tool(sample, {"prompt": "hello"})) == "m1: HELLO"
            assert text_of(await host.call_tool(sample, {"prompt": "hello"})) == "m1: EDITED"
            if name == "old":
                denied = text_of(await host.call_tool(sample, {"prompt": "hello"}))
                assert denied == "error -1: User rejected sampling request"
            else:
                calls_before = connectors[name][1].methods().count("tools/call")
                with pytest.raises(McpError) as info:
                    await host.call_tool(sample, {"prompt": "hello"})
                assert info.value.code == USER_REJECTED
                assert "User rejected sampling request" in info.value.message
                # The first request was sent, its retry was not: the server is not told.
                assert connectors[name][1].methods().count("tools/call") == calls_before + 1
    assert reviewer.seen == [(name, "hello") for name in ERAS for _ in range(3)]
    verdicts = [(a.server, a.verdict) for a in host.audit if a.kind == "sampling"]
    assert verdicts == [(n, v) for n in ERAS for v in ("approve", "edit", "deny")]
    # The handshake-era error reached that server only, as JSON-RPC error -1.
    old_errors = [m["error"]["code"] for m in connectors["old"][1].received if "error" in m]
    assert old_errors == [-1]


async def test_elicitation_in_input_rounds() -> None:
    """elicitation.mdx + mrtr.mdx: a 2026-07-28 server's form arrives as an input round and
    goes to the same UI hook; accept and decline reach the server in the retry."""
    answers = [t.ElicitResult(action="accept", content={"answer": "blue"}), None]

    async def ui(server: str, params: object) -> t.ElicitResult:
        answer = answers.pop(0)
        return answer or t.ElicitResult(action="decline")

    allow = ApprovalPolicy(default="allow")
    async with Host(elicit=ui) as host:
        await host.add_server("new", modern("new"), approval=allow)
        first = text_of(await host.call_tool("new__ask", {"question": "Colour?"}))
        second = text_of(await host.call_tool("new__ask", {"question": "Colour?"}))
    assert (first, second) == ('accept {"answer": "blue"}', "decline {}")
    assert [a.verdict for a in host.audit if a.kind == "elicitation"] == ["accept", "decline"]


async def test_a_dropped_listen_stream_is_opened_again() -> None:
    """subscriptions.mdx §Graceful Closure: when the server ends the listen stream while the
    connection lives, the host listens again (with backoff) and refetches the lists, since a
    change in between would have been missed; later changes still reach the catalog."""
    server = modern("new")
    connect, wire = recorded(server)
    events: list[HostEvent] = []
    async with Host({"new": connect}, on_event=events.append) as host:
        handle = host.supervisor.handles["new"]
        first = handle.subscription
        assert first is not None and first.acknowledged is not None
        assert first.acknowledged.tools_list_changed is True
        wire.sessions[0].close_listeners()  # the server ends the stream gracefully
        await wait_for(lambda: handle.listens == 1 and handle.subscription is not first)
        await wait_for(
            lambda: handle.subscription is not None and handle.subscription.id is not None
        )
        server.remove_tool("wipe")
        await wait_for(lambda: "new__wipe" not in host.catalog.tools)
        assert host.servers()[0].connects == 1  # the connection itself was kept
    assert any("list-change stream ended" in e.message for e in events)


async def test_cache_hints_spare_requests_while_fresh() -> None:
    """caching.mdx §Time-to-Live and §Interaction with Notifications: a read within its
    ttlMs is answered from the cache (one cache per server: one authorization context, so
    ``private`` results are safe); a list change invalidates the cached list; after the TTL a
    refresh fetches again."""
    server = modern("new")
    opts = server.stateless
    opts.cache["resources/read"] = CacheHint(60_000, "private")
    opts.cache["tools/list"] = CacheHint(1, "public")
    connect, wire = recorded(server)
    async with Host({"new": connect}) as host:
        for _ in range(3):
            found = await host.read_resource("mem://new/info")
            assert found.contents[0].text == "info of new"  # type: ignore[union-attr]
        assert wire.methods().count("resources/read") == 1
        lists = wire.methods().count("tools/list")
        await anyio.sleep(0.01)  # past the 1 ms TTL for sure (the reads above may be faster)
        await host.refresh()  # stale: fetched again
        assert wire.methods().count("tools/list") > lists


async def test_refresh_uses_fresh_lists() -> None:
    """caching.mdx: "the client checks freshness when it needs the data, and re-fetches only
    if stale": ``Host.refresh`` within the TTL sends nothing."""
    connect, wire = recorded(modern("new"))  # lists: ttlMs 60000 by default
    async with Host({"new": connect}) as host:
        lists = wire.methods().count("tools/list")
        await host.refresh()
        assert wire.methods().count("tools/list") == lists
        assert "new__echo" in host.catalog.tools


async def test_protocol_version_pins_an_era() -> None:
    """A server that speaks both eras, pinned by configuration (``protocolVersion``) to the
    handshake era or to one version; a bad value names the key."""
    async with Host() as host:
        await host.add_server("h", normal("h"), protocol_version="handshake")
        await host.add_server("v", normal("v"), protocol_version="2025-06-18")
        await host.add_server("s", normal("s"), protocol_version="stateless")
        versions = {s.name: s.protocol_version for s in host.servers()}
    assert versions == {"h": "2025-11-25", "v": "2025-06-18", "s": "2026-07-28"}
    config = parse_server("x", {"command": "srv", "protocolVersion": "handshake"})
    assert config.pinned_version() == "2025-11-25"
    with pytest.raises(ConfigError, match=r"protocolVersion.*unknown protocol version '1999'"):
        parse_server("x", {"command": "srv", "protocolVersion": "1999"})


async def test_stdio_servers_negotiate_and_pin() -> None:
    """Over stdio: a 2026-07-28-only process joins the catalog; a pinned one is held to its
    era."""
    config = {
        "new": stdio("modern"),
        "pinned": stdio("normal", protocol_version="handshake"),
    }
    async with Host(config, approve=None) as host:
        versions = {s.name: s.protocol_version for s in host.servers()}
        assert text_of(await host.call_tool("new__echo", {"text": "x"})) == "modern: x"
    assert versions == {"new": "2026-07-28", "pinned": "2025-11-25"}
