"""``Client.listen()``: opt-in change notifications (basic/patterns/subscriptions.mdx).

2026-07-28: a ``subscriptions/listen`` request kept open in the background, re-sent if its
stream breaks, matched to the server's acknowledgment by its id. Handshake era:
``resources/subscribe`` per URI, held until ``close()`` (list changes arrive anyway).
Imported on the first ``listen()``.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any, Final

import anyio

from mcpbind_types import unified as t
from mcpbind_types._common import RequestOptions
from mcpbind_types.unified import methods as m

from ..connection import PeerError
from ..protocol import McpError
from ..protocol.meta import SUBSCRIPTION_ID, with_meta
from ..transports.backoff import MIN_RECONNECT_DELAY, reconnect_delay
from .negotiation import mutual_version, use_version
from .pipeline import stream_lost, with_version
from .subscription import Subscription, filter_from

if TYPE_CHECKING:
    from .client import Client

__all__ = ["Listener"]

_FOREVER: Final = 10 * 365 * 86400.0  # a listen request waits as long as the subscription lasts

#: Re-sending a broken listen request waits 0.1 s, doubling per break in a row up to 5 s (plus
#: jitter); a stream that stayed open this long (seconds) starts the count over.
_MAX_RELISTEN_DELAY: Final = 5.0
_STABLE_AFTER: Final = 10.0

logger = logging.getLogger("mcpbind.client")


class Listener:
    """A client's subscriptions: at most one listen request waits for its acknowledgment at
    a time, so an acknowledgment always belongs to the one waiting."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._lock = anyio.Lock()
        self._awaiting_ack: Subscription | None = None

    async def open(self, wanted: t.SubscriptionFilter) -> Subscription:
        """See :meth:`Client.listen`."""
        uris = wanted.resource_subscriptions
        resource_uris = list(uris) if isinstance(uris, list) else []
        sub = Subscription(wanted)
        client = self.client
        if client.era != "stateless":
            for uri in resource_uris:
                await client.subscribe(t.SubscribeRequestParams(uri=uri))
            sub.acknowledge(None, wanted)
            client._conn().spawn(lambda: self._hold(sub, resource_uris))
            return sub
        client._conn().spawn(lambda: self._run(sub))
        await sub.wait_acknowledged()
        return sub

    async def _run(self, sub: Subscription) -> None:
        """Run the listen request until the server ends it, the caller closes it, or it fails
        (a broken stream is re-sent, ``max_reissues`` times in a row without an ack)."""
        client = self.client
        conn = client._conn()
        params = with_meta(
            m.C2S_SUBSCRIPTIONS_LISTEN,
            t.SubscriptionsListenRequestParams(meta={}, notifications=sub.requested),
            client._meta,
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
                            use_version(client, conn.core, version)
                            params = with_version(client, params, version)
                            continue
                        acked_before = sub.id is not None
                        failures = 0 if acked_before else failures + 1
                        if not stream_lost(exc) or failures > client.max_reissues or conn.closed:
                            sub.end(exc)
                            return
                        sub.reconnects += 1
                        sub.id = None
                        logger.info("the subscriptions/listen stream broke; listening again")
                    except McpError as exc:
                        sub.end(exc)
                        return
                if not sub.active or sub._scope.cancel_called:
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
        client = self.client
        try:
            with sub.new_scope():
                await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(McpError):
                for uri in uris:
                    if not client._conn().closed:
                        await client.unsubscribe(t.UnsubscribeRequestParams(uri=uri))
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
