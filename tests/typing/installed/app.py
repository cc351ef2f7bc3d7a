# pyright: strict
"""A user's application, type-checked against an installed mcpbind (make typecheck-installed).

It uses ``mcpbind.Client``, ``mcpbind.types`` and ``notes_tools``, the module ``mcpbind bind``
writes for the bundled notes server. mypy --strict and pyright must each report exactly one
error: the line marked ``expected type error``. Anything else (a module they cannot find, an
``Any`` leaking out of a wrapper) is a failure. Run as ``python app.py SERVER`` it talks to the
server for real.
"""

from __future__ import annotations

import sys

import anyio
from notes_tools import AddNoteParams, AddNoteResult, McpbindNotesTools, SearchNotesParams

from mcpbind import Client
from mcpbind import types as t


async def titles(tools: McpbindNotesTools, query: str) -> list[str]:
    found = await tools.search_notes(SearchNotesParams(query=query))
    return [note.title for note in found.result]


async def tool_names(client: Client) -> list[str]:
    listed: t.ListToolsResult = await client.list_tools()
    return [tool.name for tool in listed.tools]


async def add(tools: McpbindNotesTools, title: str) -> AddNoteResult:
    return await tools.add_note(AddNoteParams(title=title, body="checked after install"))


async def misuse(tools: McpbindNotesTools) -> None:
    await tools.add_note(SearchNotesParams(query="x"))  # expected type error


async def main(server: str) -> None:
    async with Client(server) as client:
        tools = McpbindNotesTools(client)
        note = await add(tools, "Typed after install")
        print(note.id, await titles(tools, "typed"), await tool_names(client))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
