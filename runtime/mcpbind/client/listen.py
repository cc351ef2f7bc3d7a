"""``Client.listen()``: opt-in change notifications (basic/patterns/subscriptions.mdx).

2026-07-28: a ``subscriptions/listen`` request kept open in the background, re-sent if its
stream breaks, matched to the server's acknowledgment by its id. Handshake era:
``resources/subscribe`` per URI, held until ``close()`` (list changes arrive anyway).
Imported on the first ``listen()``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import anyio

from mcpbind_types import unified as t
from mcpbind_types._common import RequestOptions
from mcpbind_types.unified import methods as m

from ..connection import PeerError
from ..protocol import McpError
from ..protocol.meta import SUBSCRIPTION_ID, with_meta
from ..transports.backoff import MIN_RECONNECT_DELAY, reconnect_delay
from .negotiation import mutual_version
from .pipeline import stream_lost
from .subscription import Subscription, filter_from

if TYPE_CHECKING:
    from ..connection import Connection
    from .pipeline import Pipeline

__all__ = ["Listener"]

_FOREVER: Final = 10 * 365 * 86400.0  # a listen request waits as long as the subscription lasts

#: Re-sending a broken listen request waits 0.1 s, doubling per break in a row up to 5 s (plus
#: jitter); a stream that stayed open this long (seconds) starts the count over.
_MAX_RELISTEN_DELAY: Final = 5.0
_STABLE_AFTER: Final = 10.0

logger = logging.getLogger("mcpbind.client")


Subscribe = Callable[[str], Awaitable[object]]
"""Handshake era: ``resources/subscribe`` (or ``resources/unsubscribe``) for one URI."""


class Listener:
    """A client's subscriptions: at most one listen request waits for its acknowledgment at
    a time, so an acknowledgment always belongs to the one waiting. On 2026-07-28 the listen
    requests go out on ``conn`` with the client's ``pipeline`` (its ``_meta``, its bound on
    re-sending, its version switch); on the handshake era (``pipeline`` is ``None``) resource
    subscriptions are held with ``subscribe`` and ``unsubscribe``."""

    def __init__(
        self,
        conn: Connection,
        pipeline: Pipeline | None,
        subscribe: Subscribe,
        unsubscribe: Subscribe,
    ) -> None:
        self._conn = conn
        self._pipeline = pipeline
        self._subscribe = subscribe
        self._unsubscribe = unsubscribe
        self._lock = anyio.Lock()
        self._awaiting_ack: Subscription | None = None

    async def open(
        self, wanted: t.SubscriptionFilter, meta: dict[str, Any] | None = None
    ) -> Subscription:
        """See :meth:`Client.listen`. ``meta``: the listen request's own ``_meta`` fields
        (over the client's; an extension's filter declares the extension there)."""
        uris = wanted.resource_subscriptions
        resource_uris = list(uris) if isinstance(uris, list) else []
        sub = Subscription(wanted)
        pipeline = self._pipeline
        if pipeline is None:
            for uri in resource_uris:
                await self._subscribe(uri)
            sub.acknowledge(None, wanted)
            self._conn.spawn(lambda: self._hold(sub, resource_uris))
            return sub
        self._conn.spawn(lambda: self._run(sub, pipeline, meta or {}))
        await sub.wait_acknowledged()
        return sub

    async def _run(self, sub: Subscription, pipeline: Pipeline, meta: dict[str, Any]) -> None:
        """Run the listen request until the server ends it, the caller closes it, or it fails
        (a broken stream is re-sent, ``max_reissues`` times in a row without an ack)."""
        conn = self._conn
        params = with_meta(
            m.C2S_SUBSCRIPTIONS_LISTEN,
            t.SubscriptionsListenRequestParams(meta=dict(meta), notifications=sub.requested),
            pipeline.meta.fields,
        )
        failures = 0
        streak = 0  # breaks in a row of streams that did not stay open: the wait doubles
        switched = False  # a -32022 is answered with another version once (versioning.mdx)
        try:
            while True:
                opened = anyio.current_time()
                with sub.new_scope():
                    async with self._lock:  # one unacknowledged listen at a time
                        self._awaiting_ack = sub
                    try:
                        await conn.request(
                            "subscriptions/listen", params, RequestOptions(timeout=_FOREVER)
                        )
                        return  # the server's graceful end
                    except PeerError as exc:
                        version = None if switched else mutual_version(exc)
                        if version is not None:
                            switched = True
                            params = pipeline.switch_version(params, version)
                            continue
                        acked_before = sub.id is not None
                        failures = 0 if acked_before else failures + 1
                        if not stream_lost(exc) or failures > pipeline.max_reissues or conn.closed:
                            sub.end(exc)
                            return
                        sub.reconnects += 1
                        sub.id = None
                        logger.info("the subscriptions/listen stream broke; listening again")
                    except McpError as exc:
                        sub.end(exc)
                        return
                if not sub.active or sub.closing:
                    return
                if anyio.current_time() - opened >= _STABLE_AFTER:
                    streak = 0
                # An acknowledgment does not reset the wait: a server acknowledging and then
                # breaking each stream at once must not get a listen request every 0.1 s.
                await anyio.sleep(
                    reconnect_delay(MIN_RECONNECT_DELAY, streak, cap=_MAX_RELISTEN_DELAY)
                )
                streak += 1
        finally:
            if self._awaiting_ack is sub:
                self._awaiting_ack = None
            sub.end()

    async def _hold(self, sub: Subscription, uris: list[str]) -> None:
        """Handshake era: hold the resource subscriptions until ``close()``."""
        try:
            with sub.new_scope():
                await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(McpError):
                for uri in uris:
                    if not self._conn.closed:
                        await self._unsubscribe(uri)
            sub.end()

    def acknowledged(self, params: Any) -> None:
        """Match an acknowledgment to the listen request waiting for one (subscriptions.mdx:
        its ``subscriptionId`` is that request's id)."""
        sub = self._awaiting_ack
        if sub is None:
            return
        meta = params.get("_meta") if isinstance(params, dict) else getattr(params, "meta", None)
        raw = params.get("notifications") if isinstance(params, dict) else params.notifications
        agreed = filter_from(raw)
        sid = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if agreed is None or not isinstance(sid, int | str):
            logger.warning("ignoring a malformed subscriptions acknowledgment: %r", params)
            return
        self._awaiting_ack = None
        sub.acknowledge(sid, agreed)
