"""``serve_http``: run a ``Server`` over Streamable HTTP (and optionally the legacy HTTP+SSE
transport) with uvicorn (the ``http`` extra).

uvicorn bounds idle keep-alive connections but not a client that sends its request headers
slowly; ``serve_http`` adds that deadline (``header_timeout``) to whichever HTTP parser it
runs, and the application bounds the body (``body_timeout``, ``max_body_size``). It runs the
fast stack (uvloop + httptools) when installed: h11 costs 250-300 us more per request.
"""

from __future__ import annotations

import socket
import sys
from typing import Any, Literal

from ..._asyncio import LoopChoice, choose_loop, module_installed
from ...server.app import Server
from ._header_deadline import MAX_HEADER_SIZE, header_deadline_protocol
from .legacy_sse_app import with_legacy_sse
from .streamable_app import StreamableHTTPApp

__all__ = ["choose_stack", "header_deadline_protocol", "serve_http"]

HttpChoice = Literal["auto", "h11", "httptools"]
_installed = module_installed  # one name to replace in tests


def choose_stack(http: str = "auto", loop: str = "auto") -> tuple[str, str]:
    """The ``(http, loop)`` pair to run: ``"auto"`` picks httptools / uvloop when installed
    (uvloop not on Windows), else h11 / asyncio; a forced one that is missing is an error."""
    if http not in ("auto", "h11", "httptools"):
        raise ValueError(f"http must be 'auto', 'h11' or 'httptools', not {http!r}")
    loop = choose_loop(loop, installed=_installed)
    if http == "auto":
        http = "httptools" if _installed("httptools") else "h11"
    elif http == "httptools" and not _installed("httptools"):
        raise ImportError("http='httptools' needs httptools: pip install 'mcpbind[http]'")
    return http, loop


def serve_http(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    *,
    header_timeout: float = 10.0,
    max_header_size: int = MAX_HEADER_SIZE,
    shutdown_timeout: float = 2.0,
    http: HttpChoice = "auto",
    loop: LoopChoice = "auto",
    log_level: str = "warning",
    uvicorn_options: dict[str, Any] | None = None,
    legacy_sse: bool = False,
    **options: Any,
) -> None:
    """Serve ``server`` at ``http://host:port/path`` until interrupted.

    ``http`` picks uvicorn's HTTP/1.1 parser and ``loop`` its event loop (``"auto"``: httptools
    and uvloop when installed, see ``choose_stack``); both parsers get the header deadline
    and refuse a request line and headers over ``max_header_size`` bytes (64 KiB).
    ``options`` go to ``StreamableHTTPApp`` (``sessionless``, ``allowed_hosts``, ``event_store``,
    ``trusted_proxies``, ...; with ``trusted_proxies`` uvicorn's own proxy-header handling is
    off, so one rule decides the client address); ``uvicorn_options`` to ``uvicorn.Config`` (they override the settings here). Binds
    loopback by default: the Host and Origin allowlists then default to loopback names
    (DNS-rebinding protection). On SIGTERM the sessions are ended first (their SSE streams
    close), then requests still running get ``shutdown_timeout`` seconds before they are
    cancelled: uvicorn alone would wait for an open GET stream forever. ``legacy_sse=True``
    also serves the 2024-11-05 HTTP+SSE transport for old clients (``GET /sse``, ``POST
    /messages/``; see ``mcpbind.http.with_legacy_sse``).

    Once listening it prints one line to stderr, ``serving NAME on URL`` (``port=0``: the
    port the system chose). An address it cannot listen on (a port in use) raises
    ``OSError`` naming the address, before anything is served. A handler's uncaught
    exception is logged with its traceback on stderr unless the application configured
    logging itself (``mcpbind.server.logs``).
    """
    import uvicorn

    from ...server.logs import log_to_stderr

    log_to_stderr()

    parser, event_loop = choose_stack(http, loop)
    streamable = StreamableHTTPApp(server, path=path, **options)
    app = with_legacy_sse(streamable) if legacy_sse else streamable
    settings: dict[str, Any] = {
        "host": host,
        "port": port,
        "lifespan": "on",
        "log_level": log_level,
        # Access lines are INFO: below that level they are never printed, but uvicorn still
        # formats each one (about 10 us a request) unless the access log is off.
        "access_log": log_level in ("info", "debug", "trace"),
        "http": header_deadline_protocol(header_timeout, parser, max_header_size),
        "h11_max_incomplete_event_size": max_header_size,
        "loop": event_loop,
        "timeout_keep_alive": 5,
        "timeout_graceful_shutdown": shutdown_timeout,
    }
    if options.get("trusted_proxies") is not None:
        settings["proxy_headers"] = False  # the app reads X-Forwarded-For itself
    settings.update(uvicorn_options or {})

    config = uvicorn.Config(app, **settings)
    # Bound here, not by uvicorn (which logs and exits the process): a clear error to raise,
    # and the port really listened on (port 0) for the line printed once serving.
    sockets = None if config.uds or config.fd is not None else [_bind(config.host, config.port)]

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and sockets:
                url = _url(sockets[0], "https" if config.is_ssl else "http", path)
                print(f"serving {server.name} on {url}", file=sys.stderr, flush=True)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # uvicorn waits for running requests before the lifespan shutdown that would end
            # the sessions, and an open SSE stream never finishes on its own: stop accepting,
            # end the sessions (their streams close cleanly), then let uvicorn wait.
            for listener in self.servers:
                listener.close()
            await app.aclose()
            await super().shutdown(sockets)

    try:
        Server(config).run(sockets)
    finally:
        for sock in sockets or ():
            sock.close()


def _bind(host: str, port: int) -> socket.socket:
    """A socket bound as uvicorn binds one (``SO_REUSEADDR``, IPv6 for an address with a
    colon); ``OSError`` with the address in its message when that fails."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {reason}") from None
    sock.set_inheritable(True)
    return sock


def _url(sock: socket.socket, scheme: str, path: str) -> str:
    host, port = sock.getsockname()[:2]
    return f"{scheme}://[{host}]:{port}{path}" if ":" in host else f"{scheme}://{host}:{port}{path}"
