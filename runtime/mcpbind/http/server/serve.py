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
from ...server.lifespan import STARTUP_FAILURE, LifespanClaim, LifespanError
from ._header_deadline import MAX_HEADER_SIZE, header_deadline_protocol
from .health import WithHealth
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
    redis: str | None = None,
    workers: int = 1,
    advertise_host: str | None = None,
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

    ``redis`` (else ``MCPBIND_REDIS_URL`` from the environment): join the cluster of workers
    sharing that Redis (``mcpbind.http.server.cluster``: resumable streams, change
    notifications and handshake-era sessions on any worker) and serve ``/healthz`` and
    ``/readyz``. ``workers``: that many processes (forked; POSIX) share the listening socket,
    each also listening on a port of its own at ``advertise_host`` (default: ``host``, or
    127.0.0.1 for a wildcard) where the others forward its sessions' requests; more than one
    needs ``redis``. SIGTERM to the parent stops every worker gracefully. A worker of a
    cluster stops by handing its streams back (``GET`` and listen streams end; their clients
    reconnect to the other workers and resume there), then lets the requests in flight run
    to their answers within ``shutdown_timeout``, then ends its sessions
    (``mcpbind.http.server.draining``).

    Once listening it prints one line to stderr, ``serving NAME on URL`` (``port=0``: the
    port the system chose). An address it cannot listen on (a port in use) raises
    ``OSError`` naming the address, before anything is served. A handler's uncaught
    exception is logged with its traceback on stderr unless the application configured
    logging itself (``mcpbind.server.logs``). A ``Server(lifespan=...)`` is started before
    it listens and stopped after the sessions end; one that fails at start prints one line
    and exits with status 3.
    """
    from ...server.logs import log_to_stderr
    from .cluster import redis_url

    log_to_stderr()

    url = redis_url(redis)
    if workers < 1:
        raise ValueError("workers must be at least 1")
    if workers > 1 and url is None:
        raise ValueError(
            "workers > 1 needs redis=URL (or MCPBIND_REDIS_URL): the workers share sessions, "
            "streams and notifications through it"
        )
    parser, event_loop = choose_stack(http, loop)
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
    # Bound here, not by uvicorn (which logs and exits the process): a clear error to raise,
    # and the port really listened on (port 0) for the line printed once serving.
    own = settings.get("uds") is None and settings.get("fd") is None
    sockets = [_bind(settings["host"], settings["port"])] if own else None
    internal = advertise_host or (host if host not in ("0.0.0.0", "::", "") else "127.0.0.1")

    def run(index: int) -> None:
        listen = list(sockets or ())
        advertise = None
        own: list[socket.socket] = []  # made here, closed here; the shared ones below
        try:
            if url is not None and listen:
                if workers > 1:  # the shared socket cannot name one worker: one of its own
                    own.append(_bind(internal, 0))
                    listen += own
                advertise = _url(listen[-1], "http", path, internal)
            _serve_one(
                server,
                settings,
                listen or None,
                path,
                url,
                advertise,
                index == 0,
                legacy_sse,
                options,
            )
        finally:
            for sock in own:
                sock.close()

    # Every socket is closed by the code that opened it, once: the shared listening socket
    # here, a worker's own in ``run``; ``_serve_one`` only serves on them.
    try:
        if workers == 1:
            run(0)
        else:
            from .workers import run_workers

            run_workers(workers, run)
    finally:
        for sock in sockets or ():
            sock.close()


def _serve_one(
    server: Server,
    settings: dict[str, Any],
    sockets: list[socket.socket] | None,
    path: str,
    redis: str | None,
    advertise: str | None,
    announce: bool,
    legacy_sse: bool,
    options: dict[str, Any],
) -> None:
    """Run one worker: the app (clustered through ``redis`` when given) under uvicorn, on
    ``sockets`` (closed by their opener, not here)."""
    import uvicorn

    from .draining import DrainingServer

    ready = None
    if redis is not None:
        from .cluster import RedisCluster

        cluster = RedisCluster(server, redis, advertise or "")
        options = {**cluster.app_options(), **options}
        ready = cluster.ready
    streamable = StreamableHTTPApp(server, path=path, **options)
    served: Any = with_legacy_sse(streamable) if legacy_sse else streamable
    app = served if redis is None else WithHealth(served, ready)
    config = uvicorn.Config(app, **settings)

    failed: list[LifespanError] = []
    # Held from before listening until the requests still running at shutdown are done (the
    # app's own hold ends with its sessions, before uvicorn waits for those requests).
    lifespan = LifespanClaim(server)

    class AnnouncingServer(DrainingServer):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            try:  # the server's lifespan before anything listens
                await lifespan.take()
            except LifespanError as exc:
                failed.append(exc)
                self.should_exit = True
                return
            await super().startup(sockets)
            if self.started and sockets and announce:
                url = _url(sockets[0], "https" if config.is_ssl else "http", path)
                print(f"serving {server.name} on {url}", file=sys.stderr, flush=True)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Streams handed back or sessions ended first (see .draining), then uvicorn waits.
            await super().shutdown(sockets)
            await lifespan.drop()

    AnnouncingServer(config, app).run(sockets)
    if failed:  # one line, nothing served (docs/snippets/exit-codes.md)
        print(failed[0], file=sys.stderr, flush=True)
        sys.exit(STARTUP_FAILURE)


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


def _url(sock: socket.socket, scheme: str, path: str, host: str | None = None) -> str:
    """The URL ``sock`` serves ``path`` at (named by ``host`` when given)."""
    bound, port = sock.getsockname()[:2]
    host = host or bound
    return f"{scheme}://[{host}]:{port}{path}" if ":" in host else f"{scheme}://{host}:{port}{path}"
