"""A 2026-07-28 downstream client's input rounds through the gateway (issue 33): what an
upstream call asks (sampling, elicitation) goes down as an ``InputRequiredResult``, and the
client's retry hands its answers to the upstream call, which was kept waiting: the upstream
tool runs once across the rounds. Bounded by a timeout and a limit per caller. A real
mcpbind upstream of each era, in memory; mcpbind's client downstream.

Spec: 2026-07-28 basic/patterns/mrtr.mdx (§Server Requirements: ``requestState`` is
verified; §Client Requirements: the retry echoes it with ``inputResponses``), 2025-11-25
client/sampling.mdx and client/elicitation.mdx (what the upstream asks).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from support.live_server import LiveServer

from mcpbind import Client, ClientHandlers, Context, McpError, Server
from mcpbind import types as t
from mcpbind.host import Host, ToolCallRequest
from mcpbind.host.config import PolicyValue
from mcpbind.host.gateway import Gateway
from mcpbind.host.relay import APPROVE_FIELD
from mcpbind.http import StreamableHTTPApp
from mcpbind.protocol import INVALID_PARAMS, INVALID_REQUEST
from mcpbind.server.options import StatelessOptions
from mcpbind.versions import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_STATELESS,
    STATELESS_VERSIONS,
)
from mcpbind_types._common import RequestOptions

from .helpers import text_of, wait_for
from .servers import READ_ONLY

pytestmark = pytest.mark.anyio

ANSWER = t.ElicitRequestFormParamsRequestedSchema(
    type="object", properties={"answer": t.StringSchema(type="string")}, required=["answer"]
)


class Upstream:
    """A real upstream whose tool asks twice (sampling, then a form); every run and every
    cancellation recorded."""

    def __init__(self, versions: tuple[str, ...]) -> None:
        self.runs: list[str] = []
        self.cancelled: list[str] = []
        server = self.server = Server("up", version="1.0.0")
        server.stateless = StatelessOptions(versions=versions)

        @server.tool(annotations=READ_ONLY)
        async def ask(prompt: str, ctx: Context) -> str:
            self.runs.append(prompt)
            try:
                message = t.SamplingMessage(role="user", content=t.TextContent(text=prompt))
                sampled = await ctx.sample(
                    t.CreateMessageRequestParams(messages=[message], max_tokens=10)
                )
                form = await ctx.elicit(
                    t.ElicitRequestFormParams(message="and?", requested_schema=ANSWER)
                )
            except anyio.get_cancelled_exc_class():
                self.cancelled.append(prompt)
                raise
            text = sampled.content.text  # type: ignore[union-attr]
            content = form.content if isinstance(form.content, dict) else {}
            return f"{text} / {content.get('answer')}"

        @server.tool(annotations=READ_ONLY)
        async def count(ctx: Context, steps: int = 3) -> str:
            self.runs.append(f"count {steps}")
            for step in range(1, steps + 1):
                await ctx.report_progress(step, steps, f"step {step}")
            message = t.SamplingMessage(role="user", content=t.TextContent(text="done?"))
            await ctx.sample(t.CreateMessageRequestParams(messages=[message], max_tokens=10))
            return f"counted {steps}"


class Downstream:
    """The downstream client's model and user; ``hold`` keeps them from answering."""

    def __init__(self, hold: float = 0.0) -> None:
        self.hold = hold
        self.asked: list[str] = []

    async def sample(self, params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        text = params.messages[0].content.text  # type: ignore[union-attr]
        self.asked.append(f"sampling {text}")
        await anyio.sleep(self.hold)
        return t.CreateMessageResult(
            role="assistant", model="m", content=t.TextContent(text=text.upper())
        )

    async def elicit(self, params: Any) -> t.ElicitResult:
        if APPROVE_FIELD in params.requested_schema.properties:  # the Host's approval form
            self.asked.append("approval")
            return t.ElicitResult(action="accept", content={APPROVE_FIELD: True})
        self.asked.append(f"form {params.message}")
        return t.ElicitResult(action="accept", content={"answer": "forty-two"})

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(sampling=self.sample, elicitation=self.elicit)


async def allow(request: ToolCallRequest) -> PolicyValue:
    return "allow"


@asynccontextmanager
async def gateway(
    upstream: Upstream,
    downstream: Downstream,
    version: str = LATEST_STATELESS,
    *,
    more: Upstream | None = None,
    check: Any = allow,
    **rounds: Any,
) -> AsyncIterator[tuple[Gateway, Client]]:
    servers = {"up": upstream.server}
    if more is not None:
        servers["up2"] = more.server
    host = Host(servers, check=check)
    gw = Gateway(host)
    for name, value in rounds.items():
        setattr(gw.rounds, name, value)
    async with (
        host,
        Client(gw.server, protocol_version=version, handlers=downstream.handlers()) as client,
    ):
        yield gw, client


async def test_the_upstream_call_runs_once_across_the_rounds() -> None:
    """mrtr.mdx: two input rounds downstream (sampling, then the form), answered by the
    client's retries; the handshake-era upstream's tool ran once, and nothing is left
    waiting."""
    upstream, downstream = Upstream(HANDSHAKE_VERSIONS), Downstream()
    async with gateway(upstream, downstream) as (gw, client):
        result = await client.call("up__ask", {"prompt": "hi"})
        assert text_of(result) == "HI / forty-two"
        assert upstream.runs == ["hi"]
        assert downstream.asked == ["sampling hi", "form and?"]
        assert gw.rounds.pending == {}


async def test_an_approval_round_comes_first_and_the_call_still_runs_once() -> None:
    """server/tools.mdx §Security Considerations: the Host's policy asks the client first
    (an input round of its own, before anything runs upstream); then the upstream's two asks;
    one run upstream, three rounds downstream."""

    async def ask(request: ToolCallRequest) -> PolicyValue:
        return "ask"

    upstream, downstream = Upstream(HANDSHAKE_VERSIONS), Downstream()
    async with gateway(upstream, downstream, check=ask) as (gw, client):
        result = await client.call("up__ask", {"prompt": "hi"})
        assert text_of(result) == "HI / forty-two"
        assert downstream.asked == ["approval", "sampling hi", "form and?"]
        assert upstream.runs == ["hi"]
        assert gw.rounds.pending == {}


async def test_over_streamable_http_each_round_is_a_post_and_the_call_still_runs_once() -> None:
    """basic/transports.mdx (2026-07-28 Streamable HTTP: one POST per request): the retries
    are new POSTs, answered by the call the first POST left waiting."""
    upstream, downstream = Upstream(HANDSHAKE_VERSIONS), Downstream()
    host = Host({"up": upstream.server}, check=allow)
    live = LiveServer(StreamableHTTPApp(host.as_server(run_host=True), path="/mcp")).start()
    try:
        handlers = downstream.handlers()
        async with Client(live.url, protocol_version=LATEST_STATELESS, handlers=handlers) as client:
            result = await client.call("up__ask", {"prompt": "hi"})
    finally:
        live.stop()
    assert text_of(result) == "HI / forty-two"
    assert upstream.runs == ["hi"]
    assert downstream.asked == ["sampling hi", "form and?"]


async def test_progress_of_the_kept_call_reaches_the_caller() -> None:
    """basic/utilities/progress.mdx: the kept upstream call's progress goes to the caller's
    token while its request runs (before the first ask, here)."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    upstream, downstream = Upstream(HANDSHAKE_VERSIONS), Downstream()
    async with gateway(upstream, downstream) as (_, client):
        options = RequestOptions(on_progress=progress)
        result = await client.call("up__count", {"steps": 2}, options=options)
        assert text_of(result) == "counted 2"
    assert seen == [(1, 2, "step 1"), (2, 2, "step 2")]
    assert upstream.runs == ["count 2"]


async def test_a_2026_upstream_runs_its_own_rounds_only() -> None:
    """A 2026-07-28 upstream re-runs its tool on each of its own rounds (mrtr.mdx): three
    runs for two asks. The gateway adds none (it re-ran the whole upstream exchange per
    downstream round before: six runs)."""
    upstream, downstream = Upstream(STATELESS_VERSIONS), Downstream()
    async with gateway(upstream, downstream) as (_, client):
        result = await client.call("up__ask", {"prompt": "hi"})
        assert text_of(result) == "HI / forty-two"
        assert upstream.runs == ["hi", "hi", "hi"]
        assert downstream.asked == ["sampling hi", "form and?"]


async def test_a_handshake_client_is_asked_on_its_session_as_before() -> None:
    """The handshake era asks by request (sampling.mdx): no rounds, one run either way."""
    upstream, downstream = Upstream(HANDSHAKE_VERSIONS), Downstream()
    async with gateway(upstream, downstream, LATEST_HANDSHAKE) as (gw, client):
        assert text_of(await client.call("up__ask", {"prompt": "hi"})) == "HI / forty-two"
        assert upstream.runs == ["hi"]
        assert gw.rounds.pending == {}


async def test_a_call_never_resumed_is_cancelled_upstream_after_the_timeout() -> None:
    """The client never retries (its model does not answer): after ``timeout`` the kept call
    is cancelled, and so is the upstream tool; nothing is left waiting."""
    upstream, downstream = Upstream(HANDSHAKE_VERSIONS), Downstream(hold=3600)
    async with gateway(upstream, downstream, timeout=0.2) as (gw, client):
        with anyio.move_on_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call, "up__ask", {"prompt": "never"})
                await wait_for(lambda: upstream.cancelled == ["never"])
                assert gw.rounds.pending == {}
                tg.cancel_scope.cancel()
        assert upstream.runs == ["never"]


async def test_a_retry_after_the_timeout_is_told_to_call_again() -> None:
    """mrtr.mdx §Error Handling: the retry names a call that ended; one clear -32602."""
    upstream, downstream = Upstream(HANDSHAKE_VERSIONS), Downstream(hold=0.6)
    async with gateway(upstream, downstream, timeout=0.1) as (_, client):
        with pytest.raises(McpError) as caught:
            await client.call("up__ask", {"prompt": "late"})
        assert caught.value.code == INVALID_PARAMS
        assert "has ended" in caught.value.message and "\n" not in caught.value.message
        assert upstream.cancelled == ["late"]


async def test_a_caller_may_keep_only_so_many_calls_waiting() -> None:
    """``max_anonymous`` (the unauthenticated callers together; ``max_per_caller`` for a
    principal): a second call waiting for input is refused with -32600 and cancelled
    upstream; the first one goes on. (Two upstreams: asks of two 2026-07-28 requests on one
    handshake-era server are refused, :mod:`.relay`.)"""
    upstream, other, downstream = (
        Upstream(HANDSHAKE_VERSIONS),
        Upstream(HANDSHAKE_VERSIONS),
        Downstream(hold=0.5),
    )
    async with gateway(upstream, downstream, more=other, max_anonymous=1) as (_, client):
        results: dict[str, Any] = {}

        async def call(tool: str, prompt: str) -> None:
            try:
                results[prompt] = text_of(await client.call(tool, {"prompt": prompt}))
            except McpError as exc:
                results[prompt] = exc.code

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "up__ask", "first")
            await wait_for(lambda: downstream.asked == ["sampling first"])
            tg.start_soon(call, "up2__ask", "second")
    assert results == {"first": "FIRST / forty-two", "second": INVALID_REQUEST}
    assert upstream.cancelled == [] and other.cancelled == ["second"]
