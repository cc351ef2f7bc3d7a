"""mcpbind's own ``Client`` as the downstream client of a gateway (or of a plain server with the
same surface), for tests/interop/test_gateway_clients.py.

    python gateway_mcpbind_client.py PLAN_JSON

The plan and the JSON line printed are those of ``gateway_ts_client.mjs``. Every message the
client receives is recorded by a wrapper around its transport (stdio, or Streamable HTTP
through ``connect_http``); response headers are not seen at this level (``headers`` is empty).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio

from mcpbind import Client, McpError
from mcpbind import types as t
from mcpbind.client import ClientHandlers
from mcpbind.http import connect_http
from mcpbind.transports import StdioClientTransport, Transport
from mcpbind_types._common import RequestOptions

TIMEOUT = 30.0


class Recording:
    """A transport that keeps every message it receives."""

    def __init__(self, inner: Transport, received: list[Any]) -> None:
        self.inner = inner
        self.received = received

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)

    async def receive(self) -> bytes:
        message = await self.inner.receive()
        self.received.append(json.loads(message))
        return message

    async def aclose(self) -> None:
        await self.inner.aclose()


class Downstream:
    def __init__(self) -> None:
        self.received: list[Any] = []
        self.sampling: list[str] = []
        self.elicitations: list[dict[str, str]] = []
        self.answer: Literal["accept", "decline"] = "decline"

    async def sample(self, params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        self.sampling.append(" ".join(getattr(m.content, "text", "") for m in params.messages))
        return t.CreateMessageResult(
            role="assistant",
            model="mcpbind-model",
            content=t.TextContent(text="sampled by mcpbind"),
        )

    async def elicit(self, params: Any) -> t.ElicitResult:
        self.elicitations.append({"message": params.message, "answer": self.answer})
        if self.answer != "accept":
            return t.ElicitResult(action=self.answer)
        fields = params.requested_schema.properties or {}
        content: dict[str, str | int | float | bool | list[str]] = {
            name: True for name, field in fields.items() if field.type == "boolean"
        }
        return t.ElicitResult(action="accept", content=content)

    @asynccontextmanager
    async def transport(self, target: dict[str, Any]) -> AsyncIterator[Transport]:
        if "url" in target:
            async with connect_http(target["url"]) as http:
                yield Recording(http, self.received)
            return
        spawn = StdioClientTransport.spawn(
            target["command"], target["args"], env=target.get("env") or {}
        )
        async with spawn as stdio:
            yield Recording(stdio, self.received)


def outcome(result: t.CallToolResult) -> dict[str, Any]:
    text = " ".join(getattr(block, "text", "") for block in result.content)
    return {"text": text, "isError": result.is_error is True}


async def run(plan: dict[str, Any]) -> dict[str, Any]:
    down = Downstream()
    handlers = ClientHandlers(sampling=down.sample, elicitation=down.elicit)
    async with Client(down.transport(plan["target"]), handlers=handlers, timeout=TIMEOUT) as client:

        async def call(step: list[Any], options: RequestOptions | None = None) -> dict[str, Any]:
            try:
                return outcome(await client.call(step[0], step[1], options=options))
            except McpError as exc:
                return {"error": exc.message, "code": exc.code}

        out: dict[str, Any] = {"tools": [tool.name async for tool in client.iter_tools()]}
        out["calls"] = [{"name": step[0], **await call(step)} for step in plan["calls"]]

        updates: list[list[float | None]] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            updates.append([value, total])

        out["progress"] = await call(plan["progress"], RequestOptions(on_progress=progress))
        out["progress"]["updates"] = updates
        out["sample"] = {**await call(plan["sample"]), "requests": down.sampling}

        marker = anyio.Path(plan["cancel"][1]["marker"] + ".started")
        out["cancel"] = {"error": "no answer: cancelled"}
        async with anyio.create_task_group() as calls:

            async def cancel_when_started() -> None:
                while not await marker.exists():  # noqa: ASYNC110
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
        out["version"] = client.protocol_version
    out["received"] = down.received
    out["headers"] = []
    return out


if __name__ == "__main__":
    print(json.dumps(anyio.run(run, json.loads(sys.argv[1]))))
