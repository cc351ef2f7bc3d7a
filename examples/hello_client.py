"""The getting-started client: start hello_server.py, list its tools, call one."""

import sys

import anyio

from mcpbind import Client, json_value


async def main(server: str) -> None:
    async with Client(server) as client:  # a .py file runs with this Python, over stdio
        print("tools:", [tool.name async for tool in client.iter_tools()])
        result = await client.call("greet", {"name": "MCP"})
        print("greet:", json_value(result.structured_content))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "examples/hello_server.py")
