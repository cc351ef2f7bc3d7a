"""2026-07-28 basic/transports/streamable-http.mdx §Standard Request Headers, §Custom Headers
from Tool Parameters (Schema Extension, Value Encoding, Client Behavior), checked on what a
real server received."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import pytest

from mcpbind import Client

from ._support import Running

V = "2026-07-28"


def _run(fn: Any, *args: Any) -> Any:
    return anyio.run(fn, *args)


def test_every_request_carries_meta_and_matching_headers(served: Running) -> None:
    """§Standard Request Headers and basic/index.mdx _meta: MCP-Protocol-Version equals the
    _meta version, Mcp-Method the method, Mcp-Name the tool name, on every POST (the
    scripted and the official SDK's server)."""
    mock = served
    mock.clear()

    async def go() -> None:
        async with Client(mock.url, protocol_version="auto", name="hdr") as client:
            assert client.era == "stateless"
            await client.list_tools()
            await client.call("legacy", {})

    _run(go)
    log = [e for e in mock.log() if "body" in e]
    methods = [e["body"]["method"] for e in log]
    assert methods[0] == "server/discover" and "tools/list" in methods and "tools/call" in methods
    for entry in log:
        body, headers = entry["body"], entry["headers"]
        meta = body["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == V
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "hdr"
        assert isinstance(meta["io.modelcontextprotocol/clientCapabilities"], dict)
        assert headers["mcp-protocol-version"] == V
        assert headers["mcp-method"] == body["method"]
        assert "mcp-session-id" not in headers
    call = next(e for e in log if e["body"]["method"] == "tools/call")
    assert call["headers"]["mcp-name"] == "legacy"


def test_x_mcp_header_parameters_are_mirrored(served: Running) -> None:
    """§Client Behavior steps 3-5: annotated values (nested ones too, on the scripted server)
    become Mcp-Param-* headers; integers in decimal, booleans lowercase, unannotated and absent
    ones omitted, unsafe strings in the =?base64?...?= form. The official SDK's server checks
    the headers against the arguments itself and echoes them."""
    mock = served
    # The official SDK's server has the annotated integer at the top level.
    level = {"opts": {"level": 7}} if served.kind == "mock" else {"level": 7}

    async def go() -> list[dict[str, str]]:
        async with Client(mock.url, protocol_version="auto") as client:
            await client.list_tools()
            first = await client.call(
                "region", {"region": "us-west1", **level, "flag": False, "query": "q"}
            )
            second = await client.call("region", {"region": " Zürich\n"})
            return [json.loads(r.content[0].text) for r in (first, second)]  # type: ignore[union-attr]

    first, second = _run(go)
    assert first == {
        "mcp-param-region": "us-west1",
        "mcp-param-level": "7",
        "mcp-param-flag": "false",
    }
    encoded = "=?base64?" + base64.b64encode(" Zürich\n".encode()).decode() + "?="
    assert second == {"mcp-param-region": encoded}


def test_a_tool_with_invalid_annotations_is_left_out(mock: Running) -> None:
    """§Schema Extension: the client MUST exclude a tool whose x-mcp-header is invalid (here
    on an array) from tools/list, and keep the valid ones."""

    async def go() -> list[str]:
        async with Client(mock.url, protocol_version="auto", cache=False) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    names = _run(go)
    assert "bad" not in names
    assert {"region", "ask", "flaky", "legacy", "strict"} <= set(names)


def test_header_mismatch_rereads_the_tool_list_and_retries(fresh_mock: Running) -> None:
    """§Client Behavior: after HeaderMismatch (-32020) the client SHOULD call tools/list and
    retry with the headers the current inputSchema asks for (a new request id)."""

    async def go() -> str:
        async with Client(fresh_mock.url, protocol_version="auto") as client:
            await client.list_tools()  # strict is not annotated yet
            result = await client.call("strict", {"region": "eu-1"})
            return result.content[0].text  # type: ignore[union-attr]

    assert _run(go) == "strict ok"
    calls = fresh_mock.requests("tools/call")
    assert len(calls) == 2
    assert "mcp-param-region" not in calls[0]["headers"]
    assert calls[1]["headers"]["mcp-param-region"] == "eu-1"
    assert calls[0]["body"]["id"] != calls[1]["body"]["id"]
    assert len(fresh_mock.requests("tools/list")) == 2


@pytest.mark.parametrize("version", ["2025-11-25"])
def test_handshake_pinned_client_is_refused_by_a_2026_only_server(
    mock: Running, version: str
) -> None:
    """versioning.mdx: a server that speaks only 2026-07-28 refuses initialize; the client
    reports it rather than hanging."""
    from mcpbind import McpError

    async def go() -> None:
        with anyio.fail_after(20):
            async with Client(mock.url, protocol_version=version):
                pass

    with pytest.raises(McpError):
        _run(go)
