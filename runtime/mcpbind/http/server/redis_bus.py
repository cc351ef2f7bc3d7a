"""``RedisNotificationBus``: changes raised on one worker reach the clients of every worker.

A server's changes (``list_changed`` of tools, prompts and resources, ``resources/updated``,
and a task's status, ``notifications/tasks`` on 2026-07-28) go to everything listening to
``Server.on_change`` in its process: handshake-era sessions (their ``GET`` streams) and
2026-07-28 ``subscriptions/listen`` streams. The bus listens there
too, publishes each local change on a Redis pub/sub channel named after the server, and
replays the changes other workers publish through ``Server.changed``, so each worker's own
listeners send them to their own clients, in either era.

Pub/sub rather than Redis streams: a change notification is for the clients connected now,
at most once to each worker, and kept nowhere; a client that was away gets what it missed
from its own stream's event store. A stream would be a second, global copy nobody replays.

While Redis is down, changes stay local (logged once per outage) and the bus reconnects.

Not relayed, because they belong to one request or one session: progress and log messages
(``notifications/message``: the 2026-07-28 logging.mdx makes it request-scoped, never on a
listen stream; on the handshake era it goes to the session, whose requests are all served by
its owner), and a handshake-era task's ``notifications/tasks/status`` (sent to the session that
created the task, on its owner).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable
from typing import Any

from ..._lazy import lazy_logger
from ...server.app import Server

__all__ = ["RedisNotificationBus"]

logger = lazy_logger("mcpbind.http")

_LISTS = frozenset({"tools", "prompts", "resources", "updated"})
_RELAYED = _LISTS | {"task"}
"""The changes relayed: the lists, a resource's content, a task's status (its id). A task's
record lives in the shared task store (``RedisTaskStore``), so a worker that hears of the
change renders the notification from there for its own listeners."""

_MAX_OUTGOING = 10_000
"""Local changes waiting to be published; past it the oldest are dropped (and logged)."""


class RedisNotificationBus:
    """Relays ``server``'s changes between the workers sharing the Redis at ``url``; start
    it with :meth:`start` on the serving loop, end it with :meth:`aclose`."""

    def __init__(
        self,
        server: Server,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcpbind",
        timeout: float = 0.5,
    ) -> None:
        import redis.asyncio

        self.server = server
        self.channel = f"{prefix}:changes:{server.name}"
        self.origin = os.urandom(8).hex()
        self._redis: Any = redis.asyncio.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self._outgoing: asyncio.Queue[tuple[str, str | None]] = asyncio.Queue(_MAX_OUTGOING)
        self._tasks: list[asyncio.Task[None]] = []
        self._unsubscribe: Callable[[], object] | None = None
        self._relaying = False
        self._subscribed = asyncio.Event()

    @property
    def started(self) -> bool:
        return bool(self._tasks)

    async def start(self) -> None:
        """Subscribe (waiting up to the timeout for Redis) and start relaying. Changes made
        before the subscription is confirmed reach only this worker's clients."""
        if self._tasks:
            return
        self._unsubscribe = self.server.on_change(self._local)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._receive()), loop.create_task(self._publish())]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._subscribed.wait(), 2.0)

    async def aclose(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        await self._redis.aclose()

    def _local(self, what: str, uri: str | None) -> None:
        if self._relaying:
            return  # a change another worker published: it is not ours to publish again
        if self._outgoing.full():
            self._outgoing.get_nowait()
            logger.warning("notification bus: publishing falls behind; a change was dropped")
        self._outgoing.put_nowait((what, uri))

    async def _publish(self) -> None:
        down = False
        while True:
            what, uri = await self._outgoing.get()
            message = json.dumps({"o": self.origin, "w": what, "u": uri})
            try:
                await self._redis.publish(self.channel, message)
                down = False
            except (OSError, _redis_errors()) as exc:
                if not down:
                    logger.warning("notification bus: cannot publish (%s); changes stay local", exc)
                down = True

    async def _receive(self) -> None:
        pause = 0.05
        while True:
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                self._subscribed.set()
                pause = 0.05
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None:
                        self._relay(message["data"])
            except (OSError, _redis_errors()) as exc:
                logger.warning("notification bus: lost Redis (%s); reconnecting", exc)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)

    def _relay(self, data: bytes) -> None:
        try:
            change = json.loads(data)
            origin, what, uri = change["o"], change["w"], change["u"]
        except (ValueError, KeyError, TypeError):
            logger.warning("notification bus: ignored a malformed message on %s", self.channel)
            return
        if origin == self.origin or what not in _RELAYED:
            return
        detail = uri if isinstance(uri, str) else None
        self._relaying = True
        try:
            if what in _LISTS:
                self.server.changed(what, detail)
            else:  # an extension's: a task's status changed (its id)
                self.server.extension_changed(what, detail)
        finally:
            self._relaying = False


def _redis_errors() -> type[Exception]:
    import redis.exceptions

    return redis.exceptions.RedisError
