"""basic/versioning.mdx §Protocol Version Negotiation and §Compatibility Matrix, over
Streamable HTTP: ``Client(url, protocol_version="auto")`` probes with ``server/discover`` and
falls back to ``initialize``; the same application code runs against an old-era and a
2026-07-28 official-SDK server and against mcpbind's HTTP server."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind import Client, McpError, json_value, types

from ._support import server


async def application(url: str) -> tuple[str | None, list[Any]]:
    """The application: era-agnostic code that lists, calls, reads and gets a prompt."""
    async with Client(url, protocol_version="auto") as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        added = await client.call("add", {"a": 2, "b": 3})
        read = await client.read_resource(types.ReadResourceRequestParams(uri="mem://greeting"))
        prompts = sorted(p.name for p in (await client.list_prompts()).prompts)
        return client.era, [
            "add" in tools,
            json_value(added.structured_content),
            [getattr(c, "text", None) for c in read.contents],
            bool(prompts),
        ]


@pytest.mark.parametrize(
    ("kind", "era"), [("official-old", "handshake"), ("official", "stateless")]
)
def test_same_application_code_on_both_official_eras(kind: str, era: str) -> None:
    """versioning.mdx §Compatibility Matrix: an old-era official SDK server gets the
    initialize fallback, a 2026-07-28 one the stateless era; the results are the same."""
    with server(kind) as running:
        got_era, outcome = anyio.run(application, running.url)
    assert got_era == era
    assert outcome == [True, {"result": 5}, ["Hello from interop!"], True]


def test_mcpbind_http_server_speaks_the_stateless_era() -> None:
    """discover.mdx: mcpbind's HTTP app answers server/discover, so "auto" picks 2026-07-28,
    and a handshake-pinned client still gets the initialize era from the same endpoint."""

    async def both(url: str) -> list[Any]:
        out: list[Any] = []
        for version in ("auto", "2025-11-25"):
            async with Client(url, protocol_version=version) as client:
                added = await client.call("add", {"a": 1, "b": 1})
                out.append(
                    (client.era, client.protocol_version, json_value(added.structured_content))
                )
        return out

    with server("mcpbind") as running:
        got = anyio.run(both, running.url)
    assert got == [
        ("stateless", "2026-07-28", {"result": 2}),
        ("handshake", "2025-11-25", {"result": 2}),
    ]


def test_forcing_2026_on_an_old_server_fails_with_an_error() -> None:
    """versioning.mdx: a client pinned to 2026-07-28 does not fall back; an old server's
    refusal of server/discover surfaces as an McpError, not a hang."""

    async def forced(url: str) -> None:
        with anyio.fail_after(20):
            async with Client(url, protocol_version="2026-07-28"):
                pass

    with server("official-old") as running, pytest.raises(McpError):
        anyio.run(forced, running.url)
