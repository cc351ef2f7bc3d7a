"""Plumbing for the stateless-era tests: a raw JSON-RPC peer and client factories."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import msgspec
from spec import helpers as spec_helpers

from mcpbind import Client
from mcpbind.server import ServerSession
from mcpbind.transports import StdioClientTransport, Transport, memory_pair
from mcpbind_types._common import decoder
from mcpbind_types.v2026_07_28 import types as v26

from .app import build

APP = str(Path(__file__).with_name("app.py"))
VERSION = "2026-07-28"
CAPS: dict[str, Any] = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": CAPS,
}
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def spawn(config: str = "dual") -> Any:
    # The spawned app imports the mcpbind under test (spawn passes on only a few variables,
    # so without this it is whatever the interpreter has installed).
    env = {"PYTHONPATH": os.pathsep.join(sys.path)}
    return StdioClientTransport.spawn(sys.executable, [APP, config], env=env)


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


def sampled(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "test-model",
        "stopReason": "endTurn",
    }


class Wire:
    """Speaks JSON-RPC itself; keeps the notifications that arrive before each response."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.notifications: list[dict[str, Any]] = []
        self._next = 1

    async def send(self, message: dict[str, Any]) -> None:
        await self.transport.send(json.dumps(message).encode())

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        meta: dict[str, Any] | None = META,
        request_id: int | str | None = None,
    ) -> dict[str, Any]:
        """Send a request (``meta`` merged into ``params._meta``) and return its response."""
        rid = request_id if request_id is not None else self._next
        self._next += 1
        body = dict(params or {})
        if meta is not None:
            body["_meta"] = {**meta, **body.get("_meta", {})}
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": body})
        return await self.response(rid)

    async def response(self, rid: int | str) -> dict[str, Any]:
        with anyio.fail_after(10):
            while True:
                message: dict[str, Any] = json.loads(await self.transport.receive())
                if "method" in message and "id" not in message:
                    self.notifications.append(message)
                elif message.get("id") == rid:
                    return message
                else:
                    raise AssertionError(f"unexpected message {message}")

    async def result(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        reply = await self.request(method, params, **kw)
        assert "result" in reply, reply
        return reply["result"]


@asynccontextmanager
async def raw(transport: str, config: str = "dual", **options: Any) -> AsyncIterator[Wire]:
    """A :class:`Wire` to the app, in memory (``options`` configure the server) or over stdio."""
    if transport == "stdio":
        assert not options, "stdio servers take no options"
        async with spawn(config) as stdio:
            yield Wire(stdio)
        return
    client_end, server_end = memory_pair()
    session = ServerSession(build(config, **options), server_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        try:
            yield Wire(client_end)
        finally:
            await client_end.aclose()
            tg.cancel_scope.cancel()


@asynccontextmanager
async def client(transport: str, config: str = "dual", **options: Any) -> AsyncIterator[Client]:
    """A ``Client`` to the app (``options`` are Client keywords)."""
    if transport == "stdio":
        async with spawn(config) as stdio, Client(stdio, **options) as c:
            yield c
    else:
        async with Client(build(config), **options) as c:
            yield c


class Recorder(spec_helpers.Recorder):
    """The spec tests' wire recorder, wrapped around the server's end of a transport."""

    def requests(self) -> list[dict[str, Any]]:
        return [m for m in self.received if "id" in m and "method" in m]


_SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schema" / VERSION / "schema.json").read_text()
)


def check_schema(definition: str, value: Any) -> None:
    """Validate ``value`` against the official 2026-07-28 JSON schema's ``definition``."""
    schema = {**_SCHEMA, "$ref": f"#/$defs/{definition}"}
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value), key=str)
    assert not errors, f"{definition}: {errors[0].message} at {list(errors[0].absolute_path)}"


def check_2026(type_: Any, result: Any) -> Any:
    """Decode ``result`` with the strict 2026-07-28 type: the wire shape is the schema's."""
    return decoder(type_).decode(msgspec.json.encode(result))


__all__ = [
    "CAPS",
    "META",
    "SERVER_INFO",
    "VERSION",
    "Recorder",
    "Wire",
    "accept",
    "check_2026",
    "check_schema",
    "v26",
]
