"""Round-trip bench client built on mcpbind: ``Client`` over stdio (spawning the server command
given after ``--``) or in memory (``Client(server)`` on an in-process ``echo_server``).

The call path is the typed stub, ``client.call_tool(CallToolRequestParams(...))``, as an
application would write it. See ``bench/rt/harness.py`` for the command line and output.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcpbind import Client
from mcpbind import types as t
from mcpbind.transports import StdioClientTransport

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/rt, for harness
from echo_server import build_server
from harness import Connector, EchoFn, main


def _echo_fn(client: Client) -> EchoFn:
    call_tool = client.call_tool

    async def echo(text: str) -> str:
        result = await call_tool(t.CallToolRequestParams(name="echo", arguments={"text": text}))
        block = result.content[0]
        if result.is_error is True or not isinstance(block, t.TextContent):
            raise RuntimeError(f"unexpected echo result: {result!r}")
        return block.text

    return echo


def make_connectors(args: argparse.Namespace) -> dict[str, Connector]:
    @asynccontextmanager
    async def stdio(server_cmd: list[str]) -> AsyncIterator[EchoFn]:
        async with (
            StdioClientTransport.spawn(server_cmd[0], server_cmd[1:]) as transport,
            Client(transport) as client,
        ):
            yield _echo_fn(client)

    @asynccontextmanager
    async def memory(server_cmd: list[str]) -> AsyncIterator[EchoFn]:
        async with Client(build_server()) as client:
            yield _echo_fn(client)

    return {"stdio": stdio, "memory": memory}


if __name__ == "__main__":
    main("mcpbind", make_connectors)
