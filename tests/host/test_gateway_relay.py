"""The gateway (issue 33) relays what upstream servers ask and announce: sampling and
elicitation to the client whose call caused them, log messages, list changes and resource
updates; in memory, both eras downstream, upstreams of both eras.

Spec: 2025-11-25 client/sampling.mdx (§Capabilities, §User Interaction Model: the client
reviews), client/elicitation.mdx (§Capabilities, §Form Mode), server/utilities/logging.mdx,
server/tools.mdx §List Changed Notification, server/resources.mdx §Subscriptions and §List
Changed Notification; 2026-07-28 basic/patterns/mrtr.mdx (the downstream client answers in
input rounds) and basic/patterns/subscriptions.mdx (changes on a listen stream).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers, Context, Server
from mcpbind import types as t
from mcpbind.host import Host, SamplingReview, ToolCallRequest
from mcpbind.host.config import PolicyValue
from mcpbind.host.relay import MAX_PENDING_COMPLETIONS
from mcpbind.server.options import StatelessOptions
from mcpbind.versions import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE, LATEST_STATELESS

from .helpers import text_of, wait_for
from .servers import READ_ONLY, legacy, modern, normal

pytestmark = pytest.mark.anyio

ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]


class Model:
    """The downstream client's sampling handler: answers, and records each request."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        text = params.messages[0].content.text  # type: ignore[union-attr]
        self.asked.append(text)
        return t.CreateMessageResult(
            role="assistant", model="downstream-model", content=t.TextContent(text=text.upper())
        )


async def allow(request: ToolCallRequest) -> PolicyValue:
    return "allow"


async def answer(params: Any) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={"answer": "forty-two"})


@asynccontextmanager
async def gateway(
    servers: dict[str, Any], *, version: str, handlers: ClientHandlers | None = None, **host: Any
) -> AsyncIterator[tuple[Host, Client]]:
    host.setdefault("check", allow)  # the upstream tools here run without approval
    h = Host(servers, **host)
    server = h.as_server()
    async with h, Client(server, protocol_version=version, handlers=handlers) as client:
        yield h, client


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("upstream", [legacy, modern])
async def test_a_sampling_request_is_forwarded_to_the_calling_client(
    version: str, upstream: Any
) -> None:
    """sampling.mdx: the upstream server's ``sampling/createMessage`` is answered by the
    downstream client's model; the Host's review saw it first."""
    model = Model()
    reviewed: list[str] = []

    async def review(server: str, params: t.CreateMessageRequestParams) -> SamplingReview:
        reviewed.append(server)
        return SamplingReview.approve()

    handlers = ClientHandlers(sampling=model)
    servers = {"up": upstream("up")}
    async with gateway(servers, version=version, handlers=handlers, review_sampling=review) as (
        host,
        client,
    ):
        result = await client.call("up__sample", {"prompt": "hello"})
        assert text_of(result) == "downstream-model: HELLO"
    assert "hello" in model.asked
    assert reviewed and set(reviewed) == {"up"}
    assert [(a.kind, a.verdict) for a in host.audit if a.kind == "sampling"][-1] == (
        "sampling",
        "approve",
    )


@pytest.mark.parametrize("version", ERAS)
async def test_a_sampling_request_the_host_denies_never_reaches_the_client(version: str) -> None:
    """sampling.mdx §Error Handling: the Host's reviewer refuses; the upstream tool sees
    -1 and the downstream client is not asked."""
    model = Model()

    async def deny(server: str, params: t.CreateMessageRequestParams) -> SamplingReview:
        return SamplingReview.deny("not today")

    handlers = ClientHandlers(sampling=model)
    async with gateway(
        {"up": legacy("up")}, version=version, handlers=handlers, review_sampling=deny
    ) as (_, client):
        result = await client.call("up__sample", {"prompt": "hello"})
        assert text_of(result) == "error -1: User rejected sampling request"
    assert model.asked == []


def waiting(name: str, release: anyio.Event, entered: list[str]) -> Server:
    """A handshake-era upstream whose tool waits, then asks for sampling with the caller's
    prompt (its ask is a request of its own, tied to no call)."""
    server = Server(name, "1.0.0")
    server.stateless = StatelessOptions(versions=HANDSHAKE_VERSIONS)

    @server.tool()
    async def ask_later(prompt: str, ctx: Context) -> str:
        entered.append(prompt)
        await release.wait()
        params = t.CreateMessageRequestParams(
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text=prompt))],
            max_tokens=10,
        )
        try:
            result = await ctx.sample(params)
        except Exception as exc:
            return f"refused: {exc}"
        return f"answered: {result.content.text}"  # type: ignore[union-attr]

    return server


@pytest.mark.parametrize("version", ERAS)
async def test_an_ask_during_calls_of_two_clients_reaches_neither(version: str) -> None:
    """sampling.mdx §User Interaction Model (the client of the call reviews its ask) and
    §Security Considerations: while calls of two downstream sessions run on one upstream, a
    handshake-era ask is not tied to either call, so it is refused rather than shown to the
    wrong client; the concurrent calls of one handshake-era session still get their asks
    (2026-07-28 has no session: two requests could be two clients)."""
    release = anyio.Event()
    alice, bob = Model(), Model()
    entered: list[str] = []
    host = Host({"up": waiting("up", release, entered)}, check=allow)
    server = host.as_server()
    results: dict[str, str] = {}
    async with (
        host,
        Client(server, handlers=ClientHandlers(sampling=alice), protocol_version=version) as one,
        Client(server, handlers=ClientHandlers(sampling=bob), protocol_version=version) as two,
    ):

        async def call(client: Client, who: str) -> None:
            results[who] = text_of(await client.call("up__ask_later", {"prompt": who}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, one, "alice")
            tg.start_soon(call, two, "bob")
            await wait_for(lambda: len(entered) == 2)
            release.set()
        assert alice.asked == [] and bob.asked == []
        for who in ("alice", "bob"):
            assert results[who].startswith(
                "refused: [-32603] sampling refused: calls of several clients"
            )
        async with anyio.create_task_group() as tg:  # one client, two calls at once
            tg.start_soon(call, one, "alice")
            tg.start_soon(call, one, "alice again")
    if version == LATEST_HANDSHAKE:  # one session: each of its calls is asked
        assert sorted(alice.asked) == ["alice", "alice again"] and bob.asked == []
        assert results["alice"] == "answered: ALICE"
    else:  # no session on 2026-07-28: two requests could be two clients, so neither is asked
        assert alice.asked == [] and bob.asked == []


@pytest.mark.parametrize("version", ERAS)
async def test_sampling_is_refused_when_the_client_did_not_declare_it(version: str) -> None:
    """sampling.mdx §Capabilities: a client without ``sampling`` is not asked; the upstream
    server gets an error saying so."""
    async with gateway({"up": legacy("up")}, version=version) as (_, client):
        result = await client.call("up__sample", {"prompt": "hello"})
    assert text_of(result).startswith("error -32601: sampling refused: ")
    assert "did not declare the sampling capability" in text_of(result)


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("upstream", [legacy, modern])
async def test_an_elicitation_is_forwarded_to_the_calling_client(
    version: str, upstream: Any
) -> None:
    """elicitation.mdx §Form Mode: the form reaches the downstream client unchanged and its
    answer goes back to the server that asked."""
    asked: list[str] = []

    async def elicit(params: Any) -> t.ElicitResult:
        asked.append(params.message)
        return await answer(params)

    handlers = ClientHandlers(elicitation=elicit)
    async with gateway({"up": upstream("up")}, version=version, handlers=handlers) as (_, client):
        result = await client.call("up__ask", {"question": "What is the answer?"})
    assert text_of(result) == 'accept {"answer": "forty-two"}'
    assert "What is the answer?" in asked


@pytest.mark.parametrize("version", ERAS)
async def test_an_elicitation_is_refused_when_the_client_did_not_declare_it(version: str) -> None:
    """elicitation.mdx §Capabilities: the upstream server's ask fails with an error; nothing
    reaches the downstream client."""
    async with gateway({"up": legacy("up")}, version=version) as (host, client):
        result = await client.call("up__ask", {"question": "Q?"})
    assert result.is_error
    assert "did not declare the elicitation capability" in text_of(result)
    assert [a.verdict for a in host.audit if a.kind == "elicitation"] == ["refuse"]


def chatty() -> Server:
    """Logs while its tool runs; adds a tool when asked (tools/list_changed)."""
    server = Server("chatty", version="1.0.0")

    @server.tool(annotations=READ_ONLY)
    async def talk(ctx: Context) -> str:
        await ctx.log("warning", {"said": "careful"}, logger="chatty.core")
        return "talked"

    @server.tool(annotations=READ_ONLY)
    def grow() -> str:
        @server.tool(annotations=READ_ONLY)
        def extra() -> str:
            return "extra"

        return "grown"

    @server.resource("mem://chatty/state")
    def state() -> str:
        return "state"

    @server.tool(annotations=READ_ONLY)
    def touch() -> str:
        server.resource_updated("mem://chatty/state")
        return "touched"

    return server


async def test_log_messages_of_the_upstream_call_reach_the_client() -> None:
    """logging.mdx: the upstream's ``notifications/message`` reaches the client whose call it
    serves, at that client's level, with its logger."""
    logs: list[t.LoggingMessageNotificationParams] = []

    async def on_log(params: t.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    handlers = ClientHandlers(logging=on_log)
    async with gateway({"c": chatty()}, version=LATEST_HANDSHAKE, handlers=handlers) as (
        host,
        client,
    ):
        await host.client("c").set_level(t.SetLevelRequestParams(level="debug"))
        await client.set_level(t.SetLevelRequestParams(level="info"))
        assert text_of(await client.call("c__talk", {})) == "talked"
        await wait_for(lambda: bool(logs))
    assert [(m.level, m.data, m.logger) for m in logs] == [
        ("warning", {"said": "careful"}, "chatty.core")
    ]


@pytest.mark.parametrize("version", ERAS)
async def test_an_upstream_list_change_is_announced_downstream(version: str) -> None:
    """tools.mdx §List Changed Notification (2026-07-28: on the listen stream,
    subscriptions.mdx): a tool added upstream is announced, and the next listing has it."""
    seen: list[str] = []

    async def note(method: str, params: Any) -> None:
        seen.append(method)

    handlers = ClientHandlers(notification=note)
    async with gateway({"c": chatty()}, version=version, handlers=handlers) as (_, client):
        sub = await client.listen(tools_list_changed=True)
        assert "c__extra" not in [tool.name async for tool in client.iter_tools()]
        assert text_of(await client.call("c__grow", {})) == "grown"
        await wait_for(lambda: "notifications/tools/list_changed" in seen)
        assert "c__extra" in [tool.name async for tool in client.iter_tools()]
        await sub.close()


async def test_a_server_added_to_the_host_is_announced_downstream() -> None:
    """The catalog changes when a server joins: the downstream client hears of it."""
    seen: list[str] = []

    async def note(method: str, params: Any) -> None:
        seen.append(method)

    handlers = ClientHandlers(notification=note)
    async with gateway({"a": normal("a")}, version=LATEST_HANDSHAKE, handlers=handlers) as (
        host,
        client,
    ):
        await host.add_server("b", normal("b"))
        await wait_for(lambda: "notifications/tools/list_changed" in seen)
        await wait_for(lambda: "notifications/prompts/list_changed" in seen)
        assert "b__echo" in [tool.name async for tool in client.iter_tools()]


async def test_a_subscription_reaches_the_upstream_and_its_updates_come_back() -> None:
    """resources.mdx §Subscriptions: ``resources/subscribe`` at the gateway subscribes at the
    server that serves the URI; its ``notifications/resources/updated`` comes back; after
    unsubscribing, no more."""
    updates: list[str] = []

    async def note(method: str, params: Any) -> None:
        if method == "notifications/resources/updated":
            updates.append(params.uri)

    handlers = ClientHandlers(notification=note)
    async with gateway({"c": chatty()}, version=LATEST_HANDSHAKE, handlers=handlers) as (
        _,
        client,
    ):
        await client.subscribe(t.SubscribeRequestParams(uri="mem://chatty/state"))
        await client.call("c__touch", {})
        await wait_for(lambda: updates == ["mem://chatty/state"])
        await client.unsubscribe(t.UnsubscribeRequestParams(uri="mem://chatty/state"))
        await client.call("c__touch", {})
        await anyio.sleep(0.2)
    assert updates == ["mem://chatty/state"]


@pytest.mark.parametrize("version", ERAS)
async def test_a_held_subscription_is_made_again_when_its_server_reconnects(
    version: str,
) -> None:
    """resources.mdx §Subscriptions (2026-07-28: subscriptions.mdx): the downstream client
    still holds its subscription when the upstream server reconnects, so the gateway
    subscribes there again (the old subscription ended with the old connection) and the
    server's updates keep reaching the client."""
    updates: list[str] = []

    async def note(method: str, params: Any) -> None:
        if method == "notifications/resources/updated":
            updates.append(params.uri)

    async def an_update_arrives(client: Client) -> None:
        updates.clear()
        with anyio.fail_after(10):  # the upstream subscription is opened in the background
            while not updates:  # each touch may come before the subscription is open
                await client.call("c__touch", {})
                await anyio.sleep(0.05)

    uri = "mem://chatty/state"
    handlers = ClientHandlers(notification=note)
    async with gateway({"c": chatty()}, version=version, handlers=handlers) as (host, client):
        if version == LATEST_HANDSHAKE:
            await client.subscribe(t.SubscribeRequestParams(uri=uri))
        else:
            await client.listen(resource_uris=[uri])
        await an_update_arrives(client)
        await host.restart_server("c")
        await an_update_arrives(client)
    assert set(updates) == {uri}


async def test_a_held_subscription_is_made_at_a_server_that_comes_to_serve_the_uri() -> None:
    """resources.mdx §Subscriptions: a server added while the client holds a subscription,
    serving the same URI, is subscribed too; its updates reach the client."""
    updates: list[str] = []

    async def note(method: str, params: Any) -> None:
        if method == "notifications/resources/updated":
            updates.append(params.uri)

    uri = "mem://chatty/state"
    handlers = ClientHandlers(notification=note)
    async with gateway({"c": chatty()}, version=LATEST_HANDSHAKE, handlers=handlers) as (
        host,
        client,
    ):
        await client.subscribe(t.SubscribeRequestParams(uri=uri))
        await host.add_server("d", chatty())
        with anyio.fail_after(10):  # the upstream subscription is opened in the background
            while not updates:  # each touch may come before the subscription is open
                await client.call("d__touch", {})
                await anyio.sleep(0.05)
    assert set(updates) == {uri}


def linking() -> Server:
    """Asks the user to open a URL (elicitation.mdx §URL Mode), then says it completed."""
    server = Server("linking", version="1.0.0")
    server.stateless = StatelessOptions(versions=HANDSHAKE_VERSIONS)

    @server.tool(annotations=READ_ONLY)
    async def link(ctx: Context) -> str:
        params = t.ElicitRequestURLParams(
            message="Sign in", mode="url", url="https://example.com/sign-in", elicitation_id="e1"
        )
        result = await ctx.elicit(params)
        await ctx.elicitation_completion("e1")()
        return result.action

    return server


async def test_a_url_elicitation_and_its_completion_reach_the_client() -> None:
    """elicitation.mdx §URL Mode, §Completion Notifications for URL Mode Elicitation: the URL
    request reaches the client, and the server's completion notification follows it."""
    urls: list[str] = []
    completed: list[str] = []

    async def elicit(params: Any) -> t.ElicitResult:
        urls.append(params.url)
        return t.ElicitResult(action="accept")

    async def complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)

    handlers = ClientHandlers(elicitation=elicit, elicitation_complete=complete)
    async with gateway({"l": linking()}, version=LATEST_HANDSHAKE, handlers=handlers) as (_, c):
        assert text_of(await c.call("l__link", {})) == "accept"
        await wait_for(lambda: completed == ["e1"])
    assert urls == ["https://example.com/sign-in"]


async def test_a_listen_stream_s_resource_subscription_reaches_the_upstream() -> None:
    """2026-07-28 basic/patterns/subscriptions.mdx: a listen stream naming a URI in
    ``resourceSubscriptions`` gets its ``notifications/resources/updated``; the gateway
    subscribed at the server that serves it."""
    updates: list[str] = []

    async def note(method: str, params: Any) -> None:
        if method == "notifications/resources/updated":
            updates.append(params.uri)

    handlers = ClientHandlers(notification=note)
    async with gateway({"c": chatty()}, version=LATEST_STATELESS, handlers=handlers) as (
        _,
        client,
    ):
        sub = await client.listen(resource_uris=["mem://chatty/state"])
        with anyio.fail_after(10):  # the upstream subscription is opened in the background
            while not updates:
                await client.call("c__touch", {})
                await anyio.sleep(0.05)
        assert set(updates) == {"mem://chatty/state"}
        await sub.close()


def many_links() -> Server:
    """Sends ``count`` URL elicitations, then completes the first and the last."""
    server = Server("links", version="1.0.0")
    server.stateless = StatelessOptions(versions=HANDSHAKE_VERSIONS)

    @server.tool(annotations=READ_ONLY)
    async def links(count: int, ctx: Context) -> str:
        for n in range(count):
            params = t.ElicitRequestURLParams(
                message="m", mode="url", url="https://example.com", elicitation_id=f"e{n}"
            )
            await ctx.elicit(params)
        await ctx.elicitation_completion("e0")()
        await ctx.elicitation_completion(f"e{count - 1}")()
        return "sent"

    return server


async def test_pending_url_completions_are_bounded() -> None:
    """A server that sends URL elicitations and does not complete them cannot grow the
    gateway's table without bound: past MAX_PENDING_COMPLETIONS the oldest are dropped, so
    their completion is no longer passed on; the newest still is."""
    asked: list[str] = []
    completed: list[str] = []

    async def elicit(params: Any) -> t.ElicitResult:
        asked.append(params.elicitation_id)
        return t.ElicitResult(action="accept")

    async def complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)

    count = MAX_PENDING_COMPLETIONS + 5
    handlers = ClientHandlers(elicitation=elicit, elicitation_complete=complete)
    async with gateway({"l": many_links()}, version=LATEST_HANDSHAKE, handlers=handlers) as (
        _,
        client,
    ):
        assert text_of(await client.call("l__links", {"count": count})) == "sent"
        await wait_for(lambda: completed == [f"e{count - 1}"])
        await anyio.sleep(0.1)
    assert len(asked) == count  # e0 reached the client, so it would accept e0's completion
    assert completed == [f"e{count - 1}"]
