"""client/elicitation.mdx arrived in 2025-06-18, but both official SDKs exchange it on older
versions when the client declares it (they gate on the capability, not the version). mcpbind
does the same both ways (basic/lifecycle.mdx §Capability Negotiation): the official
TypeScript and Python clients elicit through an mcpbind server at 2025-03-26, and mcpbind's
client answers the official Python server's elicitation at 2025-03-26."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers
from mcpbind import types as t
from mcpbind.transports import StdioClientTransport

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

HERE = Path(__file__).resolve().parent / "elicitation"
ROOT = Path(__file__).resolve().parents[2]
TS_SDK = ROOT / "bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk"
MCPBIND_SERVER = [sys.executable, str(HERE / "mcpbind_server.py")]
EXPECTED = "2025-03-26 supports=True accept:Ada"


def _env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": path} if path else {}


def test_typescript_client_elicits_through_mcpbind_server() -> None:
    """The TypeScript SDK's ``Client`` declares ``elicitation: {}`` and sets a handler; the
    mcpbind server, which answers 2025-03-26, sees the capability and its request is
    answered."""
    if shutil.which("node") is None or not TS_SDK.is_dir():
        pytest.skip("node or bench/rt/peers/ts/node_modules (the TypeScript SDK) is missing")
    done = subprocess.run(
        ["node", str(HERE / "ts_client.mjs"), str(TS_SDK), "--", *MCPBIND_SERVER],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **_env()},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer == {"text": EXPECTED, "isError": False, "asked": ["What is your name?"]}


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18"])
async def test_python_client_elicits_through_mcpbind_server(version: str) -> None:
    """The official Python ``ClientSession`` with an ``elicitation_callback`` declares form
    and URL modes whatever the version, so the mcpbind server sends the request. On
    2025-06-18 it is answered. On 2025-03-26 ``mcp`` 2.3.0 answers it -32601 all the same
    (its inbound table is per version: it declares what it then refuses, the mismatch
    mcpbind's client avoids); the server turns that into a clear tool error."""
    mcp = pytest.importorskip("mcp", reason="the official MCP SDK (`mcp`) is not installed")
    import mcp.types as mt

    asked: list[str] = []

    async def on_elicit(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return mt.ElicitResult(action="accept", content={"name": "Ada"})

    server = mcp.StdioServerParameters(
        command=MCPBIND_SERVER[0], args=[*MCPBIND_SERVER[1:], version], env=_env()
    )
    with anyio.fail_after(30):
        async with (
            mcp.stdio_client(server) as (read, write),
            mcp.ClientSession(read, write, elicitation_callback=on_elicit) as session,
        ):
            init = await session.initialize()
            result = await session.call_tool("ask_name", {})
    assert init.protocol_version == version
    texts = [c.text for c in result.content if isinstance(c, mt.TextContent)]
    if version == "2025-03-26":
        assert result.is_error is True
        assert texts == ["[-32601] Method not found"]  # the official client's refusal
        assert asked == []
    else:
        assert result.is_error is False
        assert texts == [f"{version} supports=True accept:Ada"]
        assert asked == ["What is your name?"]


@pytest.mark.parametrize("peer", ["python", "typescript"])
async def test_mcpbind_client_answers_official_servers(peer: str) -> None:
    """mcpbind's ``Client`` offers 2025-03-26 with an elicitation handler: it declares
    ``elicitation`` and answers the official server's ``elicitation/create``."""
    if peer == "python":
        pytest.importorskip("mcp", reason="the official MCP SDK (`mcp`) is not installed")
        command, args = sys.executable, [str(HERE / "official_server.py")]
    else:
        if shutil.which("node") is None or not TS_SDK.is_dir():
            pytest.skip("node or bench/rt/peers/ts/node_modules (the TypeScript SDK) is missing")
        command, args = "node", [str(HERE / "ts_server.mjs"), str(TS_SDK)]
    asked: list[Any] = []

    async def on_elicit(params: Any) -> t.ElicitResult:
        asked.append(params)
        return t.ElicitResult(action="accept", content={"name": "Ada"})

    handlers = ClientHandlers(elicitation=on_elicit)
    with anyio.fail_after(30):
        async with (
            StdioClientTransport.spawn(command, args) as io,
            Client(io, handlers=handlers, protocol_version="2025-03-26") as client,
        ):
            assert client.protocol_version == "2025-03-26"
            result = await client.call("ask_name", check_output=False)
    assert result.is_error is not True
    assert [c.text for c in result.content if isinstance(c, t.TextContent)] == ["accept:Ada"]
    (request,) = asked
    assert isinstance(request, t.ElicitRequestFormParams)
    assert request.message == "What is your name?"
