"""The official MCP Python SDK's client as the downstream client of a gateway (or of a plain
server with the same surface), for tests/interop/test_gateway_clients.py.

    python gateway_official_client.py PLAN_JSON

The plan and the JSON line printed are those of ``gateway_ts_client.mjs``: list every tool
(following nextCursor), make each call, answer sampling with a fixed model and text, accept
the elicitation asked during "approve" (every boolean field of the form set to
true) and decline the one asked during "refuse", cancel
"cancel" once its marker file says the tool started (the SDK sends ``notifications/cancelled``
when a caller abandons a request), and report every message received (raw) and, over HTTP,
every response header.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp.types as mt
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

TIMEOUT = 30.0


class Downstream:
    def __init__(self) -> None:
        self.received: list[Any] = []
        self.headers: list[dict[str, str]] = []
        self.sampling: list[str] = []
        self.elicitations: list[dict[str, str]] = []
        self.answer = "decline"

    async def sample(self, context: Any, params: mt.CreateMessageRequestParams) -> Any:
        self.sampling.append(
            " ".join(getattr(m.content, "text", "") for m in params.messages)  # type: ignore[union-attr]
        )
        return mt.CreateMessageResult(
            role="assistant",
            model="python-model",
            content=mt.TextContent(type="text", text="sampled by python"),
        )

    async def elicit(self, context: Any, params: Any) -> Any:
        self.elicitations.append({"message": params.message, "answer": self.answer})
        if self.answer == "accept":  # the approval form: every boolean field set to true
            schema = params.model_dump(by_alias=True).get("requestedSchema") or {}
            fields = (schema.get("properties") or {}).items()
            content = {name: True for name, field in fields if field.get("type") == "boolean"}
            return mt.ElicitResult(action="accept", content=content)
        return mt.ElicitResult(action=self.answer)  # type: ignore[arg-type]

    async def record(
        self, inner: MemoryObjectReceiveStream[Any], out: MemoryObjectSendStream[Any]
    ) -> None:
        async with inner, out:
            async for item in inner:
                message = getattr(item, "message", None)
                if message is not None:
                    self.received.append(message.model_dump(by_alias=True, mode="json"))
                await out.send(item)

    async def on_response(self, response: httpx2.Response) -> None:
        self.headers.append(dict(response.headers))


def outcome(result: mt.CallToolResult) -> dict[str, Any]:
    text = " ".join(getattr(block, "text", "") for block in result.content)
    return {"text": text, "isError": bool(result.is_error)}


@asynccontextmanager
async def connect(target: dict[str, Any], down: Downstream) -> AsyncIterator[Any]:
    """The transport's two streams: Streamable HTTP to ``url``, or stdio to ``command``."""
    if "url" not in target:
        params = StdioServerParameters(
            command=target["command"], args=target["args"], env=target.get("env")
        )
        async with stdio_client(params) as streams:
            yield streams
        return
    timeout = httpx2.Timeout(TIMEOUT, read=300)
    hooks = {"response": [down.on_response]}
    async with (
        httpx2.AsyncClient(timeout=timeout, event_hooks=hooks) as http,
        streamable_http_client(target["url"], http_client=http) as streams,
    ):
        yield streams


async def run(plan: dict[str, Any]) -> dict[str, Any]:
    down = Downstream()
    async with connect(plan["target"], down) as (read, write):
        send, recorded = anyio.create_memory_object_stream[Any](100)
        async with anyio.create_task_group() as group:
            group.start_soon(down.record, read, send)
            async with ClientSession(
                recorded,
                write,
                read_timeout_seconds=TIMEOUT,
                sampling_callback=down.sample,
                elicitation_callback=down.elicit,
                client_info=mt.Implementation(name="python-gateway-client", version="1.0.0"),
            ) as session:
                await session.initialize()
                out = await exercise(session, down, plan)
            group.cancel_scope.cancel()
    return out


async def exercise(
    session: ClientSession, down: Downstream, plan: dict[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": [], "calls": []}

    async def call(step: list[Any], **options: Any) -> dict[str, Any]:
        try:
            return outcome(await session.call_tool(step[0], step[1], **options))
        except MCPError as exc:
            return {"error": exc.error.message, "code": exc.error.code}

    cursor: str | None = None
    while True:
        page = await session.list_tools(
            params=None if cursor is None else mt.PaginatedRequestParams(cursor=cursor)
        )
        out["tools"] += [tool.name for tool in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    for step in plan["calls"]:
        out["calls"].append({"name": step[0], **await call(step)})

    updates: list[list[float | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        updates.append([value, total])

    out["progress"] = {**await call(plan["progress"], progress_callback=progress)}
    out["progress"]["updates"] = updates
    out["sample"] = {**await call(plan["sample"]), "requests": down.sampling}

    marker = plan["cancel"][1]["marker"]
    out["cancel"] = {"error": "no answer: cancelled"}
    async with anyio.create_task_group() as calls:

        async def cancel_when_started() -> None:
            while not await anyio.Path(marker + ".started").exists():  # noqa: ASYNC110
                await anyio.sleep(0.02)
            calls.cancel_scope.cancel()

        async def cancelled_call() -> None:
            out["cancel"] = await call(plan["cancel"])  # replaced only if it answers

        calls.start_soon(cancel_when_started)
        calls.start_soon(cancelled_call)

    down.answer = "accept"
    out["approve"] = await call(plan["approve"])
    down.answer = "decline"
    out["refuse"] = await call(plan["refuse"])
    out["elicitations"] = down.elicitations
    out["after"] = await call(plan["calls"][0])
    out["version"] = session.protocol_version
    out["received"] = down.received
    out["headers"] = down.headers
    return out


if __name__ == "__main__":
    print(json.dumps(anyio.run(run, json.loads(sys.argv[1]))))
