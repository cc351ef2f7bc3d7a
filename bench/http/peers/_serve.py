"""Shared runner for the Python peers of the HTTP benchmark: one uvicorn worker, one app.

Every Python server in ``bench/http/peers`` is served the same way so the comparison is only
between the apps: ``uvicorn.Server`` with one worker, no access log, the event loop
(``--loop asyncio|uvloop``) and HTTP parser (``--http h11|httptools``) picked on the command
line, on a listening socket inherited from the driver (``--fd N``, bound to 127.0.0.1 by
``run.py``, so there is no port race) or bound here (``--port P`` on 127.0.0.1).
Prints ``ready <mode>`` on stdout once the server accepts connections.
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Callable
from typing import Any

import uvicorn

__all__ = ["serve"]

AppFactory = Callable[[argparse.Namespace], tuple[Any, str]]


class _Server(uvicorn.Server):
    """A uvicorn server that says ``ready`` on stdout when it has started."""

    mode = "json"

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        print(f"ready {self.mode}", flush=True)


def serve(
    description: str,
    build_app: AppFactory,
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
) -> None:
    """Parse the common options, build the app with ``build_app(args)`` and serve it."""
    parser = argparse.ArgumentParser(description=description)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--fd", type=int, help="listening socket inherited from the driver")
    where.add_argument("--port", type=int, default=0, help="bind 127.0.0.1:PORT (0: any)")
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
    parser.add_argument(
        "--http",
        choices=("h11", "httptools", "h11-deadline", "serve_http"),
        default="h11",
        help="h11-deadline: mcpbind serve_http's h11 protocol (with a request-header deadline); "
        "serve_http: the parser and loop serve_http picks by default (--loop is ignored)",
    )
    if add_arguments is not None:
        add_arguments(parser)
    args = parser.parse_args()
    app, mode = build_app(args)
    http: Any = args.http
    loop = args.loop
    if http == "h11-deadline":
        from mcpbind.http.server.serve import header_deadline_protocol

        http = header_deadline_protocol(10.0)
    elif http == "serve_http":
        from mcpbind.http.server.serve import choose_stack, header_deadline_protocol

        parser_name, loop = choose_stack()
        http = header_deadline_protocol(10.0, parser_name)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=args.port,
        loop=loop,
        http=http,
        workers=1,
        lifespan="auto",
        access_log=False,
        log_level="warning",
        timeout_keep_alive=60,
    )
    server = _Server(config)
    server.mode = mode
    sockets = None
    if args.fd is not None:
        sockets = [socket.socket(fileno=args.fd)]
    server.run(sockets=sockets)
    sys.exit(0 if server.started else 1)
