"""``subscriptions/listen`` (basic/patterns/subscriptions.mdx): opt-in change notifications.

A transport opens a :class:`ListenSubscription` with :meth:`ListenHub.open` (which checks the
request like any other stateless request), sends ``acknowledgement()`` first, then every
message ``next()`` yields, all tagged with ``io.modelcontextprotocol/subscriptionId`` (the
listen request's id). Closing the stream (HTTP) or ``notifications/cancelled`` (stdio) ends
it; :meth:`ListenHub.close_all` ends them gracefully with the final ``subscriptions/listen``
result (Graceful Closure). The hub listens to ``Server.on_change`` only while it has
subscriptions, so an idle transport costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import decoder

from .._lazy import LazyModule
from ..protocol import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, McpError
from ..protocol.meta import SUBSCRIPTION_ID, MalformedMeta, parse_request_meta
from ..protocol.wire import encode_error, encode_notification, encode_result
from .dispatch import Reply, encoded, stateless_capabilities
from .principal import Principal, current_principal

if TYPE_CHECKING:
    import asyncio

    from .app import Server
else:  # imported when a loop first uses it, not with mcpbind (issue 15, cold start)
    asyncio = LazyModule("asyncio", globals())

__all__ = [
    "LISTEN",
    "MAX_LISTEN_URIS",
    "MAX_LISTEN_URI_CHARS",
    "MAX_SUBSCRIPTIONS",
    "ListenHub",
    "ListenSubscription",
]

LISTEN: Final = "subscriptions/listen"

MAX_SUBSCRIPTIONS: Final = 1000
"""Open listen streams per hub (an HTTP app, a stdio connection); more are refused."""
MAX_LISTEN_URIS: Final = 1000
"""``resourceSubscriptions`` entries one listen request may name."""
MAX_LISTEN_URI_CHARS: Final = 64 * 1024
"""Characters of all the ``resourceSubscriptions`` of one listen request together: an
unread stream holds its URIs for as long as it is open (1,000 URIs of 4 KB cost ~15.5 MB)."""

_LIST_CHANGED: Final = {
    "tools": ("toolsListChanged", "notifications/tools/list_changed"),
    "prompts": ("promptsListChanged", "notifications/prompts/list_changed"),
    "resources": ("resourcesListChanged", "notifications/resources/list_changed"),
}

_CORE_KEYS: Final = frozenset(
    {"toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions"}
)
"""The filter keys of the core protocol; any other agreed key is an extension's."""


class ListenSubscription:
    """One open listen stream: its id, the filter the server agreed to, pending messages."""

    def __init__(
        self,
        hub: ListenHub,
        request_id: int | str,
        agreed: dict[str, Any],
        principal: Principal | None = None,
        client: str | None = None,
    ) -> None:
        self.hub = hub
        self.id = request_id
        #: The address of the client that opened it (per-client cap), if known.
        self.client = client
        self.agreed = agreed
        #: Who listens (the request's authenticated caller): an extension sends it only what
        #: that caller may read.
        self.principal = principal
        self.uris: frozenset[str] = frozenset(agreed.get("resourceSubscriptions", ()))
        #: (list_changed kind, updated URI or extension change key; message, or an extension's
        #: change to render when taken); ``None`` ends the stream.
        self._queue: asyncio.Queue[tuple[str, bytes | tuple[str, str | None]] | None] = (
            asyncio.Queue()
        )
        #: Keys queued and not yet taken: a change already announced and unread is not queued
        #: again, so a reader that stops reading holds at most one message per kind, URI and
        #: extension change (the queue is bounded by the agreed filter, itself bounded; an
        #: extension's change is rendered when taken, so it shows the latest state).
        self._pending: set[str] = set()
        self.closed = False
        #: Ended by :meth:`end` with ``graceful=False``: no final result is written.
        self.handed_back = False

    def acknowledgement(self) -> bytes:
        """``notifications/subscriptions/acknowledged``: the first message on the stream."""
        return encode_notification(
            "notifications/subscriptions/acknowledged",
            {"_meta": {SUBSCRIPTION_ID: self.id}, "notifications": self.agreed},
        )

    def final_result(self) -> bytes:
        """The ``subscriptions/listen`` response that ends a subscription gracefully."""
        return encode_result(self.id, self.final_value())

    def final_value(self) -> dict[str, Any]:
        """That response's result."""
        return {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: self.id}}

    async def next(self) -> bytes | None:
        """The next notification, or ``None`` once the server ended the subscription."""
        while True:
            item = await self._queue.get()
            if item is None:
                return None
            self._pending.discard(item[0])  # a later change queues a fresh notification
            if isinstance(item[1], bytes):
                return item[1]
            data = await self.hub.render(self, *item[1])
            if data is not None:
                return data

    def offer(self, what: str, uri: str | None) -> None:
        """A change the server announced (``Server.on_change``): queue its notification when
        the agreed filter wants it and one for the same kind, URI or key is not queued yet."""
        if self.closed:
            return
        if what == "updated":
            if uri is not None and uri in self.uris and "\0" + uri not in self._pending:
                self._pending.add("\0" + uri)
                params = {"_meta": {SUBSCRIPTION_ID: self.id}, "uri": uri}
                data = encode_notification("notifications/resources/updated", params)
                self._queue.put_nowait(("\0" + uri, data))
            return
        entry = _LIST_CHANGED.get(what)
        if entry is None:
            key = f"\1{what}\0{uri or ''}"
            if not self.agreed.keys() <= _CORE_KEYS and key not in self._pending:
                self._pending.add(key)  # an extension's filter (taskIds)
                self._queue.put_nowait((key, (what, uri)))
            return
        if not self.agreed.get(entry[0]) or what in self._pending:
            return
        self._pending.add(what)
        data = encode_notification(entry[1], {"_meta": {SUBSCRIPTION_ID: self.id}})
        self._queue.put_nowait((what, data))

    def end(self, *, graceful: bool = True) -> None:
        """The server ends the subscription: ``next()`` returns ``None`` once the queued
        notifications are taken. ``graceful=False``: this process hands the stream back
        (one worker of several stops): the stream is to end without the final result, a
        transport drop after which the client listens again, on another worker
        (subscriptions.mdx, Graceful Closure)."""
        self.closed = True
        self.handed_back = not graceful
        self._queue.put_nowait(None)


class ListenHub:
    """The subscriptions of one transport endpoint (an HTTP app, a stdio connection).
    ``max_subscriptions``: open streams in all; ``max_per_client``: open streams one client
    address may hold (``None``: no per-client cap, e.g. stdio's one client)."""

    def __init__(
        self,
        server: Server,
        max_subscriptions: int = MAX_SUBSCRIPTIONS,
        max_per_client: int | None = None,
    ) -> None:
        self.server = server
        self.max_subscriptions = max_subscriptions
        self.max_per_client = max_per_client
        self.subscriptions: dict[int, ListenSubscription] = {}
        self._per_client: dict[str, int] = {}
        self._unsubscribe: Any = None

    def open(
        self, request_id: int | str, raw: msgspec.Raw | bytes | None, client: str | None = None
    ) -> ListenSubscription | Reply:
        """Check a ``subscriptions/listen`` request; an error :class:`Reply`, or the open
        subscription (already receiving changes: none is lost before the stream starts)."""
        try:
            return self.subscribe(request_id, raw, client)
        except McpError as exc:
            return Reply(encode_error(request_id, exc), exc.code, isinstance(exc, MalformedMeta))

    def streams_of(self, client: str) -> int:
        """Open streams of the client at that address."""
        return self._per_client.get(client, 0)

    def subscribe(
        self, request_id: int | str, raw: msgspec.Raw | bytes | None, client: str | None = None
    ) -> ListenSubscription:
        """:meth:`open`, with a refusal raised as :class:`McpError`."""
        if len(self.subscriptions) >= self.max_subscriptions:
            limit = self.max_subscriptions
            raise McpError(INVALID_REQUEST, f"Too many open {LISTEN} streams (limit {limit})")
        cap = self.max_per_client
        if cap is not None and client is not None and self.streams_of(client) >= cap:
            raise McpError(
                INVALID_REQUEST, f"Too many open {LISTEN} streams for this client (limit {cap})"
            )
        agreed = self._agree(raw or b"{}")
        sub = ListenSubscription(self, request_id, agreed, current_principal.get(), client)
        self.subscriptions[id(sub)] = sub
        if client is not None:
            self._per_client[client] = self.streams_of(client) + 1
        if self._unsubscribe is None:
            self._unsubscribe = self.server.on_change(self._changed)
        return sub

    def close(self, sub: ListenSubscription) -> None:
        """The client went away (or cancelled): forget the subscription, send nothing more."""
        sub.closed = True
        if self.subscriptions.pop(id(sub), None) is not None and sub.client is not None:
            left = self.streams_of(sub.client) - 1
            if left > 0:
                self._per_client[sub.client] = left
            else:
                self._per_client.pop(sub.client, None)
        if not self.subscriptions and self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def close_all(self) -> None:
        """Server shutdown: every stream gets its final result, then ends."""
        for sub in list(self.subscriptions.values()):
            sub.end()

    def hand_back_all(self) -> int:
        """This worker stops while others serve on: every stream ends without its final
        result, so each client listens again elsewhere. How many."""
        subs = list(self.subscriptions.values())
        for sub in subs:
            sub.end(graceful=False)
        return len(subs)

    def _changed(self, what: str, uri: str | None) -> None:
        for sub in list(self.subscriptions.values()):
            sub.offer(what, uri)

    async def render(self, sub: ListenSubscription, what: str, detail: str | None) -> bytes | None:
        """An extension's notification for ``sub``, tagged with its subscription id."""
        for extension in self.server.extensions:
            note = await extension.notification(what, detail, sub.agreed, sub.principal)
            if note is not None:
                method, params = note
                meta = {**(params.get("_meta") or {}), SUBSCRIPTION_ID: sub.id}
                return encode_notification(method, {**params, "_meta": meta})
        return None

    def _agree(self, raw: msgspec.Raw | bytes) -> dict[str, Any]:
        try:
            params = decoder(t.SubscriptionsListenRequestParams).decode(raw)
        except msgspec.ValidationError as exc:
            meta = _meta_of(raw)
            parse_request_meta(meta)  # a missing _meta is reported as such first
            raise McpError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        except msgspec.DecodeError as exc:
            raise McpError(PARSE_ERROR, f"Parse error: {exc}") from None
        meta = encoded(self.server).era.request_meta(params.meta)  # as for every request
        agreed = agreed_filter(self.server, params.notifications)
        if self.server.extensions:  # filter keys of extensions (the tasks extension's taskIds)
            wanted = _notifications_of(raw)
            for extension in self.server.extensions:
                agreed.update(extension.listen_filter(wanted, meta.client_capabilities))
        return agreed


def _notifications_of(raw: msgspec.Raw | bytes) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return {}
    wanted = value.get("notifications") if isinstance(value, dict) else None
    return wanted if isinstance(wanted, dict) else {}


def _meta_of(raw: msgspec.Raw | bytes) -> Any:
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    return value.get("_meta") if isinstance(value, dict) else None


def agreed_filter(server: Server, wanted: t.SubscriptionFilter) -> dict[str, Any]:
    """The subset of ``wanted`` this server honours (subscriptions.mdx, Acknowledgment):
    list changes of the kinds it serves, resource updates if it has resources."""
    caps = stateless_capabilities(server)
    has = {
        "tools": not isinstance(caps.tools, msgspec.UnsetType),
        "prompts": not isinstance(caps.prompts, msgspec.UnsetType),
        "resources": not isinstance(caps.resources, msgspec.UnsetType),
    }
    out: dict[str, Any] = {}
    if wanted.tools_list_changed is True and has["tools"]:
        out["toolsListChanged"] = True
    if wanted.prompts_list_changed is True and has["prompts"]:
        out["promptsListChanged"] = True
    if wanted.resources_list_changed is True and has["resources"]:
        out["resourcesListChanged"] = True
    uris = wanted.resource_subscriptions
    if isinstance(uris, list) and len(uris) > MAX_LISTEN_URIS:
        message = f"Invalid params: at most {MAX_LISTEN_URIS} resourceSubscriptions per listen"
        raise McpError(INVALID_PARAMS, message)
    if isinstance(uris, list) and sum(len(uri) for uri in uris) > MAX_LISTEN_URI_CHARS:
        message = (
            f"Invalid params: resourceSubscriptions may total at most {MAX_LISTEN_URI_CHARS} "
            "characters per listen"
        )
        raise McpError(INVALID_PARAMS, message)
    if isinstance(uris, list) and uris and has["resources"]:
        out["resourceSubscriptions"] = list(dict.fromkeys(uris))
    return out
