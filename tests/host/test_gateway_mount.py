"""Composition with a remote server (issue 33): ``server.mount(RemoteSource(target), prefix)``
puts a server reached through a ``Client`` (here a stdio process, of either era) inside a
mcpbind server, under the mount's names (mcpbind.server.mount), forwarding as the gateway does.

Spec: 2025-11-25 server/tools.mdx (§Listing Tools, §Calling Tools, §List Changed
Notification), server/resources.mdx (§Reading Resources), server/prompts.mdx (§Getting a
Prompt), client/sampling.mdx, basic/utilities/progress.mdx; 2026-07-28
basic/patterns/subscriptions.mdx (the remote's list changes on a listen stream).
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from mcpbind import Client, ClientHandlers, Server
from mcpbind import types as t
from mcpbind.host.remote import RemoteSource
from mcpbind.versions import LATEST_HANDSHAKE, LATEST_STATELESS
from mcpbind_types._common import RequestOptions

from .helpers import SERVERS, text_of, wait_for

pytestmark = pytest.mark.anyio

ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]


def parent(kind: str) -> Server:
    server = Server("parent", version="1.0.0")

    @server.tool()
    def own() -> str:
        return "own tool"

    server.mount(RemoteSource(f"{sys.executable} {SERVERS} {kind}", name=kind), "up")
    return server


async def model(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
    text = params.messages[0].content.text  # type: ignore[union-attr]
    return t.CreateMessageResult(role="assistant", model="m", content=t.TextContent(text=text))


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("kind", ["legacy", "modern"])
async def test_a_remote_server_is_served_under_the_prefix(version: str, kind: str) -> None:
    handlers = ClientHandlers(sampling=model)
    async with Client(parent(kind), protocol_version=version, handlers=handlers) as client:
        names = sorted([tool.name async for tool in client.iter_tools()])
        assert "own" in names and "up_echo" in names and "up_write" in names
        assert text_of(await client.call("up_echo", {"text": "hi"})) == f"{kind}: hi"
        assert text_of(await client.call("own", {})) == "own tool"
        uris = [r.uri async for r in client.iter_resources()]
        assert uris == [f"mem://up/{kind}/info"]
        read = await client.read_resource(t.ReadResourceRequestParams(uri=uris[0]))
        assert read.contents[0].text == f"info of {kind}"  # type: ignore[union-attr]
        got = await client.get_prompt(
            t.GetPromptRequestParams(name="up_greet", arguments={"who": "Ann"})
        )
        assert got.messages[0].content.text == f"Hello Ann from {kind}"  # type: ignore[union-attr]
        sampled = await client.call("up_sample", {"prompt": "forwarded"})
        assert text_of(sampled) == "m: forwarded"


@pytest.mark.parametrize("version", ERAS)
async def test_progress_of_a_remote_call_reaches_the_caller(version: str) -> None:
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async with Client(parent("forms"), protocol_version=version) as client:
        options = RequestOptions(on_progress=progress)
        result = await client.call("up_count", {"steps": 3}, options=options)
    assert text_of(result) == "counted 3"
    assert seen == [1, 2, 3]


async def test_a_remote_list_change_reaches_the_parent_s_client() -> None:
    """tools.mdx §List Changed Notification: the flood server announces list changes; the
    parent's client hears them (the remote lists were fetched again)."""
    seen: list[str] = []

    async def note(method: str, params: Any) -> None:
        seen.append(method)

    server = Server("parent")
    server.mount(RemoteSource(f"{sys.executable} {SERVERS} flood", name="flood"), "f")
    handlers = ClientHandlers(notification=note)
    async with Client(server, protocol_version=LATEST_HANDSHAKE, handlers=handlers) as client:
        assert text_of(await client.call("f_flood", {"count": 30})) == "30"
        await wait_for(lambda: "notifications/tools/list_changed" in seen)
        assert "f_ping_me" in [tool.name async for tool in client.iter_tools()]
