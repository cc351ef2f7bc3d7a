"""Members the server side declares for its collaborators instead of letting them read its
underscore attributes (issue 29, SLF001): ``Server.handlers`` is a plain attribute, rebuilt by
the registrations that change it; ``Server.extension_changed``; ``ListenSubscription.offer``
and ``end``; the host shell's ``attach``."""

from __future__ import annotations

from typing import Any, cast

import msgspec
import pytest

from mcpbind import Context, Server
from mcpbind.cli.host_cmd import _Shell
from mcpbind.cli.host_terminal import Terminal
from mcpbind.host import Host
from mcpbind.server.app import Handler
from mcpbind.server.listen_hub import ListenHub, ListenSubscription
from mcpbind.versions import LATEST_STATELESS

pytestmark = pytest.mark.anyio


def _server() -> Server:
    server = Server("declared")

    @server.tool()
    def noop() -> str:
        return ""

    return server


def test_reading_handlers_changes_nothing() -> None:
    server = _server()
    assert server.own_tool_calls  # known before anyone read the table
    first = server.handlers
    assert server.handlers is first and "tools/call" in first and server.own_tool_calls


def test_registrations_rebuild_the_handlers_and_own_tool_calls() -> None:
    server = _server()
    before = server.handlers

    async def vendor(params: Any, ctx: Context) -> Any:
        return {}

    server.method("vendor/thing")(vendor)
    after = server.handlers
    assert after is not before and after["vendor/thing"] is vendor
    assert "vendor/thing" not in before  # a reader's dict is never changed under it
    assert server.own_tool_calls

    def wrapper(inner: Handler) -> Handler:
        async def wrapped(params: Any, ctx: Context) -> Any:
            return await inner(params, ctx)

        return wrapped

    server.wrap("tools/call", wrapper)
    assert not server.own_tool_calls  # a wrapped tools/call is no longer the server's own
    assert server.handlers["tools/call"].__name__ == "wrapped"


def test_extension_changed_reaches_every_change_listener() -> None:
    """SEP-2663 §Task Status Notifications: a task's status change goes to the listen
    streams through the server's change listeners."""
    server = _server()
    seen: list[tuple[str, str | None]] = []
    unsubscribe = server.on_change(lambda what, detail: seen.append((what, detail)))
    server.extension_changed("task", "t-1")
    unsubscribe()
    server.extension_changed("task", "t-2")
    assert seen == [("task", "t-1")]


def _meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": LATEST_STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }


async def test_listen_subscription_offer_and_end() -> None:
    """basic/patterns/subscriptions.mdx: a change the filter agreed to is queued once until
    taken, one it did not is dropped; the server's end closes the stream."""
    hub = ListenHub(_server())
    params = {"notifications": {"toolsListChanged": True}, "_meta": _meta()}
    sub = hub.open(7, msgspec.json.encode(params))
    assert isinstance(sub, ListenSubscription)
    sub.offer("prompts", None)  # not agreed
    sub.offer("tools", None)
    sub.offer("tools", None)  # already queued, not taken: not queued twice
    data = await sub.next()
    assert data is not None
    message = msgspec.json.decode(data)
    assert message["method"] == "notifications/tools/list_changed"
    assert message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
    sub.end()
    assert sub.closed and await sub.next() is None
    sub.offer("tools", None)  # ended: nothing more is queued
    assert sub._queue.empty()


def test_the_shell_acts_on_the_host_attached() -> None:
    shell = _Shell(Terminal(None))
    with pytest.raises(AssertionError, match="not running"):
        _ = shell.host
    assert shell.completions("call ") == ()  # no host yet: nothing to complete
    host = cast("Host", object())
    shell.attach(host)
    assert shell.host is host
