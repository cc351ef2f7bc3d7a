"""A second process for test_auth_e2e_client_flow: connects with the tokens another process
stored (``FileTokenStore``), with a redirect handler that fails if an authorization is
attempted. Prints the subject the server saw. Usage: reuse_tokens.py MCP_URL TOKEN_FILE"""

from __future__ import annotations

import asyncio
import sys

import msgspec

from mcpbind import Client
from mcpbind.auth.client import FileTokenStore, OAuth


class NoBrowser:
    redirect_uri = "http://127.0.0.1:9/callback"

    async def __call__(self, authorization_url: str) -> str:
        raise SystemExit("a new authorization was started: the stored tokens were not reused")


async def main(url: str, path: str) -> None:
    auth = OAuth(redirect_handler=NoBrowser(), token_store=FileTokenStore(path), client_name="e2e")
    async with Client(url, auth=auth) as client:
        result = await client.call("whoami")
        print(msgspec.json.decode(result.structured_content)["subject"])  # type: ignore[arg-type]


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
