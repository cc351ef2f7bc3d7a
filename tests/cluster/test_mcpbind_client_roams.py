"""mcpbind's own client against a cluster behind haproxy round-robin, on both eras.

2025-11-25 (client/elicitation.mdx, client/sampling.mdx): the elicitation and sampling
requests a call raises on the session's owner are answered in POSTs that other workers
receive and forward. 2026-07-28 (basic/patterns/mrtr.mdx; basic/patterns/subscriptions.mdx):
a multi-round request whose retry lands on another worker (shared ``MCPBIND_STATE_KEYS``), and
a ``subscriptions/listen`` stream held by one worker that hears a change made on another
(the notification bus). Each request is tagged with the worker that answered it."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind import types as t

from .clients import Tags, tagged_client
from .processes import haproxy, workers

pytestmark = pytest.mark.anyio

KEYS = ",".join(base64.b64encode(k).decode() for k in (b"k" * 32, b"o" * 32))


def _text(result: t.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, t.TextContent)
    return content.text


@pytest.mark.parametrize("count", [2, 4])
async def test_elicitation_and_sampling_answered_through_other_workers(
    count: int, redis_url: str, tmp_path: Path
) -> None:
    options = {"redis_sessions": redis_url, "redis_events": redis_url}
    tags = Tags()
    with workers(count, options=options) as ports, haproxy(ports, tmp_path) as url:
        async with tagged_client(url, "2025-11-25", tags) as client:
            with anyio.fail_after(30):
                assert client.protocol_version == "2025-11-25"
                await anyio.sleep(0.5)  # its GET stream opens after the handshake
                greeted = [_text(await client.call("greet")) for _ in range(count)]
                capital = _text(await client.call("capital"))
    assert greeted == ["Hello, Ada!"] * count and capital == "Paris"
    workers_seen = {worker for _method, worker in tags.sent} - {""}
    assert workers_seen == {f"w{i}" for i in range(count)} and tags.roamed(), tags.sent


@pytest.mark.parametrize("count", [2, 4])
async def test_a_2026_client_with_input_rounds_and_a_listen_stream(
    count: int, redis_url: str, tmp_path: Path
) -> None:
    """The client answers ``greet``'s input round itself (``ClientHandlers.elicitation``) and
    retries: the retry reaches the next worker, which opens the request state minted by the
    first. Its listen stream stays on the worker the balancer gave it; ``touch`` and ``flip``
    run on another worker (addressed directly), and both changes reach the stream."""
    options = {"redis_bus": redis_url}
    tags, actor_tags = Tags(), Tags()
    heard: list[str] = []
    both = anyio.Event()

    async def note(method: str, params: Any) -> None:
        heard.append(method)
        if {"notifications/resources/updated", "notifications/tools/list_changed"} <= set(heard):
            both.set()

    env = {"MCPBIND_STATE_KEYS": KEYS}
    with workers(count, env, options) as ports, haproxy(ports, tmp_path) as url:
        async with tagged_client(url, "2026-07-28", tags, notification=note) as client:
            with anyio.fail_after(30):
                before = len(tags.sent)
                greeted = _text(await client.call("greet"))
                rounds = [
                    entry
                    for entry, rpc in zip(tags.sent[before:], tags.rpc[before:], strict=True)
                    if rpc == "tools/call"
                ]
                await client.listen(tools_list_changed=True, resource_uris=["mem://note"])
                listening = int(tags.sent[-1][1].removeprefix("w"))
                elsewhere = f"http://127.0.0.1:{ports[(listening + 1) % count]}/mcp"
                async with tagged_client(elsewhere, "2026-07-28", actor_tags) as actor:
                    await actor.call("touch", {"uri": "mem://note"})
                    await actor.call("flip")
                    await both.wait()
    assert greeted == "Hello, Ada!"
    assert [m for m, _ in rounds] == ["POST", "POST"] and rounds[0][1] != rounds[1][1], rounds
    assert {worker for _, worker in actor_tags.sent} == {f"w{(listening + 1) % count}"}
