"""Round-trip bench client built on the official Python SDK (``mcp`` 2.x).

Uses the SDK's high-level ``mcp.Client`` (which wraps ``ClientSession``):

* ``--transport stdio``: ``Client(StdioServerParameters(...))`` spawns the server command
  given after ``--`` and talks newline-delimited JSON-RPC over its stdin/stdout.
* ``--transport memory``: ``Client(server)`` on an in-process ``echo_server.build_server()``;
  with ``--mode legacy`` that is the SDK's ``InMemoryTransport`` (anyio memory object
  streams carrying ``SessionMessage`` objects, full JSON-RPC dispatcher on both sides).

``--mode legacy`` (default) runs the ``initialize`` handshake, the protocol the TypeScript
SDK and the raw floor speak, so every row of the table does the same wire work. ``--mode
auto`` is the SDK default: it probes ``server/discover`` and, against a 2.x server, runs the
2026-07-28 per-request-envelope era; for an in-process server it skips JSON-RPC entirely
(``DirectDispatcher``), which is not a transport benchmark.

See ``bench/rt/harness.py`` for the command line and the JSON line printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/rt, for harness
from echo_server import build_server
from harness import Connector, EchoFn, main


def _echo_fn(client: Client) -> EchoFn:
    call_tool = client.call_tool

    async def echo(text: str) -> str:
        result = await call_tool("echo", {"text": text})
        block = result.content[0]
        if result.is_error or not isinstance(block, types.TextContent):
            raise RuntimeError(f"unexpected echo result: {result!r}")
        return block.text

    return echo


def make_connectors(args: argparse.Namespace) -> dict[str, Connector]:
    mode: str = args.mode

    @asynccontextmanager
    async def stdio(server_cmd: list[str]) -> AsyncIterator[EchoFn]:
        params = StdioServerParameters(
            command=server_cmd[0], args=server_cmd[1:], env=get_default_environment()
        )
        async with Client(params, mode=mode) as client:
            yield _echo_fn(client)

    @asynccontextmanager
    async def memory(server_cmd: list[str]) -> AsyncIterator[EchoFn]:
        async with Client(build_server(args.flavor), mode=mode) as client:
            yield _echo_fn(client)

    return {"stdio": stdio, "memory": memory}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mode",
        default="legacy",
        help="mcp.Client connect mode: legacy (initialize handshake, default) or auto",
    )
    parser.add_argument(
        "--flavor",
        choices=("lowlevel", "mcpserver"),
        default="lowlevel",
        help="in-process server flavour for --transport memory",
    )


def describe(args: argparse.Namespace) -> str:
    import mcp

    version = getattr(mcp, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version

        version = dist_version("mcp")
    server = f", server={args.flavor}" if args.transport == "memory" else ""
    return f"mcp {version} Client(mode={args.mode}){server}"


if __name__ == "__main__":
    main("official-py", make_connectors, add_arguments=add_arguments, describe=describe)
