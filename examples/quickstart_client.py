"""A client for quickstart_server.py: spawn it, call, read, get a prompt."""

import sys

import anyio

from mcpbind import Client, json_value
from mcpbind import types as t


async def main(server: str) -> None:
    async with Client(server) as client:  # "server.py", "python -m pkg", "https://.../mcp"
        tools = [tool.name async for tool in client.iter_tools()]
        print("tools:", tools)
        result = await client.call("add_note", {"id": "todo", "text": "write docs"})
        print("added:", json_value(result.structured_content))
        read = await client.read_resource(t.ReadResourceRequestParams(uri="notes://index"))
        first = read.contents[0]
        print("index:", first.text.split() if isinstance(first, t.TextResourceContents) else first)
        prompt = await client.get_prompt(t.GetPromptRequestParams(name="summarize"))
        print("prompt:", len(prompt.messages), "message(s)")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "examples/quickstart_server.py")
