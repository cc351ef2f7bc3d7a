"""Restarting a server when its source changes, for ``mcpbind dev``, without the client
noticing more than a refreshed list.

Over HTTP (:func:`reload_http`) the server is a child process on a fixed port, restarted in
place: the client's next request carries a session id the new process does not know, gets
HTTP 404, and starts a new session (basic/transports.mdx §Session Management).

Over stdio (:class:`StdioRelay`) the client owns our stdin and stdout, so the relay keeps them
and restarts the server behind them: it keeps the client's ``initialize`` request and
``notifications/initialized``, replays both to each new server process (swallowing the
answer), then tells the client its lists changed (``notifications/tools/list_changed`` and
the like, for each capability the server declares) so that it lists them again. A request the
old process had not answered gets a JSON-RPC error saying the server reloaded; requests that
arrive during the restart wait for the new process. A server that fails to start (a syntax
error just saved) is reported on stderr, its requests answered with an error, and started
again at the next change. On the 2026-07-28 era there is no handshake to replay.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

import msgspec

from ..protocol import INTERNAL_ERROR
from .errors import EXIT_CONNECTION, CliFailure
from .watch import SourceWatcher

__all__ = ["POLL_SECONDS", "StdioRelay", "reload_http", "stop_process", "terminate_as_exit"]

#: How often the source folder is polled for changes.
POLL_SECONDS = 0.5

_LISTS = ("tools", "resources", "prompts")
_INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def _tell(message: str) -> None:
    """A line on stderr, which the Inspector shows as the server's own output."""
    print(f"mcpbind dev: {message}", file=sys.stderr, flush=True)


def stop_process(process: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """Ask ``process`` to stop (SIGTERM), kill it after ``grace`` seconds, reap it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def terminate_as_exit() -> Iterator[None]:
    """SIGTERM raises ``SystemExit`` while inside, so that the ``finally`` blocks stopping
    the child processes run (the default action would leave them behind)."""

    def exit_on_term(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, exit_on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _changes(watcher: SourceWatcher | None) -> list[str]:
    """The files changed, once they have stopped changing (an editor saves in steps)."""
    if watcher is None:
        return []
    changed = watcher.changed()
    while changed:
        time.sleep(0.1)
        more = watcher.changed()
        if not more:
            break
        changed = sorted({*changed, *more})
    return changed


def _describe(changed: list[str], watcher: SourceWatcher | None) -> str:
    root = watcher.root if watcher is not None else "."
    shown = ", ".join(os.path.relpath(p, root) for p in changed[:3])
    return shown + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")


# ---------------------------------------------------------------------------------- HTTP
def _wait_listening(process: subprocess.Popen[bytes], host: str, port: int) -> bool:
    """Whether the server accepts connections within 30 s (``False``: it exited first)."""
    deadline = time.monotonic() + 30
    while process.poll() is None and time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def reload_http(
    command: list[str],
    host: str,
    port: int,
    watcher: SourceWatcher | None,
    companion: Callable[[], subprocess.Popen[bytes]] | None = None,
) -> int:
    """Run the HTTP server ``command`` (it listens on ``host:port``), restarted on every
    change ``watcher`` reports, until interrupted; with ``companion`` (which starts the
    Inspector), until that process exits, whose status is returned."""
    server = subprocess.Popen(command)
    started: subprocess.Popen[bytes] | None = None
    try:
        if not _wait_listening(server, host, port):
            raise CliFailure(
                f"the server exited with status {server.returncode} before listening on "
                f"{host}:{port}",
                EXIT_CONNECTION,
            )
        started = companion() if companion is not None else None
        while started is None or started.poll() is None:
            time.sleep(POLL_SECONDS)
            changed = _changes(watcher)
            if changed:
                _tell(f"{_describe(changed, watcher)} changed: restarting the server")
                stop_process(server)
                server = subprocess.Popen(command)
                _wait_listening(server, host, port)
        return started.returncode
    finally:
        if started is not None:
            stop_process(started)
        stop_process(server)


# --------------------------------------------------------------------------------- stdio
def _key(request_id: Any) -> bytes:
    return msgspec.json.encode(request_id)


def _messages(decoded: Any) -> list[dict[str, Any]]:
    """The JSON-RPC messages of one line (a batch is a list of them, on 2025-03-26)."""
    items = decoded if isinstance(decoded, list) else [decoded]
    return [m for m in items if isinstance(m, dict)]


def _decode(line: bytes) -> list[dict[str, Any]]:
    try:
        return _messages(msgspec.json.decode(line))
    except msgspec.DecodeError:
        return []  # passed on as it is: the server answers it with a parse error


class StdioRelay:
    """Relays a client on ``client_in``/``client_out`` to the server ``command`` run as a
    child process, restarting the child whenever ``watcher`` reports a change (never without
    one)."""

    def __init__(
        self,
        command: list[str],
        watcher: SourceWatcher | None,
        client_in: IO[bytes],
        client_out: IO[bytes],
    ) -> None:
        self.command = command
        self.watcher = watcher
        self.client_in = client_in
        self.client_out = client_out
        self.restarts = 0
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._child: subprocess.Popen[bytes] | None = None
        #: Requests the current child has not answered: id (as JSON) -> nothing.
        self._pending: set[bytes] = set()
        #: The client's ``initialize`` request, replayed to each new child.
        self._initialize: dict[str, Any] | None = None
        self._initialized = False
        #: The id of the replayed ``initialize`` whose answer is awaited.
        self._replay_id: bytes | None = None
        #: Client lines held while the server restarts (``None``: pass them on).
        self._held: list[bytes] | None = None
        #: Why there is no server process to pass requests to (it exited by itself).
        self._down = "the server is not running"

    def run(self) -> None:
        """Relay until the client closes our stdin (or SIGTERM, with :func:`terminate_as_exit`)."""
        with self._lock:
            self._start()
        reader = threading.Thread(target=self._read_client, name="dev-client", daemon=True)
        reader.start()
        try:
            while not self._closed.wait(POLL_SECONDS):
                changed = _changes(self.watcher)
                if changed:
                    _tell(f"{_describe(changed, self.watcher)} changed: reloading")
                    self.restart()
        finally:
            with self._lock:
                child, self._child = self._child, None
            if child is not None:
                stop_process(child)

    def restart(self) -> None:
        """Stop the current server process and start another, carrying the session over."""
        with self._lock:
            old, self._child = self._child, None
            self._fail_pending("the server reloaded (its source changed) before answering")
            if self._held is None:
                self._held = []
        if old is not None:
            stop_process(old)
        with self._lock:
            self.restarts += 1
            self._start()

    # -- the child ------------------------------------------------------------------
    def _start(self) -> None:
        child = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._child = child
        threading.Thread(
            target=self._read_server, args=(child,), name="dev-server", daemon=True
        ).start()
        if self._initialize is None:
            self._release_held()
            return
        replay = {**self._initialize, "id": f"mcpbind-dev-reload-{self.restarts}"}
        self._replay_id = _key(replay["id"])
        self._send(msgspec.json.encode(replay) + b"\n")

    def _send(self, line: bytes) -> None:
        child = self._child
        assert child is not None and child.stdin is not None
        try:
            child.stdin.write(line)
            child.stdin.flush()
        except (BrokenPipeError, ValueError):  # it died; _read_server reports it
            pass

    def _release_held(self) -> None:
        held, self._held = self._held, None
        for line in held or ():
            self._to_server(line, _decode(line))

    def _read_server(self, child: subprocess.Popen[bytes]) -> None:
        assert child.stdout is not None
        for line in child.stdout:
            with self._lock:
                if child is self._child:
                    self._from_server(line)
        status = child.wait()
        with self._lock:
            if child is self._child:  # not stopped by a restart: it exited by itself
                self._child = None
                self._down = (
                    f"the server exited with status {status} (see its stderr); "
                    "save a fix to start it again"
                )
                _tell(self._down)
                self._fail_pending(self._down)
                for line in self._held or ():
                    self._refuse(_decode(line), self._down)
                self._held = self._replay_id = None

    def _from_server(self, line: bytes) -> None:
        messages = _decode(line)
        for message in messages:
            if "method" not in message and "id" in message:
                key = _key(message["id"])
                if key == self._replay_id:
                    self._resumed(message)
                    return
                self._pending.discard(key)
        self._to_client(line)

    def _resumed(self, answer: dict[str, Any]) -> None:
        """The new process answered the replayed ``initialize``: complete its handshake,
        pass on what the client sent meanwhile, and tell the client to list again."""
        self._replay_id = None
        if self._initialized:
            self._send(_INITIALIZED)
        self._release_held()
        result = answer.get("result")
        capabilities = result.get("capabilities") if isinstance(result, dict) else None
        for kind in _LISTS:
            if isinstance(capabilities, dict) and kind in capabilities:
                notification = {"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"}
                self._to_client(msgspec.json.encode(notification) + b"\n")

    # -- the client -----------------------------------------------------------------
    def _read_client(self) -> None:
        try:
            for line in self.client_in:
                messages = _decode(line)
                with self._lock:
                    self._note(messages)
                    if self._held is not None:
                        self._held.append(line)
                    elif self._child is None:
                        self._refuse(messages, self._down)
                    else:
                        self._to_server(line, messages)
        finally:
            self._closed.set()

    def _note(self, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            if message.get("method") == "initialize" and "id" in message:
                self._initialize = message
            elif message.get("method") == "notifications/initialized":
                self._initialized = True

    def _to_server(self, line: bytes, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            if "method" in message and "id" in message:
                self._pending.add(_key(message["id"]))
        self._send(line)

    def _to_client(self, line: bytes) -> None:
        try:
            self.client_out.write(line)
            self.client_out.flush()
        except (BrokenPipeError, ValueError):
            self._closed.set()

    def _refuse(self, messages: list[dict[str, Any]], why: str) -> None:
        for message in messages:
            if "method" in message and "id" in message:
                self._answer_error(_key(message["id"]), why)

    def _fail_pending(self, why: str) -> None:
        for key in sorted(self._pending):
            self._answer_error(key, why)
        self._pending.clear()

    def _answer_error(self, key: bytes, why: str) -> None:
        error = {"code": INTERNAL_ERROR, "message": why}
        answer = {"jsonrpc": "2.0", "id": msgspec.json.decode(key), "error": error}
        self._to_client(msgspec.json.encode(answer) + b"\n")
