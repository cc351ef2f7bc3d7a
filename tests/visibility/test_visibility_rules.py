"""Per-caller visibility on one ``Server``: declared scopes (hidden by default; ``hide_ungranted``
is the opt-out), ``visible=``
predicates, tags and run-time switches; pages of a listing that differs per caller.

Spec: server/utilities/pagination.mdx (cursors are opaque; every page of the list, in order),
server/tools.mdx §List Changed Notification (a change is announced), 2026-07-28
server/utilities/caching.mdx (``cacheScope``: a listing that depends on the caller is not shared).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers, Context, Server
from mcpbind import types as t
from mcpbind.auth.server import ResourceServer
from mcpbind.server.principal import Principal

pytestmark = pytest.mark.anyio

ALICE = Principal("alice", scopes=frozenset({"notes:read"}))
ADMIN = Principal("root", scopes=frozenset({"notes:read", "admin"}))


def _server(page_size: int = 100) -> Server:
    server = Server("visible", "1.0.0", page_size=page_size)  # hide_ungranted by default

    def fn(text: str = "") -> str:
        return text

    server.tool("open1")(fn)
    server.tool("secret1", scopes=["admin"])(fn)
    server.tool("open2")(fn)
    server.tool("secret2", scopes=["admin"])(fn)
    server.tool("open3")(fn)
    server.tool("beta", tags=["beta"])(fn)
    server.tool("mine", visible=lambda ctx: ctx.session_state.get("vip") is True)(fn)
    server.resource("notes://open")(fn)
    server.resource("notes://admin", scopes="admin")(fn)
    server.resource_template("files://{name}", scopes=["admin"])(fn)
    server.prompt("greet")(fn)
    server.prompt("audit", scopes=["admin"])(fn)
    return server


class _Refuse:
    """A verifier never asked here (only ``ResourceServer.granted`` is used)."""

    async def verify(self, token: str, resource: str) -> Principal:
        raise AssertionError("not called")


def _ctx(principal: Principal | None, version: str = "2025-11-25", **state: Any) -> Context:
    return Context(peer=None, protocol_version=version, principal=principal, session_state=state)  # type: ignore[arg-type]


async def _list(server: Server, method: str, ctx: Context) -> list[str]:
    """Every page of ``method`` as ``ctx``'s caller, names (or URIs) in order."""
    names: list[str] = []
    cursor: str | None = None
    while True:
        params = t.PaginatedRequestParams(cursor=cursor) if cursor else None
        result = await server.handlers[method](params, ctx)
        if method == "resources/templates/list":
            names += [x.uri_template for x in result.resource_templates]
        elif method == "resources/list":
            names += [x.uri for x in result.resources]
        else:
            names += [x.name for x in getattr(result, method.split("/")[0])]
        if not isinstance(result.next_cursor, str):
            return names
        cursor = result.next_cursor


async def test_declared_scopes_hide_an_item_from_callers_without_them() -> None:
    server = _server()
    alice, admin = _ctx(ALICE), _ctx(ADMIN)
    assert await _list(server, "tools/list", alice) == ["open1", "open2", "open3", "beta"]
    assert await _list(server, "tools/list", admin) == [
        *("open1", "secret1", "open2", "secret2", "open3", "beta")
    ]
    assert await _list(server, "resources/list", alice) == ["notes://open"]
    assert await _list(server, "resources/list", admin) == ["notes://open", "notes://admin"]
    assert await _list(server, "resources/templates/list", alice) == []
    assert await _list(server, "resources/templates/list", admin) == ["files://{name}"]
    assert await _list(server, "prompts/list", alice) == ["greet"]
    assert await _list(server, "prompts/list", admin) == ["greet", "audit"]


async def test_without_an_auth_layer_scoped_items_are_listed_as_they_are_callable() -> None:
    """No principal: no auth layer admitted the request (stdio, HTTP without one) and none
    refuses a scoped call, so the listing shows the scoped items too: a listing shows what
    the caller can call (2025-11-25 basic/authorization.mdx: authorization is optional, and
    stdio takes its credentials from the environment)."""
    server = _server()
    anonymous = _ctx(None)
    assert await _list(server, "tools/list", anonymous) == [
        *("open1", "secret1", "open2", "secret2", "open3", "beta")
    ]
    assert await _list(server, "prompts/list", anonymous) == ["greet", "audit"]
    called = await server.handlers["tools/call"](
        t.CallToolRequestParams(name="secret1", arguments={"text": "hi"}), anonymous
    )
    assert called.is_error is not True


async def test_without_hide_ungranted_declared_scopes_only_guard_the_call() -> None:
    server = _server()
    server.hide_ungranted = False  # the opt-out: a client may see what it can step up to
    names = await _list(server, "tools/list", _ctx(ALICE))
    assert "secret1" in names and "secret2" in names


async def test_scopes_a_hierarchy_implies_list_the_item() -> None:
    """The listing asks ``Principal.has_scopes``, the auth layer's own check: a principal
    whose token's scope implies the declared one (``ResourceServer(scope_hierarchy=)`` sets
    ``implied``) sees the item; without the implication it does not."""
    server = _server()
    hierarchy = {"root": ["admin"], "admin": ["notes:read"]}
    broad = ResourceServer(
        _Refuse(),
        resource="https://h/mcp",
        authorization_servers=["https://as"],
        scope_hierarchy=hierarchy,
    ).granted(Principal("boss", scopes=frozenset({"root"})))
    assert broad.implied == {"admin", "notes:read"} and broad.scopes == {"root"}
    assert await _list(server, "tools/list", _ctx(broad)) == [
        *("open1", "secret1", "open2", "secret2", "open3", "beta")
    ]
    assert await _list(server, "prompts/list", _ctx(broad)) == ["greet", "audit"]
    narrow = Principal("boss", scopes=frozenset({"root"}))  # no hierarchy applied
    assert await _list(server, "tools/list", _ctx(narrow)) == ["open1", "open2", "open3", "beta"]


async def test_a_visible_predicate_hides_and_refuses_per_caller() -> None:
    server = _server()
    assert "mine" not in await _list(server, "tools/list", _ctx(ALICE))
    assert "mine" in await _list(server, "tools/list", _ctx(ALICE, vip=True))
    call = t.CallToolRequestParams(name="mine", arguments={})
    with pytest.raises(Exception, match="Unknown tool: mine"):
        await server.handlers["tools/call"](call, _ctx(ALICE))
    result = await server.handlers["tools/call"](call, _ctx(ALICE, vip=True))
    assert result.is_error is not True


@pytest.mark.parametrize("page_size", [1, 2, 3, 5])
async def test_pages_of_a_filtered_listing_skip_and_repeat_nothing(page_size: int) -> None:
    """pagination.mdx: each caller gets its whole view, in order, over any page size."""
    server = _server(page_size)
    for ctx in (_ctx(ALICE), _ctx(ADMIN), _ctx(ADMIN, vip=True)):
        one_page = await _list(_server(), "tools/list", ctx)
        assert await _list(server, "tools/list", ctx) == one_page


async def test_a_cursor_carried_to_another_view_resumes_after_it() -> None:
    """A cursor is a position in the server's list: a caller whose scopes grew between pages
    (step-up) sees the rest of its new view, nothing twice and nothing skipped."""
    server = _server(page_size=2)
    first = await server.handlers["tools/list"](None, _ctx(ALICE))
    assert [x.name for x in first.tools] == ["open1", "open2"]
    rest = await server.handlers["tools/list"](
        t.PaginatedRequestParams(cursor=first.next_cursor), _ctx(ADMIN)
    )
    assert [x.name for x in rest.tools] == ["secret2", "open3"]  # secret1 lies before the cursor


async def test_disabled_tags_and_names_are_unlisted_and_unknown_until_enabled() -> None:
    server = _server()
    server.disable(tag="beta")
    server.disable(tool="open2")
    server.disable(prompt="greet")
    server.disable(resource="notes://open")
    alice = _ctx(ALICE)
    assert await _list(server, "tools/list", alice) == ["open1", "open3"]
    assert await _list(server, "prompts/list", alice) == []
    assert await _list(server, "resources/list", alice) == []
    for name in ("beta", "open2"):
        with pytest.raises(Exception, match=f"Unknown tool: {name}"):
            await server.handlers["tools/call"](t.CallToolRequestParams(name=name), alice)
    with pytest.raises(Exception, match="Unknown prompt"):
        await server.handlers["prompts/get"](t.GetPromptRequestParams(name="greet"), alice)
    with pytest.raises(Exception, match="Resource not found"):
        await server.handlers["resources/read"](
            t.ReadResourceRequestParams(uri="notes://open"), alice
        )
    server.enable(tag="beta")
    server.enable(tool="open2")
    server.enable(prompt="greet")
    server.enable(resource="notes://open")
    assert await _list(server, "tools/list", alice) == ["open1", "open2", "open3", "beta"]
    assert await _list(server, "prompts/list", alice) == ["greet"]


async def test_a_hidden_template_does_not_serve_reads() -> None:
    server = _server()
    read = t.ReadResourceRequestParams(uri="files://x")
    server.disable(resource="files://{name}")
    with pytest.raises(Exception, match="Resource not found"):
        await server.handlers["resources/read"](read, _ctx(ADMIN))
    server.enable(resource="files://{name}")
    result = await server.handlers["resources/read"](read, _ctx(ADMIN))
    assert result.contents[0].text == ""  # type: ignore[union-attr]


async def test_each_switch_sends_list_changed_once_debounced() -> None:
    """tools.mdx §List Changed Notification, through a session (debounced as for registrations)."""
    server = _server()
    seen: list[str] = []
    changed = anyio.Event()

    async def on_notification(method: str, params: object) -> None:
        if method.endswith("list_changed"):
            seen.append(method)
            changed.set()

    handlers = ClientHandlers(notification=on_notification)
    async with Client(server, handlers=handlers, protocol_version="2025-11-25") as client:
        assert "beta" in [tool.name async for tool in client.iter_tools()]
        server.disable(tag="beta")
        server.disable(tool="open1")
        with anyio.fail_after(5):
            await changed.wait()
        await anyio.sleep(0.2)
        assert seen == ["notifications/tools/list_changed"]
        # (no auth layer in memory: the scoped tools are listed, as they are callable)
        expected = ["secret1", "open2", "secret2", "open3"]
        assert [tool.name async for tool in client.iter_tools()] == expected
        server.disable(tag="beta")  # already off: no change, no notification
        await anyio.sleep(0.2)
        assert seen == ["notifications/tools/list_changed"]


async def test_a_listing_that_depends_on_the_caller_is_not_shareable() -> None:
    """caching.mdx: ``cacheScope: "public"`` results may be served across authorization
    contexts; a listing filtered per caller is ``"private"``; one that is not stays public."""
    server = _server()
    modern = _ctx(ADMIN, version="2026-07-28")
    tools = await server.handlers["tools/list"](None, modern)
    assert tools.cache_scope == "private"
    plain = await server.handlers["prompts/list"](None, _ctx(ADMIN, version="2026-07-28"))
    assert plain.cache_scope == "private"  # audit declares scopes
    server.hide_ungranted = False
    server.remove_tool("mine")
    assert (await server.handlers["tools/list"](None, modern)).cache_scope is not "private"  # noqa: F632
    handshake = await server.handlers["tools/list"](None, _ctx(ADMIN))
    assert handshake.cache_scope != "private"  # no such field before 2026-07-28
