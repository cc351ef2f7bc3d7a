"""basic/versioning.mdx §Compatibility Matrix, the other way round: the official SDK's
dual-era client (mcp 2.3.0, ``mode="auto"``) against mcpbind servers of each configuration,
including a multi round-trip elicitation (basic/patterns/mrtr.mdx) answered by its callback."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
import mcp_types as mt
import pytest
from mcp.client import Client as OfficialClient
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.anyio

APP = str(Path(__file__).with_name("app.py"))


async def _elicit(context: Any, params: Any) -> mt.ElicitResult:
    return mt.ElicitResult(action="accept", content={"name": "Official"})


def _running(tag: str) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if tag.encode() in (entry / "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


@pytest.mark.parametrize(
    ("config", "version"),
    [("dual", "2026-07-28"), ("modern", "2026-07-28"), ("legacy", "2025-11-25")],
)
async def test_official_client_picks_the_era(config: str, version: str) -> None:
    """versioning.mdx §Compatibility Matrix (Dual-era client with a dual-era, modern and
    legacy server): the official client probes server/discover; mcpbind answers as configured;
    the official client's elicitation callback completes the call in either era."""
    tag = f"stateless-official-{uuid.uuid4().hex}"
    params = StdioServerParameters(
        command=sys.executable, args=[APP, config, tag], env=dict(os.environ)
    )
    with anyio.fail_after(30):
        async with OfficialClient(
            params, mode="auto", read_timeout_seconds=10, elicitation_callback=_elicit
        ) as client:
            assert client.protocol_version == version
            result = await client.call_tool("greet", {})
            added = await client.call_tool("add", {"a": 2, "b": 40})
    assert isinstance(result.content[0], mt.TextContent)
    assert result.content[0].text == "Hello, Official!"
    assert added.structured_content == {"result": 42}
    for _ in range(100):  # the official stdio client stops the server as it exits
        if not _running(tag):
            break
        await anyio.sleep(0.05)
    assert not _running(tag)
