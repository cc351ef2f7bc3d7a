"""Round-trip bench client built on mcpbind: ``Client`` over stdio (spawning the server command
given after ``--``) or in memory (``Client(server)`` on an in-process ``echo_server``).

The call path is the typed stub, ``client.call_tool(CallToolRequestParams(...))``, as an
application would write it. See ``bench/rt/harness.py`` for the command line and output.
The era is pinned: by default the handshake one (``LATEST_HANDSHAKE``), what the other peers'
rows measure (official-py ``mode="legacy"``, the TS SDK), so the rows compare like for like;
``--protocol-version 2026-07-28`` pins the stateless era (per-request ``_meta``, no
``initialize``), compared with official-py ``--mode 2026-07-28``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcpbind import LATEST_HANDSHAKE, Client
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


def _check_era(client: Client, version: str) -> None:
    """A row labelled with a version must have measured that version's wire."""
    if client.protocol_version != version:
        raise RuntimeError(f"asked for {version}, connected with {client.protocol_version}")


def _server_env() -> dict[str, str]:
    """The spawned server imports the same mcpbind as this client: a spawned server inherits
    only a few variables, so without this a worktree's PYTHONPATH would be lost and the
    server would run the installed copy."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": path} if path else {}


def make_connectors(args: argparse.Namespace) -> dict[str, Connector]:
    version: str = args.protocol_version

    @asynccontextmanager
    async def stdio(server_cmd: list[str]) -> AsyncIterator[EchoFn]:
        async with (
            StdioClientTransport.spawn(
                server_cmd[0], server_cmd[1:], env=_server_env()
            ) as transport,
            Client(transport, protocol_version=version) as client,
        ):
            _check_era(client, version)
            yield _echo_fn(client)

    @asynccontextmanager
    async def memory(server_cmd: list[str]) -> AsyncIterator[EchoFn]:
        async with Client(build_server(), protocol_version=version) as client:
            _check_era(client, version)
            yield _echo_fn(client)

    return {"stdio": stdio, "memory": memory}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--protocol-version",
        default=LATEST_HANDSHAKE,
        help=f"protocol version the Client pins (default {LATEST_HANDSHAKE}; or 2026-07-28)",
    )


def describe(args: argparse.Namespace) -> str:
    return f"mcpbind Client(protocol_version={args.protocol_version})"


if __name__ == "__main__":
    main("mcpbind", make_connectors, add_arguments=add_arguments, describe=describe)
