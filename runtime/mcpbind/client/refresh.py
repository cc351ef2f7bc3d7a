"""``refresh_lists=True``: the server's full tool, resource and prompt lists kept on the client
(``client.tools``/``resources``/``prompts``), fetched after connecting and again whenever the
server says one changed. On 2026-07-28 list changes arrive only on a ``subscriptions/listen``
stream, so one is opened first (basic/patterns/subscriptions.mdx). Imported only with
``refresh_lists``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Final, Protocol

from ..protocol import McpError

if TYPE_CHECKING:
    from mcpbind_types import unified as t

    from .subscription import Subscription

__all__ = ["KINDS", "ListsOwner", "refetch", "start"]


class ListsOwner(Protocol):
    """What list refresh needs of its client (``Client``'s public API): the era, the
    server's declared capabilities, ``listen``, the paged lists, and where the lists and the
    listen stream are kept."""

    era: str | None
    tools: list[t.Tool] | None
    resources: list[t.Resource] | None
    prompts: list[t.Prompt] | None
    lists_subscription: Subscription | None

    def peer_has_capability(self, path: tuple[str, ...]) -> bool: ...

    async def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_uris: Sequence[str] = (),
    ) -> Subscription: ...

    def iter_tools(self) -> AsyncIterator[t.Tool]: ...

    def iter_resources(self) -> AsyncIterator[t.Resource]: ...

    def iter_prompts(self) -> AsyncIterator[t.Prompt]: ...


KINDS: Final = ("tools", "resources", "prompts")

logger = logging.getLogger("mcpbind.client")


async def start(client: ListsOwner) -> None:
    """Right after connecting: listen for changes (2026-07-28), then fetch every list."""
    if client.era == "stateless":
        await _listen_for_lists(client)  # before the first fetch: no change is missed
    for kind in KINDS:
        await _fetch(client, kind)


async def refetch(client: ListsOwner, kind: str) -> None:
    """After ``notifications/<kind>/list_changed``; a failure is logged, the old list kept."""
    try:
        await _fetch(client, kind)
    except McpError as exc:
        logger.warning("refreshing %s after list_changed failed: %s", kind, exc)


async def _listen_for_lists(client: ListsOwner) -> None:
    """Open a listen stream for every list the server says can change."""
    wanted = {kind: client.peer_has_capability((kind, "listChanged")) for kind in KINDS}
    if not any(wanted.values()):
        return
    try:
        client.lists_subscription = await client.listen(
            tools_list_changed=wanted["tools"],
            prompts_list_changed=wanted["prompts"],
            resources_list_changed=wanted["resources"],
        )
    except McpError as exc:  # a server without subscriptions: lists are fetched once
        logger.warning("cannot listen for list changes, lists will not refresh: %s", exc)


async def _fetch(client: ListsOwner, kind: str) -> None:
    """Fetch one full list (every page) into ``client.tools``/``resources``/``prompts``."""
    if not client.peer_has_capability((kind,)):
        return
    pages = {
        "tools": client.iter_tools,
        "resources": client.iter_resources,
        "prompts": client.iter_prompts,
    }
    items = [item async for item in pages[kind]()]
    setattr(client, kind, items)
