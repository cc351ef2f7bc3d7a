"""Isolation: architecture §Design Principles 3 ("Servers should not be able to read the whole
conversation, nor 'see into' other servers"; "Each server connection maintains isolation") and
§Clients ("Maintains security boundaries between servers")."""

from __future__ import annotations

import anyio
import pytest

from mcpbind import types as t
from mcpbind.host import ApprovalPolicy, Host

from .helpers import recorded, stdio, text_of, wait_for
from .servers import legacy, normal

pytestmark = pytest.mark.anyio


async def test_no_server_sees_another_servers_data_or_roots() -> None:
    """client/roots.mdx §Root List Changes: each server gets only its own roots, and only the
    server whose roots changed is told; call arguments go only to the server called; a
    cancelled call is cancelled on its own server only (basic/utilities/cancellation.mdx); one
    server's list_changed refreshes only that server (server/tools.mdx §List Changed)."""
    server_a = legacy("a")
    a, wire_a = recorded(server_a)
    b, wire_b = recorded(legacy("b"))
    allow = ApprovalPolicy(default="allow")
    async with Host() as host:
        await host.add_server("a", a, roots=[t.Root(uri="file:///data/a")], approval=allow)
        await host.add_server("b", b, roots=[t.Root(uri="file:///data/b")], approval=allow)
        await host.call_tool("a__write", {"value": "secret-for-a"})
        assert text_of(await host.call_tool("a__roots")) == '["file:///data/a"]'
        assert text_of(await host.call_tool("b__roots")) == '["file:///data/b"]'
        await host.set_roots("a", [t.Root(uri="file:///data/a2")])
        assert text_of(await host.call_tool("a__roots")) == '["file:///data/a2"]'
        assert text_of(await host.call_tool("b__roots")) == '["file:///data/b"]'
        with anyio.move_on_after(0.2):  # the caller gives up: only a is told to cancel
            await host.call_tool("a__slow")
        await wait_for(lambda: "notifications/cancelled" in wire_a.methods())
        lists_b = wire_b.methods().count("tools/list")
        server_a.remove_tool("wipe")  # a's tools/list_changed refreshes a only
        await wait_for(lambda: "a__wipe" not in host.catalog.tools)
        assert "b__wipe" in host.catalog.tools
        assert wire_b.methods().count("tools/list") == lists_b
    assert "secret-for-a" in wire_a.text()
    assert "secret-for-a" not in wire_b.text()
    assert "file:///data/a" not in wire_b.text() and "file:///data/b" not in wire_a.text()
    assert wire_a.methods().count("notifications/roots/list_changed") == 1
    assert "notifications/roots/list_changed" not in wire_b.methods()
    assert "notifications/cancelled" not in wire_b.methods()


async def test_roots_not_configured_are_not_declared() -> None:
    """client/roots.mdx §Capabilities: a server with no roots configured sees no roots
    capability, so it cannot list any (the host exposes nothing by default); likewise
    client/sampling.mdx and client/elicitation.mdx §Capabilities: without a sampler or an
    elicitation hook the host declares neither. With the hook, both elicitation modes are."""
    connect, wire = recorded(legacy("s"))
    async with Host({"s": connect}) as host:
        result = await host.call_tool("s__roots")
    assert result.is_error is True
    init = next(m for m in wire.received if m.get("method") == "initialize")
    assert {"roots", "sampling", "elicitation"}.isdisjoint(init["params"]["capabilities"])

    async def never(server: str, params: object) -> t.ElicitResult:
        return t.ElicitResult(action="decline")

    connect, wire = recorded(legacy("s"))
    async with Host({"s": connect}, elicit=never):
        pass
    init = next(m for m in wire.received if m.get("method") == "initialize")
    assert init["params"]["capabilities"]["elicitation"] == {"form": {}, "url": {}}


async def test_garbage_and_huge_messages_disturb_no_one() -> None:
    """basic/transports.mdx §stdio + JSON-RPC §5: garbage lines, a response to an unknown id and
    a message over the size limit from one server are answered or dropped on that connection
    alone; its own call completes and the other server keeps answering."""
    config = {"bad": stdio("garbage", max_message_size=65536), "good": normal("good")}
    async with Host(config) as host:
        results: list[str] = []

        async def good_calls() -> None:
            for i in range(20):
                results.append(text_of(await host.call_tool("good__echo", {"text": str(i)})))

        async with anyio.create_task_group() as tg:
            tg.start_soon(good_calls)
            spewed = await host.call_tool("bad__spew")
        assert text_of(spewed) == "spewed"
        assert results == [f"good: {i}" for i in range(20)]
        states = {s.name: s for s in host.servers()}
        assert states["bad"].status == "running" and states["bad"].connects == 1
        assert text_of(await host.call_tool("bad__spew")) == "spewed"
