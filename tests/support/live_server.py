"""Test servers on 127.0.0.1, started and always stopped the same way everywhere (the one
live-server helper of the suite):

- ``LiveServer``: an ASGI app under uvicorn in a thread, on a free port;
- ``spawn_server``: a script that binds a free port itself and prints ``PORT <n>``;
- ``listening_process``: a command told which port to listen on;
- ``HandlerServer``: a plain ``http.server`` handler in a thread (non-MCP HTTP peers).

Processes are stopped by their PID, threads joined."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import uvicorn

__all__ = [
    "HandlerServer",
    "LiveServer",
    "answer_lifespan",
    "free_port",
    "listening_process",
    "serve_on_free_port",
    "spawn_server",
    "stop_process",
    "wait_listening",
]


def free_port() -> int:
    """A port free on 127.0.0.1 right now (for servers that must be told a port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_listening(
    port: int, process: subprocess.Popen[bytes] | None = None, timeout: float = 20.0
) -> None:
    """Return once 127.0.0.1:``port`` accepts a connection; fail at once if ``process`` (the
    server) has exited, or after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the server exited early with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError(f"nothing listening on 127.0.0.1:{port}") from None
            time.sleep(0.05)


def stop_process(process: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """SIGTERM ``process`` by its PID, SIGKILL it if it outlives ``grace``, reap it and close
    its pipes."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=grace)
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


@contextmanager
def spawn_server(script: str, *args: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Run ``python script *args`` (it prints ``PORT <n>`` once bound), wait until it listens
    and yield the process and its base URL; it is stopped by its PID on exit."""
    process = subprocess.Popen(
        [sys.executable, script, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        assert line.startswith("PORT "), f"server {' '.join(args)} did not start: {line!r}"
        port = int(line.split()[1])
        wait_listening(port, process)
        yield process, f"http://127.0.0.1:{port}"
    finally:
        stop_process(process)


@contextmanager
def listening_process(
    args: Sequence[str], port: int, **popen: Any
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``args``, a server told to listen on 127.0.0.1:``port``, wait until it listens and
    yield the process; it is stopped by its PID on exit. ``popen``: ``subprocess.Popen`` options."""
    process: subprocess.Popen[bytes] = subprocess.Popen(list(args), **popen)
    try:
        wait_listening(port, process)
        yield process
    finally:
        stop_process(process)


def serve_on_free_port(app: Any, log_level: str = "critical", port: int = 0) -> None:
    """Serve ``app`` with uvicorn on 127.0.0.1 and a free port (or ``port``, to restart a
    server where it was), printing ``PORT <n>`` first. The socket is bound here and handed to
    uvicorn, so the port cannot be taken in between."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level=log_level, lifespan="on", timeout_graceful_shutdown=1)
    uvicorn.Server(config).run(sockets=[sock])


async def answer_lifespan(receive: Any, send: Any) -> None:
    """The ASGI lifespan protocol for a hand-written test app: start, then stop, at once."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


class LiveServer:
    """uvicorn serving ``app`` on 127.0.0.1 in a thread; ``stop()`` shuts it down. ``http`` is
    uvicorn's ``http`` option (a parser name or a protocol class). Its port is bound here and
    the socket handed to uvicorn, so no other server (another pytest-xdist worker's) can take
    the port between choosing it and listening on it."""

    def __init__(self, app: Any, http: Any = "auto") -> None:
        self.app = app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            lifespan="on",
            log_level="critical",
            http=http,
            timeout_graceful_shutdown=1,  # a stream a failed test left open cannot hang stop()
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, args=([self.sock],), daemon=True)

    def start(self) -> Self:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()  # uvicorn closed it if it started; a server never started did not


class HandlerServer:
    """A stdlib ``http.server`` request handler served on 127.0.0.1 (a free port) in a thread,
    for plain HTTP peers that are not ASGI apps; ``stop()`` shuts it down."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port: int = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> Self:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
