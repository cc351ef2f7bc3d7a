"""The Host's servers under supervision: one task per server that connects, loads every list,
follows list changes, and retries with backoff when the server fails or dies.

Each server gets the era it speaks (``Client(protocol_version="auto")``: ``server/discover``,
then ``initialize`` for older servers), unless its configuration pins one. List changes arrive
unsolicited on the handshake era and on a ``subscriptions/listen`` stream on 2026-07-28
(basic/patterns/subscriptions.mdx), which is opened before the first fetch and opened again,
with backoff, whenever it ends while the server is still connected; both feed the same
debounced refresh. Sampling and elicitation reach the same hooks (:mod:`.gate`) in both eras.

The ``Host`` holds one :class:`Supervisor`: it keeps the server records (:class:`.state.Handle`),
the catalog built from their lists, and the events; it reads the Host's settings through
:class:`SupervisorSettings`. Events go to ``on_event`` and the ``mcpbind.host`` logger.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any, Protocol

import anyio
from anyio.abc import TaskGroup

from mcpbind_types import unified as t

from ..client import Client, ClientHandlers
from ..protocol import METHOD_NOT_FOUND, McpError
from ..versions import AUTO
from .catalog import Catalog, ServerLists
from .failures import Failure
from .gate import Gate
from .state import Backoff, EventKind, Handle, HostEvent, UnknownName, describe, open_target

__all__ = ["LISTS", "Supervisor", "SupervisorSettings"]

LISTS = ("tools", "resources", "prompts")
_NOT_RETRIED = "not retried: fix the configuration, then restart the server"

logger = logging.getLogger("mcpbind.host")


class SupervisorSettings(Protocol):
    """What a :class:`Supervisor` reads from its owner (the ``Host``; see it for each), at
    each use."""

    @property
    def backoff(self) -> Backoff: ...

    @property
    def refresh_interval(self) -> float: ...

    @property
    def client_name(self) -> str: ...

    @property
    def on_event(self) -> Callable[[HostEvent], object] | None: ...


class Supervisor:
    """Runs each server's connection attempts and keeps the catalog in step with them.

    ``handles``: every server by name, running or not; ``catalog``: the lists of the running
    ones; ``events``: the last thousand events. Open it (:meth:`open`) before adding a server.
    """

    def __init__(self, settings: SupervisorSettings, gate: Gate) -> None:
        self.settings = settings
        self.gate = gate
        self.handles: dict[str, Handle] = {}
        self.catalog = Catalog()
        self.events: deque[HostEvent] = deque(maxlen=1000)
        #: Told of every new catalog (``listener(old, new)``), e.g. a gateway's
        #: ``list_changed`` (:mod:`.gateway`).
        self.catalog_listeners: list[Callable[[Catalog, Catalog], object]] = []
        #: Awaited for every notification of every server (``listener(server, method,
        #: params)``): log messages, ``resources/updated``, list changes.
        self.notification_listeners: list[Callable[[str, str, Any], Awaitable[None]]] = []
        self._tg: TaskGroup | None = None

    # ------------------------------------------------------------------ the servers' tasks
    async def open(self) -> None:
        """Start the task group the servers run in."""
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg

    async def aclose(self) -> None:
        """Stop every server and wait for their tasks to end."""
        tg, self._tg = self._tg, None
        if tg is None:
            return
        for handle in self.handles.values():
            handle.stopping = True
        tg.cancel_scope.cancel()
        await tg.__aexit__(None, None, None)

    @property
    def running(self) -> bool:
        """Whether it is open: servers can be added."""
        return self._tg is not None

    def add(self, handle: Handle, *, start: bool = True) -> None:
        """Keep ``handle`` under its name, and start its server unless ``start`` is false (a
        server disabled in the configuration is listed, stopped)."""
        if self._tg is None:
            raise RuntimeError("the supervisor is not open")
        self.handles[handle.name] = handle
        if start:
            self._tg.start_soon(self._run, handle)

    def handle(self, name: str) -> Handle:
        """The record of server ``name`` (:class:`UnknownName` if there is none)."""
        handle = self.handles.get(name)
        if handle is None:
            raise UnknownName("server", name)
        return handle

    async def remove(self, name: str) -> None:
        """Stop server ``name``, wait for its task to end, and drop it and its lists."""
        handle = self.handle(name)
        handle.stopping = True
        handle.scope.cancel()
        await handle.done.wait()
        self.handles.pop(name, None)
        self.rebuild()

    def restart(self, handle: Handle) -> anyio.Event:
        """Ask a running server's task to close its session and connect again at once; the
        event is set when that attempt has connected or failed."""
        settled = handle.settled
        if settled.is_set():  # the current attempt is over: wait for the next one
            handle.settled = settled = anyio.Event()
        handle.restart = True
        handle.wake.set()
        return settled

    async def wait_settled(self, timeout: float | None = None) -> None:
        """Wait until every server's current start attempt has connected or failed."""
        events = [handle.settled for handle in self.handles.values()]
        with anyio.move_on_after(math.inf if timeout is None else timeout):
            for event in events:
                await event.wait()

    async def refresh(self, names: Iterable[str]) -> None:
        """Fetch every list again of the named servers that speak 2026-07-28 (through each
        client's cache, caching.mdx), then rebuild the catalog."""
        for name in names:
            handle = self.handle(name)
            client = handle.client
            if client is None or client.era != "stateless":
                continue
            for kind in LISTS:
                await self._load(handle, client, kind)
        self.rebuild()

    async def _run(self, handle: Handle) -> None:
        """The server's task: cancelling ``handle.scope`` (remove, host exit) ends it."""
        with handle.scope:
            try:
                await self._supervise(handle)
            finally:
                handle.client = None
                handle.settled.set()
                handle.done.set()
                if handle.status != "failed":
                    handle.status = "stopped"
                    self.emit("stopped", handle.name, "stopped")

    async def _supervise(self, handle: Handle) -> None:
        """Connect, serve until the connection ends, then restart at once (asked for) or after
        a backoff delay (a failure), until the server is stopped or the host gives up on it: a
        command that cannot be started, or ``backoff.max_attempts`` failures in a row."""
        last: Failure | None = None
        while not handle.stopping:
            handle.status = "starting"
            handle.wake = anyio.Event()
            self.emit("starting", handle.name, f"connecting ({handle.transport})")
            connected = False
            failure = Failure("closed")
            try:
                async with self._connect(handle) as client:
                    connected = True
                    since = anyio.current_time()
                    failure = Failure.of_reason(await self._serve(handle, client))
                    if anyio.current_time() - since >= self.settings.backoff.reset_after:
                        handle.attempts = 0  # it ran for a while: not a crash loop
            except Exception as exc:
                failure = Failure.of(exc)
            finally:
                handle.client = None
                handle.pid = None
                if handle.lists != ServerLists():
                    handle.lists = ServerLists()
                    self.rebuild()
            expected = handle.restart or handle.stopped()
            handle.error = None if handle.restart else failure.summary
            again = self._report(handle, failure, connected, expected, last)
            if not connected:
                handle.settled.set()
            if handle.stopped():
                return
            if handle.restart:
                handle.restart = False
                continue
            last = failure
            handle.attempts += 1
            if self._give_up(handle, failure):
                return
            delay = self.settings.backoff.delay(handle.attempts - 1)
            handle.status = "backoff"
            same = ", same error" if again else ""
            message = f"retrying in {delay:.2g}s (attempt {handle.attempts}{same})"
            self.emit("retrying", handle.name, message)
            with anyio.move_on_after(delay):
                await handle.wake.wait()
            handle.restart = False
            if handle.settled.is_set():
                handle.settled = anyio.Event()

    def _report(
        self,
        handle: Handle,
        failure: Failure,
        connected: bool,
        expected: bool,
        last: Failure | None,
    ) -> bool:
        """Report the end of an attempt: one line, and the server's stderr once per cause;
        the same cause again is only said in the retry line. True when it was the same."""
        if not expected and failure.same_as(last):
            handle.stderr = failure.stderr or handle.stderr
            return True
        kind: EventKind = "disconnected" if connected else "failed"
        message = failure.summary
        if failure.permanent:
            message += f" ({_NOT_RETRIED})"
        self.emit(kind, handle.name, message, level=logging.INFO if expected else None)
        if failure.stderr and not expected:
            handle.stderr = failure.stderr
            self.emit("stderr", handle.name, failure.stderr, level=logging.WARNING)
        return False

    def _give_up(self, handle: Handle, failure: Failure) -> bool:
        """Whether to stop retrying: retrying cannot help, or it failed too often in a row."""
        limit = self.settings.backoff.max_attempts
        if failure.permanent:
            handle.error = f"{failure.summary} (not retried)"
        elif limit is not None and handle.attempts >= limit:
            why = f"gave up after {handle.attempts} failed attempts; restart the server to retry"
            handle.error = f"{failure.summary} (gave up after {handle.attempts} attempts)"
            self.emit("failed", handle.name, why)
        else:
            return False
        handle.status = "failed"
        return True

    async def _serve(self, handle: Handle, client: Client) -> str:
        """Run one connected session until it closes or a restart is asked; say why it ended."""
        listening = False
        if client.era == "stateless":  # before the first fetch: no change is missed
            listening = await self._listen(handle, client, first=True)
        for kind in LISTS:
            await self._load(handle, client, kind)
        handle.client = client
        handle.status = "running"
        handle.error = None
        handle.connects += 1
        self.rebuild()
        info = client.server_info
        label = f"{info.name} {info.version}" if info else "?"
        self.emit("connected", handle.name, f"{label}, protocol {client.protocol_version}")
        self._check_policy_names(handle)
        handle.settled.set()
        connection = client.connection
        assert connection is not None
        async with anyio.create_task_group() as tg:

            async def until(wait: Callable[[], Any]) -> None:
                await wait()
                tg.cancel_scope.cancel()

            tg.start_soon(until, connection.wait_closed)
            tg.start_soon(until, handle.wake.wait)
            tg.start_soon(self._refresher, handle, client)
            if listening:
                tg.start_soon(self._keep_listening, handle, client)
        if connection.closed:
            return connection.close_reason or "connection closed"
        return "restart requested" if handle.restart else "stopped"

    def _check_policy_names(self, handle: Handle) -> None:
        """Warn about ``approval.tools`` entries that name no tool of the server: such a typo
        (or a host name such as ``notes__delete_note`` where ``delete_note`` is meant) would
        otherwise leave the tool under the default policy without a word."""
        known = {tool.name for tool in handle.lists.tools}
        unknown = sorted(set(handle.policy.tools) - known)
        if unknown:
            message = (
                f"approval.tools names no tool of this server: {', '.join(unknown)} "
                "(use the server's own tool names)"
            )
            self.emit("warning", handle.name, message, level=logging.WARNING)

    @asynccontextmanager
    async def _connect(self, handle: Handle) -> AsyncIterator[Client]:
        handlers = ClientHandlers(
            sampling=self.gate.sampling_for(handle.name),
            elicitation=self.gate.elicitation_for(handle.name),
            roots=handle.roots,
            logging=self._logging_for(handle),
            notification=self._notification_for(handle),
        )
        # "auto" unless pinned: the server's newest era. A refused sampling request goes back
        # to a handshake-era server as an error its tool reports; on 2026-07-28 the server is
        # not waiting, so the call just ends with that error (sampling.mdx §Error Handling).
        options: dict[str, Any] = {
            "name": self.settings.client_name,
            "handlers": handlers,
            "protocol_version": handle.protocol_version or AUTO,
        }
        options["timeout"] = handle.timeout if handle.timeout is not None else 60.0
        async with open_target(handle) as target, Client(target, **options) as client:
            yield client

    async def _load(self, handle: Handle, client: Client, kind: str) -> None:
        """Fetch one full list (all pages); a failure leaves the old list and is logged."""
        if not client.peer_has_capability((kind,)):
            return
        try:
            if kind == "tools":
                handle.lists.tools = [x async for x in client.iter_tools()]
            elif kind == "prompts":
                handle.lists.prompts = [x async for x in client.iter_prompts()]
            elif kind == "resources":
                handle.lists.resources = [x async for x in client.iter_resources()]
                handle.lists.templates = [x async for x in client.iter_resource_templates()]
        except McpError as exc:
            if client.connection is not None and client.connection.closed:
                raise
            logger.warning("server %r: listing %s failed: %s", handle.name, kind, exc)

    async def _listen(self, handle: Handle, client: Client, *, first: bool = False) -> bool:
        """Open a ``subscriptions/listen`` stream for the lists the server says can change;
        False when there is nothing to follow (or, the first time, the server refuses).
        A stream that cannot be opened later is retried by :meth:`_keep_listening`."""
        handle.subscription = None
        wanted = {k: client.peer_has_capability((k, "listChanged")) for k in LISTS}
        if not any(wanted.values()):
            return False
        try:
            with anyio.fail_after(handle.timeout or 60.0):
                handle.subscription = await client.listen(
                    tools_list_changed=wanted["tools"],
                    prompts_list_changed=wanted["prompts"],
                    resources_list_changed=wanted["resources"],
                )
        except (McpError, TimeoutError) as exc:
            if client.connection is not None and client.connection.closed:
                raise
            refused = isinstance(exc, McpError) and exc.code == METHOD_NOT_FOUND
            message = f"cannot listen for list changes: {describe(exc)}"
            self.emit("warning", handle.name, message, level=logging.WARNING)
            return not (first and refused)
        return True

    async def _keep_listening(self, handle: Handle, client: Client) -> None:
        """Open the listen stream again, with backoff, whenever it ends while the server is
        connected (subscriptions.mdx §Graceful Closure: the client MAY reconnect); changes
        made meanwhile were missed, so every list is fetched again once it is back."""
        connection = client.connection
        assert connection is not None
        failures = 0
        while True:
            since = anyio.current_time()
            sub = handle.subscription
            why = "it could not be opened"
            if sub is not None:
                await sub.wait_ended()
                if connection.closed or handle.stopping:
                    return  # the connection is ending: no reconnect, nothing to report
                why = describe(sub.error) if sub.error is not None else "the server ended it"
            if anyio.current_time() - since >= self.settings.backoff.reset_after:
                failures = 0
            delay = self.settings.backoff.delay(failures)
            failures += 1
            message = f"list-change stream ended ({why}); listening again in {delay:.2g}s"
            self.emit("warning", handle.name, message, level=logging.INFO)
            await anyio.sleep(delay)
            handle.listens += 1
            if await self._listen(handle, client) and handle.subscription is not None:
                handle.dirty.update(LISTS)
                handle.dirty_event.set()

    async def _refresher(self, handle: Handle, client: Client) -> None:
        """Refetch lists marked dirty by list_changed; a flood costs one refresh per interval."""
        while True:
            await handle.dirty_event.wait()
            handle.dirty_event = anyio.Event()
            kinds, handle.dirty = handle.dirty, set()
            for kind in sorted(kinds):
                await self._load(handle, client, kind)
            self.rebuild()
            await anyio.sleep(self.settings.refresh_interval)

    def rebuild(self) -> None:
        lists = {
            name: h.lists
            for name, h in self.handles.items()
            if h.status == "running" and not h.stopping
        }
        old, self.catalog = self.catalog, Catalog.build(lists)
        for listener in self.catalog_listeners:
            listener(old, self.catalog)
        self.emit("catalog", "*", f"{len(self.catalog.tools)} tools", log=False)

    def emit(
        self,
        kind: EventKind,
        server: str,
        message: str,
        *,
        log: bool = True,
        level: int | None = None,
    ) -> None:
        event = HostEvent(kind, server, message)
        self.events.append(event)
        if log:
            if level is None:
                level = logging.WARNING if kind in ("failed", "disconnected") else logging.INFO
            logger.log(level, "server %r %s: %s", server, kind, message)
        on_event = self.settings.on_event
        if on_event is not None:
            try:
                on_event(event)
            except Exception:
                logger.exception("on_event hook failed")

    # ------------------------------------------------------------------ server -> host
    def _notification_for(self, handle: Handle) -> Callable[[str, Any], Any]:
        async def on_notification(method: str, params: Any) -> None:
            handle.notifications += 1
            if method.endswith("/list_changed"):
                kind = method.split("/")[1]
                if kind in ("tools", "resources", "prompts"):
                    handle.dirty.add(kind)
                    handle.dirty_event.set()
            for listener in self.notification_listeners:
                await listener(handle.name, method, params)

        return on_notification

    def _logging_for(self, handle: Handle) -> Callable[[t.LoggingMessageNotificationParams], Any]:
        async def on_log(params: t.LoggingMessageNotificationParams) -> None:
            handle.logs.append(params)

        return on_log
