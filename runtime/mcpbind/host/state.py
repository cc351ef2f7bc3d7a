"""The Host's per-server record, its events and errors, and opening a server's transport.

A ``Handle`` is what the supervisor of one server keeps between connection attempts; opening
(``open_target``) spawns a stdio server, connects to an HTTP one (importing the ``http`` extra
only then), or serves an in-memory ``Server``.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from mcpbind_types import unified as t

from ..client import Client
from ..client.subscription import Subscription
from ..protocol import CONNECTION_CLOSED, INVALID_PARAMS, McpError
from ..server.app import Server
from ..transports import StdioClientTransport, Transport
from .catalog import ServerLists
from .config import ApprovalPolicy, ServerConfig

__all__ = [
    "AmbiguousResource",
    "Backoff",
    "Connector",
    "EventKind",
    "Handle",
    "HostError",
    "HostEvent",
    "ServerState",
    "ServerUnavailable",
    "StartError",
    "Status",
    "Target",
    "UnknownName",
    "describe",
    "open_http",
    "open_target",
    "start_error",
]

logger = logging.getLogger("mcpbind.host")

#: Opens a transport for a server the host cannot spawn itself (tests, custom transports).
Connector = Callable[[], AbstractAsyncContextManager[Transport]]
Target = ServerConfig | Server | Connector
#: ``failed``: given up (the command cannot be started, or too many failures in a row);
#: ``restart_server`` tries again.
Status = Literal["starting", "running", "backoff", "failed", "stopped"]
EventKind = Literal[
    "starting",
    "connected",
    "failed",
    "stderr",
    "disconnected",
    "retrying",
    "stopped",
    "catalog",
    "warning",
]


class HostError(McpError):
    """A request the host itself refuses (unknown name, server down); nothing was sent."""


class UnknownName(HostError):
    """No tool, prompt, resource, server or task of that name (-32602); nothing was sent."""

    def __init__(self, what: str, name: str, hint: str = "") -> None:
        super().__init__(INVALID_PARAMS, f"Unknown {what}: {name!r}{hint}", {"name": name})
        #: What was looked for (``tool``, ``prompt``, ``resource``, ``server``, ``task``) and
        #: the name given: a user interface words its own hint from them.
        self.what = what
        self.name = name


class AmbiguousResource(HostError):
    """More than one server lists or templates the URI: the caller must say which (-32602)."""

    def __init__(self, uri: str, servers: list[str]) -> None:
        super().__init__(
            INVALID_PARAMS,
            f"Resource {uri!r} is offered by {', '.join(servers)}; pass server=",
            {"servers": servers},
        )
        self.uri = uri
        self.servers = servers


class ServerUnavailable(HostError):
    """The server that would answer is not connected now (its status and last error say why)."""

    def __init__(self, server: str, status: str, error: str | None) -> None:
        detail = f" (last error: {error})" if error else ""
        super().__init__(CONNECTION_CLOSED, f"Server {server!r} is not connected: {status}{detail}")
        self.server = server


@dataclass(frozen=True, slots=True)
class HostEvent:
    kind: EventKind
    server: str
    message: str
    at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Retry delays: ``initial * factor**attempt`` seconds, at most ``maximum``. The count
    starts over once a server stayed connected ``reset_after`` seconds, so a server that
    crashes right after each handshake still backs off."""

    initial: float = 0.5
    factor: float = 2.0
    maximum: float = 30.0
    reset_after: float = 30.0
    #: Failed attempts in a row before the host gives up on a server (``None``: never).
    max_attempts: int | None = 6

    def delay(self, attempt: int) -> float:
        return min(self.maximum, self.initial * self.factor ** min(attempt, 64))


@dataclass(frozen=True, slots=True)
class ServerState:
    """A snapshot of one server for display."""

    name: str
    status: Status
    transport: str
    error: str | None
    connects: int
    pid: int | None
    server_info: t.Implementation | None
    notifications: int
    #: The negotiated protocol version (``None`` while not connected).
    protocol_version: str | None = None
    #: Failed attempts in a row (0 once connected for a while).
    attempts: int = 0
    #: The last stderr tail of a failed stdio server ("" if none).
    stderr: str = ""


@dataclass(eq=False)
class Handle:
    """One configured server: its settings, its supervisor's state, its current client."""

    name: str
    target: Target
    policy: ApprovalPolicy
    roots: list[t.Root] | None
    timeout: float | None
    max_message_size: int | None
    #: A pinned protocol version (``None``: negotiated, as ``Client(protocol_version="auto")``).
    protocol_version: str | None = None
    status: Status = "starting"
    client: Client | None = None
    lists: ServerLists = field(default_factory=ServerLists)
    error: str | None = None
    connects: int = 0
    pid: int | None = None
    notifications: int = 0
    stopping: bool = False
    restart: bool = False
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    wake: anyio.Event = field(default_factory=anyio.Event)
    settled: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    dirty: set[str] = field(default_factory=set)
    dirty_event: anyio.Event = field(default_factory=anyio.Event)
    #: 2026-07-28: the ``subscriptions/listen`` stream that carries list changes.
    subscription: Subscription | None = None
    #: How many times that stream was opened again after it ended.
    listens: int = 0
    attempts: int = 0
    stderr: str = ""
    logs: deque[t.LoggingMessageNotificationParams] = field(
        default_factory=lambda: deque(maxlen=200)
    )

    def stopped(self) -> bool:
        """Whether a stop was asked (a method: the flag changes while the supervisor awaits)."""
        return self.stopping

    @property
    def transport(self) -> str:
        if isinstance(self.target, ServerConfig):
            return self.target.transport
        return "memory" if isinstance(self.target, Server) else "custom"


@asynccontextmanager
async def open_target(handle: Handle) -> AsyncIterator[Transport | Server]:
    """The transport (or in-memory server) of one connection attempt; closed on exit."""
    target = handle.target
    if isinstance(target, Server):
        yield target
    elif isinstance(target, ServerConfig) and target.command is not None:
        extra: dict[str, Any] = {}
        if handle.max_message_size is not None:
            extra["max_message_size"] = handle.max_message_size
        command = sys.executable if target.command in ("python", "python3") else target.command
        async with contextlib.AsyncExitStack() as stack:
            try:
                process = await stack.enter_async_context(
                    StdioClientTransport.spawn(
                        command,
                        target.args,
                        env=target.env,
                        cwd=target.cwd,
                        on_stderr=lambda line: logger.debug("[%s stderr] %s", handle.name, line),
                        **extra,
                    )
                )
            except OSError as exc:
                raise start_error(exc, target.command, target.cwd) from None
            handle.pid = process.pid
            yield process
    elif isinstance(target, ServerConfig):
        async with open_http(handle.name, target, handle.max_message_size) as transport:
            yield transport
    else:
        async with target() as transport:
            yield transport


@asynccontextmanager
async def open_http(
    name: str, config: ServerConfig, max_size: int | None
) -> AsyncIterator[Transport]:
    """The Streamable HTTP client transport (falling back to HTTP+SSE for 2024-11-05 servers),
    imported only when a server has a ``url``: the ``http`` extra is needed only then.
    ``name``: the server's config name, which configuration errors name."""
    assert config.url is not None
    try:
        from ..http.client import connect_http
        from .auth import http_options
    except ImportError as exc:
        raise RuntimeError(
            f"{config.url} needs the http extra ({exc}): pip install 'mcpbind[http]'"
        ) from None
    options = http_options(name, config)
    if max_size is not None:
        options["max_message_size"] = max_size
    async with connect_http(config.url, **options) as transport:
        yield transport


class StartError(Exception):
    """A server process that could not be started at all; ``permanent``: retrying cannot
    help until the configuration changes."""

    def __init__(self, message: str, *, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


_PERMANENT = {
    errno.ENOENT: "not found",
    errno.EACCES: "permission denied",
    errno.ENOEXEC: "not an executable",
    errno.ENOTDIR: "not a directory",
}


def start_error(exc: OSError, command: str, cwd: str | None) -> StartError:
    """One line for ``Popen``'s error: which of command or working directory is wrong."""
    what = _PERMANENT.get(exc.errno or 0)
    if what is None:
        return StartError(f"cannot start {command!r}: {exc.strerror or exc}", permanent=False)
    if cwd is not None and exc.filename == cwd:
        return StartError(f"working directory {what}: {cwd!r}", permanent=True)
    return StartError(f"command {what}: {command!r}", permanent=True)


def describe(exc: BaseException) -> str:
    """One line for an event or an audit reason: McpErrors as is, others with their type."""
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return describe(exc.exceptions[0])
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, McpError) else f"{type(exc).__name__}: {text}"
