"""The official Python SDK's equivalent of ``mcpbind ls SERVER`` (its ``mcp`` CLI has no such
command): connect to a stdio server, list its tools, resources, resource templates and
prompts, print their names. Used by ``bench/coldstart.py``.

    python bench/cold/official_ls.py python bench/rt/peers/official_py/echo_server.py
"""

from __future__ import annotations

import sys

import anyio
from mcp import Client, StdioServerParameters


async def main(command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(params) as client:  # its default mode, as a user writes it
        capabilities = client.server_capabilities
        lines = [f"tool {tool.name}" for tool in (await client.list_tools()).tools]
        if capabilities.resources is not None:
            lines += [f"resource {r.uri}" for r in (await client.list_resources()).resources]
            templates = (await client.list_resource_templates()).resource_templates
            lines += [f"template {r.uri_template}" for r in templates]
        if capabilities.prompts is not None:
            lines += [f"prompt {p.name}" for p in (await client.list_prompts()).prompts]
    print("\n".join(lines))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
