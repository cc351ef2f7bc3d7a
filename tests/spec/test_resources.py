"""server/resources.mdx (2024-11-05, 2025-03-26, 2025-11-25): listing and reading resources
(text and binary contents), resource templates, subscriptions with
notifications/resources/updated, list_changed, and the not-found error."""

from __future__ import annotations

import base64
import json

import anyio
import pytest

from mcpbind import LATEST_HANDSHAKE, Client, ClientHandlers, McpError, json_value
from mcpbind import types as t
from mcpbind.protocol import RESOURCE_NOT_FOUND

from .conftest import Connect
from .helpers import Notes, memory_session, settle, wait_until
from .servers import LOGO, build

pytestmark = pytest.mark.anyio

UPDATED = "notifications/resources/updated"


@pytest.mark.memory_only
async def test_list_resources(connect: Connect) -> None:
    """resources.mdx §Listing Resources / §Resource: uri, name, title, description, mimeType."""
    async with connect("full") as client:
        resources = {r.uri: r async for r in client.iter_resources()}
    readme = resources["file:///readme.txt"]
    assert (readme.name, readme.title, readme.mime_type) == ("readme", "Read me", "text/plain")
    assert readme.description == "The project readme."
    assert resources["file:///logo.png"].mime_type == "image/png"


async def test_read_text_and_binary_contents(connect: Connect) -> None:
    """resources.mdx §Reading Resources / §Resource Contents: text contents carry ``text``,
    binary contents carry base64 ``blob``; both carry the uri and mimeType."""
    async with connect("full") as client:
        text = await client.read_resource(t.ReadResourceRequestParams(uri="file:///readme.txt"))
        blob = await client.read_resource(t.ReadResourceRequestParams(uri="file:///logo.png"))
    assert text.contents == [
        t.TextResourceContents(
            uri="file:///readme.txt", mime_type="text/plain", text="hello, world"
        )
    ]
    (contents,) = blob.contents
    assert isinstance(contents, t.BlobResourceContents)
    assert (contents.uri, contents.mime_type) == ("file:///logo.png", "image/png")
    assert base64.b64decode(contents.blob) == LOGO


@pytest.mark.memory_only
async def test_resource_templates(connect: Connect) -> None:
    """resources.mdx §Resource Templates: templates are listed with their RFC 6570 uriTemplate,
    and URIs matching a template can be read (arguments extracted from the URI)."""
    async with connect("full") as client:
        templates = {tpl.uri_template: tpl async for tpl in client.iter_resource_templates()}
        profile = await client.read_resource(t.ReadResourceRequestParams(uri="users://42/profile"))
        doc = await client.read_resource(t.ReadResourceRequestParams(uri="file:///docs/a/b.md"))
    assert set(templates) == {"users://{user_id}/profile", "file:///docs/{+path}"}
    tpl = templates["users://{user_id}/profile"]
    assert (tpl.name, tpl.mime_type, tpl.description) == (
        "profile",
        "application/json",
        "A user's profile.",
    )
    (contents,) = profile.contents
    assert isinstance(contents, t.TextResourceContents)
    assert contents.uri == "users://42/profile"
    assert json.loads(contents.text) == {"id": "42", "name": "user 42"}
    assert [c.text for c in doc.contents if isinstance(c, t.TextResourceContents)] == [
        "doc at a/b.md"
    ]


@pytest.mark.memory_only
async def test_unknown_resource_is_not_found(connect: Connect) -> None:
    """resources.mdx §Error Handling: "Resource not found: -32002", with the uri in data."""
    async with connect("full") as client:
        with pytest.raises(McpError) as caught:
            await client.read_resource(t.ReadResourceRequestParams(uri="file:///nonexistent.txt"))
    assert caught.value.code == RESOURCE_NOT_FOUND
    assert caught.value.data == {"uri": "file:///nonexistent.txt"}


async def test_subscribe_updated_unsubscribe(connect: Connect) -> None:
    """resources.mdx §Subscriptions / §Capabilities (``subscribe``): after resources/subscribe
    the server sends notifications/resources/updated for that uri; after
    resources/unsubscribe it stops."""
    notes = Notes()
    uri = "file:///readme.txt"
    async with connect("full", handlers=ClientHandlers(notification=notes)) as client:
        assert json_value((await client.call("touch", {"uri": uri})).structured_content) == {
            "result": False
        }
        await client.subscribe(t.SubscribeRequestParams(uri=uri))
        assert json_value((await client.call("touch", {"uri": uri})).structured_content) == {
            "result": True
        }
        await client.unsubscribe(t.UnsubscribeRequestParams(uri=uri))
        assert json_value((await client.call("touch", {"uri": uri})).structured_content) == {
            "result": False
        }
        await client.ping()
    assert notes.items == [(UPDATED, t.ResourceUpdatedNotificationParams(uri=uri))]


@pytest.mark.memory_only
async def test_session_notifies_resource_updated_outside_a_handler() -> None:
    """resources.mdx §Subscriptions: the server announces updates whenever the resource
    changes (``ServerSession.notify_resource_updated`` from application code), only for
    subscribed uris."""
    notes = Notes()
    handlers = ClientHandlers(notification=notes)
    async with memory_session("full", handlers=handlers) as (client, session, _wire):
        await client.subscribe(t.SubscribeRequestParams(uri="users://1/profile"))
        await session.notify_resource_updated("users://1/profile")
        await session.notify_resource_updated("users://2/profile")  # not subscribed
        await client.ping()
    assert notes.methods() == [UPDATED]
    assert notes.items[0][1].uri == "users://1/profile"


@pytest.mark.memory_only
async def test_resource_list_changed(connect: Connect) -> None:
    """resources.mdx §List Changed Notification: servers that declared ``listChanged`` SHOULD
    send notifications/resources/list_changed when the list changes."""
    notes = Notes()
    changed = "notifications/resources/list_changed"
    async with connect("full", handlers=ClientHandlers(notification=notes)) as client:
        await client.call("add_resource", {"uri": "memo://new"})
        await settle(client, notes, changed)
        uris = {r.uri async for r in client.iter_resources()}
    assert notes.count(changed) == 1
    assert "memo://new" in uris


@pytest.mark.memory_only
async def test_server_resource_updated_reaches_subscribed_sessions_only() -> None:
    """resources.mdx §Subscriptions: application code announces a change once
    (``Server.resource_updated``) and every session subscribed to that uri -- and only those --
    gets notifications/resources/updated."""
    server = build("full")
    subscribed, other = Notes(), Notes()
    async with (
        Client(
            server,
            handlers=ClientHandlers(notification=subscribed),
            protocol_version=LATEST_HANDSHAKE,
        ) as first,
        Client(
            server, handlers=ClientHandlers(notification=other), protocol_version=LATEST_HANDSHAKE
        ) as second,
    ):
        await first.subscribe(t.SubscribeRequestParams(uri="file:///readme.txt"))
        server.resource_updated("file:///readme.txt")
        server.resource_updated("file:///logo.png")
        await wait_until(lambda: bool(subscribed.items))
        await anyio.sleep(0.1)
        await first.ping()
        await second.ping()
    assert subscribed.items == [
        (UPDATED, t.ResourceUpdatedNotificationParams(uri="file:///readme.txt"))
    ]
    assert other.items == []
