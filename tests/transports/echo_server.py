"""Echo server over StdioServerTransport, spawned by test_stdio_process.py.

Every message is echoed back unchanged, except commands starting with ``!`` that let
tests trigger edge cases. Usage: ``echo_server.py [max_message_size]``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import anyio

from mcpbind.transports import (
    DEFAULT_MAX_MESSAGE_SIZE,
    MessageTooLarge,
    StdioServerTransport,
    TransportClosed,
)


def command(name: str, arg: str) -> bytes:
    """Run one test command and return the reply."""
    if name == "noise":  # stray output that must not reach the wire
        print("garbage from print()")
        sys.stdout.flush()
        subprocess.run(["echo", "garbage from echo"], check=True)
        os.write(1, b"garbage from fd 1\n")
        return b"noise done"
    if name == "env":
        return json.dumps(dict(os.environ)).encode()
    if name == "cwd":
        return os.getcwd().encode()
    if name == "stderr":
        block = b"e" * 99 + b"\n"
        for _ in range(int(arg) // len(block)):
            os.write(2, block)
        return b"stderr done"
    if name == "big":
        return b"x" * int(arg)
    if name == "grandchild":
        child = subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL)
        return str(child.pid).encode()
    if name == "stubborn":  # ignore SIGTERM, and stdin EOF (see main)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return b"stubborn"
    if name == "exit":
        print("fatal: asked to exit", file=sys.stderr, flush=True)
        os._exit(int(arg))
    raise ValueError(f"unknown command {name!r}")


async def close_while_receiving(transport: StdioServerTransport) -> str:
    """Close the transport while a receive() is pending; return what that receive raised."""

    async def close_soon() -> None:
        await anyio.sleep(0.1)
        await transport.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(close_soon)
        try:
            await transport.receive()
        except TransportClosed as exc:
            return f"pending receive raised: {exc}"
    return "pending receive returned"


async def main() -> None:
    max_size = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_MAX_MESSAGE_SIZE
    stubborn = False
    async with StdioServerTransport(max_message_size=max_size) as transport:
        while True:
            try:
                message = await transport.receive()
            except MessageTooLarge as exc:
                await transport.send(json.dumps({"too_large": exc.seen}).encode())
                continue
            except TransportClosed:
                break
            if not message.startswith(b"!"):
                await transport.send(message)
                continue
            name, _, arg = message[1:].decode().partition(" ")
            if name == "restore":
                await transport.send(b"closing")
                print(f"stdout restored; {await close_while_receiving(transport)}", flush=True)
                return
            stubborn = stubborn or name == "stubborn"
            await transport.send(command(name, arg))
    if stubborn:
        await anyio.sleep_forever()


anyio.run(main)
