"""The client's handle on one ``subscriptions/listen`` opt-in (basic/patterns/subscriptions.mdx).

The listen request stays open in the background; the server's acknowledgment says which
notification types it agreed to, and the notifications themselves go to the application's
notification handler like any other. ``close()`` cancels the request (on HTTP that closes its
response stream); a successful listen result is the server's graceful end.
"""

from __future__ import annotations

from typing import Any

import anyio
import msgspec

from mcpbind_types import unified as t

__all__ = ["Subscription", "filter_from"]


def filter_from(value: Any) -> t.SubscriptionFilter | None:
    """The ``notifications`` filter of an acknowledgment, whatever shape it was decoded in."""
    if isinstance(value, t.SubscriptionFilter):
        return value
    try:
        return msgspec.convert(value, t.SubscriptionFilter)
    except msgspec.ValidationError:
        return None


class Subscription:
    """One subscription: what was asked, what the server agreed to, and whether it ended."""

    def __init__(self, requested: t.SubscriptionFilter) -> None:
        self.requested = requested
        #: The filter the server acknowledged (``None`` until it did).
        self.acknowledged: t.SubscriptionFilter | None = None
        #: ``io.modelcontextprotocol/subscriptionId``: the listen request's JSON-RPC id.
        self.id: int | str | None = None
        #: Why the subscription ended, if it did not end gracefully or by ``close()``.
        self.error: BaseException | None = None
        #: How many times the listen request was re-sent after its stream broke.
        self.reconnects = 0
        self._acked = anyio.Event()
        self._ended = anyio.Event()
        self._scope = anyio.CancelScope()

    @property
    def active(self) -> bool:
        return not self._ended.is_set()

    @property
    def closing(self) -> bool:
        """``close()`` was called: the listen request is cancelled, and not sent again."""
        return self._scope.cancel_called

    def acknowledge(self, subscription_id: int | str | None, agreed: t.SubscriptionFilter) -> None:
        self.id = subscription_id
        self.acknowledged = agreed
        self._acked.set()

    def end(self, error: BaseException | None = None) -> None:
        if error is not None and self.error is None:
            self.error = error
        self._ended.set()
        self._acked.set()  # nobody waits for an acknowledgment that cannot come

    async def wait_acknowledged(self) -> t.SubscriptionFilter:
        """The acknowledged filter; raises the subscription's error if it ended first."""
        await self._acked.wait()
        if self.acknowledged is None:
            raise self.error or RuntimeError("the subscription ended before it was acknowledged")
        return self.acknowledged

    async def wait_ended(self) -> None:
        await self._ended.wait()

    def new_scope(self) -> anyio.CancelScope:
        """A cancel scope for the next listen request (cancelled already if closed)."""
        cancelled = self._scope.cancel_called
        self._scope = anyio.CancelScope()
        if cancelled:
            self._scope.cancel()
        return self._scope

    def cancel(self) -> None:
        """Cancel the subscription; its listen request goes in the background."""
        self._scope.cancel()

    async def close(self) -> None:
        """Cancel the subscription and wait until its listen request is gone."""
        self.cancel()
        await self._ended.wait()
