"""The Host over the official SDKs' servers at once: the Python SDK's (``mcp`` 2.x, which
negotiates 2026-07-28) and the TypeScript SDK's (handshake era only). One catalog, one
approval policy, list changes from both, sampling from both through the same reviewer
(2026-07-28: an input round, basic/patterns/mrtr.mdx; handshake: sampling/createMessage)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from mcpbind import types as t
from mcpbind.host import Host, SamplingReview, ServerConfig, ToolCallRequest
from mcpbind.protocol import McpError

from .helpers import node_binary, text_of, wait_for

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
PEERS = Path(__file__).with_name("peers")
TS_MODULES = ROOT / "bench" / "rt" / "peers" / "ts" / "node_modules"


def ts_server(folder: Path) -> ServerConfig:
    """The TS peer beside a link to the bench's node_modules (ESM resolves from the file)."""
    node = node_binary()
    if node is None or not (TS_MODULES / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.skip("node or the TypeScript SDK (bench/rt/peers/ts) is not installed")
    shutil.copy(PEERS / "ts_server.mjs", folder / "ts_server.mjs")
    (folder / "node_modules").symlink_to(TS_MODULES)
    return ServerConfig(command=node, args=[str(folder / "ts_server.mjs")])


async def model(server: str, params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
    content = params.messages[-1].content
    text = content.text if isinstance(content, t.TextContent) else "?"
    return t.CreateMessageResult(
        content=t.TextContent(text=text.upper()), model="m1", role="assistant"
    )


async def test_official_python_and_typescript_servers_in_one_host(tmp_path: Path) -> None:
    config = {
        "py": ServerConfig(command=sys.executable, args=[str(PEERS / "official_server.py")]),
        "ts": ts_server(tmp_path),
    }
    asked: list[tuple[str, str]] = []

    async def approve(request: ToolCallRequest) -> bool:
        asked.append((request.server, request.tool))
        return True

    seen: list[str] = []

    async def review(server: str, params: t.CreateMessageRequestParams) -> SamplingReview:
        seen.append(server)
        turn = seen.count(server)
        if turn == 1:
            return SamplingReview.approve()
        if turn == 2:
            edited = t.CreateMessageRequestParams(
                max_tokens=params.max_tokens,
                messages=[t.SamplingMessage(role="user", content=t.TextContent(text="edited"))],
            )
            return SamplingReview.edit(edited)
        return SamplingReview.deny("not today")

    async with Host(config, approve=approve, sampler=model, review_sampling=review) as host:
        states = {s.name: s for s in host.servers()}
        assert {n: s.status for n, s in states.items()} == {"py": "running", "ts": "running"}
        assert states["py"].protocol_version == "2026-07-28"
        assert states["ts"].protocol_version == "2025-11-25"
        assert {"py__echo", "py__write", "ts__echo", "ts__write"} <= set(host.catalog.tools)
        for name, label in (("py", "official"), ("ts", "ts")):
            assert text_of(await host.call_tool(f"{name}__echo", {"text": "x"})) == f"{label}: x"
            assert text_of(await host.call_tool(f"{name}__write", {"value": "v"})) == "wrote v"
            # A list change: the py server's on its listen stream, the ts server's unsolicited.
            assert f"{name}__extra" not in host.catalog.tools
            assert text_of(await host.call_tool(f"{name}__grow")) == "grown"
            await wait_for(lambda name=name: f"{name}__extra" in host.catalog.tools)  # type: ignore[misc]
        assert ("py", "write") in asked and ("ts", "write") in asked
        assert ("py", "echo") not in asked  # read-only: allowed by the policy without asking

        for name in ("py", "ts"):
            sample = f"{name}__sample"
            assert text_of(await host.call_tool(sample, {"prompt": "hello"})) == "m1: HELLO"
            assert text_of(await host.call_tool(sample, {"prompt": "hello"})) == "m1: EDITED"
        # Denied: the handshake-era tool is told (-1) and reports it; on 2026-07-28 the call
        # ends with -1 and the server, which is not waiting, is not told.
        denied = text_of(await host.call_tool("ts__sample", {"prompt": "hello"}))
        assert denied.startswith("error -1:") and "User rejected sampling request" in denied
        with pytest.raises(McpError) as info:
            await host.call_tool("py__sample", {"prompt": "hello"})
        assert info.value.code == -1
    verdicts = [(a.server, a.verdict) for a in host.audit if a.kind == "sampling"]
    assert sorted(verdicts) == sorted(
        (n, v) for n in ("py", "ts") for v in ("approve", "edit", "deny")
    )
