"""The demo the README's first command runs: an mcpbind client talking to the two bundled
example servers over stdio, each spawned as its own process.

It lists each server's catalog and makes a few calls, printing what comes back. (The Host, which
aggregates servers behind one catalog with approval policies, builds on exactly this.)

    python -m examples.demo
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from mcpbind import Client, RequestOptions, json_value
from mcpbind import types as t
from mcpbind.transports import StdioClientTransport

ROOT = Path(__file__).resolve().parent.parent


def _text(result: t.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, t.TextContent))


async def _catalog(name: str, client: Client) -> None:
    info = client.server_info
    print(f"== {name}: {info.name if info else '?'} (protocol {client.protocol_version})")
    # Capabilities bind: listing what the server did not declare would raise before sending.
    if client.peer_has_capability(("tools",)):
        async for tool in client.iter_tools():
            print(f"   tool      {tool.name}: {tool.description or ''}")
    if client.peer_has_capability(("resources",)):
        async for resource in client.iter_resources():
            print(f"   resource  {resource.uri}")
        async for template in client.iter_resource_templates():
            print(f"   template  {template.uri_template}")
    if client.peer_has_capability(("prompts",)):
        async for prompt in client.iter_prompts():
            print(f"   prompt    {prompt.name}")


async def notes() -> None:
    async with (
        StdioClientTransport.spawn(sys.executable, ["-m", "examples.notes_server"], cwd=ROOT) as tr,
        Client(tr) as client,
    ):
        await _catalog("notes (stdio)", client)
        added = await client.call("add_note", {"title": "Demo", "body": "Written by the demo."})
        print(f"   add_note -> {json_value(added.structured_content)}")
        found = await client.call("search_notes", {"query": "demo"})
        print(f"   search_notes -> {_text(found)}")

        async def progress(done: float, total: float | None, message: str | None) -> None:
            print(f"   progress {done:g}/{total:g}" if total else f"   progress {done:g}")

        counted = await client.call(
            "slow_count", {"to": 3}, options=RequestOptions(on_progress=progress)
        )
        print(f"   slow_count -> {_text(counted)}")


async def files() -> None:
    args = ["-m", "examples.files_server", "--root", str(ROOT / "examples")]
    async with (
        StdioClientTransport.spawn(sys.executable, args, cwd=ROOT) as tr,
        Client(tr) as client,
    ):
        await _catalog("files (stdio)", client)
        listing = await client.call("list_dir", {"path": "."})
        print(f"   list_dir . -> {_text(listing)[:200]}")
        refused = await client.call("read_file", {"path": "../README.md"})
        print(f"   read_file ../README.md -> refused: {refused.is_error is True}")


async def main() -> None:
    await notes()
    await files()


if __name__ == "__main__":
    anyio.run(main)
