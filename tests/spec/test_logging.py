"""server/utilities/logging.mdx (2024-11-05, 2025-03-26, 2025-11-25): logging/setLevel sets
the minimum severity; notifications/message carries level, logger and structured data."""

from __future__ import annotations

import msgspec
import pytest

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Client, ClientHandlers, McpError, Server
from mcpbind import types as t
from mcpbind.protocol import INVALID_PARAMS, LocalProtocolError

from .conftest import Connect

pytestmark = pytest.mark.anyio

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class Logs:
    def __init__(self) -> None:
        self.items: list[t.LoggingMessageNotificationParams] = []

    async def __call__(self, params: t.LoggingMessageNotificationParams) -> None:
        self.items.append(params)

    def levels(self) -> list[str]:
        return [item.level for item in self.items]


async def test_set_level_filters_messages(connect: Connect) -> None:
    """logging.mdx §Setting Log Level / §Log Levels: after logging/setLevel the server sends the
    messages at that level and above (RFC 5424 order), and §Log Message Notifications: each
    carries level, logger and arbitrary JSON data. (mcpbind sends none before setLevel.)"""
    logs = Logs()
    async with connect("full", handlers=ClientHandlers(logging=logs)) as client:
        await client.call("log", {"levels": LEVELS})
        assert logs.items == []
        await client.set_level(t.SetLevelRequestParams(level="warning"))
        await client.call("log", {"levels": LEVELS})
        assert logs.levels() == LEVELS[3:]
        first = logs.items[0]
        assert (first.logger, first.data) == ("spec", {"level": "warning", "detail": [1, 2]})
        logs.items.clear()
        await client.set_level(t.SetLevelRequestParams(level="debug"))
        await client.call("log", {"levels": LEVELS})
        assert logs.levels() == LEVELS
        logs.items.clear()
        await client.set_level(t.SetLevelRequestParams(level="emergency"))
        await client.call("log", {"levels": LEVELS})
        assert logs.levels() == ["emergency"]


@pytest.mark.memory_only
async def test_invalid_level_is_invalid_params(connect: Connect) -> None:
    """logging.mdx §Error Handling: "Invalid log level: -32602 (Invalid params)"."""
    async with connect("full") as client:
        with pytest.raises(McpError) as caught:
            await client.set_level(t.SetLevelRequestParams(level="loud"))  # type: ignore[arg-type]
    assert caught.value.code == INVALID_PARAMS
    assert "level" in caught.value.message


@pytest.mark.memory_only
async def test_logging_capability_is_declared(connect: Connect) -> None:
    """logging.mdx §Capabilities: "Servers that emit log message notifications MUST declare the
    logging capability"."""
    async with connect("tools-only") as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.logging == {}
        await client.set_level(t.SetLevelRequestParams(level="info"))


class NoLoggingServer(Server):
    """A server that does not offer logging (mcpbind's own always does)."""

    def capabilities(self, *, stateless: bool = False) -> t.ServerCapabilities:
        caps = super().capabilities(stateless=stateless)
        caps.logging = msgspec.UNSET
        return caps


@pytest.mark.parametrize("version", [LATEST_HANDSHAKE, LATEST_STATELESS])
async def test_set_level_without_server_logging_is_refused_on_both_eras(version: str) -> None:
    """logging.mdx §Capabilities ("Servers that emit log message notifications MUST declare
    the logging capability"): ``set_level`` against a server that did not declare it is
    refused locally with the same message on both eras (2026-07-28 used to keep the level
    silently)."""
    server = NoLoggingServer("quiet")
    server.tool(name="ok")(lambda: "ok")
    async with Client(server, protocol_version=version) as client:
        assert client.protocol_version == version
        with pytest.raises(LocalProtocolError) as caught:
            await client.set_level(t.SetLevelRequestParams(level="debug"))
    assert str(caught.value) == (
        "'logging/setLevel' needs the server capability 'logging', which the server did not declare"
    )
