"""What a ``Client`` connects to: a server string (spawned or reached as the CLI does, see
:mod:`mcpbind.transports.launch`), an in-process ``Server`` (an in-memory pair), a transport
factory such as ``connect_http(url, headers=...)``, or a transport used as given. The stdio,
HTTP and in-memory machinery is imported only for the target that needs it.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any, cast

from .._lazy import LazyModule

if TYPE_CHECKING:
    import anyio

    from ..launch import ServerLocation
    from ..server.app import Server
    from ..transports.base import Transport
else:  # imported when a loop first uses it, not with mcpbind (issue 15, cold start)
    anyio = LazyModule("anyio", globals())

__all__ = ["open_location", "open_target", "parse_location"]


def parse_location(text: str) -> ServerLocation:
    """A server string, parsed when the client is made so a bad command line fails there."""
    from ..launch import parse_server

    return parse_server(text)


async def open_location(
    location: ServerLocation, stack: contextlib.AsyncExitStack, auth: Any
) -> Transport:
    """Spawn or reach the server a string named (``auth``: the HTTP transport's)."""
    from ..launch import open_server

    return await stack.enter_async_context(open_server(location, auth=auth))


async def open_target(
    target: Server | Transport | contextlib.AbstractAsyncContextManager[Transport],
    stack: contextlib.AsyncExitStack,
) -> Transport:
    """The open transport to ``target``; what it opened is closed with ``stack``."""
    factory = target if isinstance(target, contextlib.AbstractAsyncContextManager) else None
    if factory is not None and not hasattr(factory, "send"):
        # A transport factory, such as connect_http(url, headers=...): opened here.
        opened: Transport = await stack.enter_async_context(factory)
        return opened
    # A Server is an instance of a loaded module: a client of a stdio or HTTP server never
    # imports the server side (issue 15, cold start).
    server_app = sys.modules.get("mcpbind.server.app")
    if server_app is not None and isinstance(target, server_app.Server):
        from ..server.lifespan import held
        from ..server.session import ServerSession
        from ..transports.memory import memory_pair

        await stack.enter_async_context(held(target))  # its lifespan, as serve() would
        client_end, server_end = memory_pair()
        session = ServerSession(target, server_end)
        tg = await stack.enter_async_context(anyio.create_task_group())
        tg.start_soon(session.run)
        stack.callback(tg.cancel_scope.cancel)
        return client_end
    return cast("Transport", target)  # a transport, perhaps also a context manager: as given
