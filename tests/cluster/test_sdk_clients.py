"""The official SDKs' clients against a cluster (basic/transports.mdx, Streamable HTTP,
2025-11-25): the official Python SDK (``mcp``) and the TypeScript SDK run a whole
handshake-era session through haproxy round-robin over 2 and 4 workers sharing a Redis
session registry: initialize, calls, progress (basic/utilities/progress.mdx), a sampling
request (client/sampling.mdx) and an elicitation (client/elicitation.mdx) answered by the
client, a cancellation (basic/utilities/cancellation.mdx) that stops the call on the session's
owner, the GET stream carrying ``notifications/resources/updated`` (server/resources.mdx,
Subscriptions), and the DELETE that ends the session. Each request is tagged with the worker
that answered it (``x-test-worker``); consecutive requests land on different workers."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest

from .clients import Tags
from .processes import haproxy, workers

_SKIP = "the official MCP SDK (`mcp`, the `peers` extra) is not installed"
mt = pytest.importorskip("mcp.types", reason=_SKIP)
ClientSession = pytest.importorskip("mcp", reason=_SKIP).ClientSession
streamable_http_client = pytest.importorskip(
    "mcp.client.streamable_http", reason=_SKIP
).streamable_http_client

MCPDeprecationWarning = pytest.importorskip("mcp.shared.exceptions").MCPDeprecationWarning
ROOT = Path(__file__).resolve().parents[2]
TS_SCRIPT = Path(__file__).with_name("ts_session_client.mjs")
TS_SDK = ROOT / "bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk"
TIMEOUT = 20.0


def _check_roaming(sent: list[list[str]], count: int) -> None:
    tags = [worker for _method, worker in sent]
    assert "" not in tags, sent
    assert set(tags) == {f"w{i}" for i in range(count)}, sent
    # Round-robin hands each request to the next worker. A request these clients send while
    # another is in flight (the GET stream, a cancellation) may reach haproxy before the one
    # recorded ahead of it, so a few recorded neighbours can share a worker; a balancer that
    # kept a session on one worker, or chose at random, would give many such pairs.
    repeats = sum(a == b for a, b in itertools.pairwise(tags))
    assert len(tags) >= 10 and repeats <= 3, sent
    assert [m for m, _ in sent].count("GET") >= 1 and sent[-1][0] == "DELETE", sent


async def _python_session(url: str) -> tuple[dict[str, Any], Tags]:
    tags = Tags()
    seen: dict[str, Any] = {"asked": [], "progress": [], "notes": []}
    updated = anyio.Event()

    async def sample(context: Any, params: Any) -> Any:
        seen["asked"].append(params.messages[0].content.text)
        content = mt.TextContent(type="text", text="Paris")
        return mt.CreateMessageResult(role="assistant", content=content, model="test-model")

    async def elicit(context: Any, params: Any) -> Any:
        seen["asked"].append(params.message)
        return mt.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_message(message: Any) -> None:
        if isinstance(message, mt.ResourceUpdatedNotification):
            seen["notes"].append(message.params.uri)
            updated.set()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen["progress"].append(done)

    hooks = {"request": [tags.request], "response": [tags.response]}
    timeout = httpx.Timeout(TIMEOUT, read=60.0)
    async with (
        httpx.AsyncClient(timeout=timeout, event_hooks=hooks) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(
            read,
            write,
            read_timeout_seconds=TIMEOUT,
            sampling_callback=sample,
            elicitation_callback=elicit,
            message_handler=on_message,
        ) as session,
    ):
        with anyio.fail_after(60):
            init = await session.initialize()
            seen["version"] = init.protocol_version
            await anyio.sleep(0.5)  # the client opens its GET stream after the handshake
            seen["add"] = (await session.call_tool("add", {"a": 2, "b": 3})).content[0].text
            counted = await session.call_tool("count", {"to": 5}, progress_callback=progress)
            seen["count"] = counted.content[0].text
            seen["capital"] = (await session.call_tool("capital", {})).content[0].text
            seen["greet"] = (await session.call_tool("greet", {})).content[0].text
            first = anyio.Event()

            async def started(done: float, total: float | None, message: str | None) -> None:
                first.set()

            async with anyio.create_task_group() as tg:

                async def slow() -> None:
                    await session.call_tool("count", {"to": 200}, progress_callback=started)

                tg.start_soon(slow)
                await first.wait()
                tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled
            # The cancel travels to the session's owner through another worker: ask until
            # it has landed there.
            with anyio.move_on_after(10):
                while True:
                    stopped = await session.call_tool("cancellations", {})
                    seen["cancelled"] = stopped.structured_content
                    if seen["cancelled"] and seen["cancelled"]["result"]:
                        break
                    await anyio.sleep(0.1)
            with warnings.catch_warnings():  # a 2025-11-25 session: resources/subscribe is its way
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await session.subscribe_resource("mem://note")
            await session.call_tool("touch", {"uri": "mem://note"})
            await updated.wait()
    # leaving the client DELETEs the session
    return seen, tags


@pytest.mark.anyio
@pytest.mark.parametrize("count", [2, 4])
async def test_the_official_python_client_roams_over_workers(
    count: int, redis_url: str, tmp_path: Path
) -> None:
    options = {"redis_sessions": redis_url, "redis_events": redis_url}
    with workers(count, options=options) as ports, haproxy(ports, tmp_path) as url:
        seen, tags = await _python_session(url)
    assert seen["version"] == "2025-11-25"
    assert (seen["add"], seen["count"], seen["capital"]) == ("5", "5", "Paris")
    assert seen["greet"] == "Hello, Ada!"
    assert seen["asked"] == ["Capital of France?", "What is your name?"]
    assert seen["progress"] == [1, 2, 3, 4, 5]
    assert seen["cancelled"] == {"result": [200]}  # stopped on the owner, not run to the end
    assert seen["notes"][:1] == ["mem://note"]  # on the GET stream (no request of its own)
    deleted = [worker for method, worker in tags.sent if method == "DELETE"]
    assert len(deleted) == 1
    _check_roaming(tags.sent, count)


@pytest.mark.skipif(
    not TS_SDK.is_dir() or shutil.which("node") is None,
    reason="node or bench/rt/peers/ts/node_modules (the TypeScript SDK) is missing",
)
@pytest.mark.parametrize("count", [2, 4])
def test_the_typescript_client_roams_over_workers(
    count: int, redis_url: str, tmp_path: Path
) -> None:
    options = {"redis_sessions": redis_url, "redis_events": redis_url}
    with workers(count, options=options) as ports, haproxy(ports, tmp_path) as url:
        done = subprocess.run(
            ["node", str(TS_SCRIPT), str(TS_SDK), url],
            capture_output=True,
            text=True,
            timeout=90,
            env=dict(os.environ),
            check=False,
        )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["version"] == "2025-11-25"
    assert (out["add"], out["count"], out["capital"]) == ("5", "5", "Paris")
    assert out["greet"] == "Hello, Ada!"
    assert out["asked"] == ["Capital of France?", "What is your name?"]
    assert out["progress"] == [1, 2, 3, 4, 5]
    assert out["aborted"] is True and out["cancelled"] == {"result": [200]}
    assert out["updated"] == "mem://note"
    assert out["deleted"] == 200
    _check_roaming(out["sent"], count)
