"""Who sees what a server offers: the listing rules of tools, resources, templates and
prompts (``scopes=``, ``visible=``, ``tags=``), what is switched off at run time
(``Server.disable``), and pages of a listing filtered per caller.

A rule is checked against the request's :class:`~mcpbind.server.context.Context` (its
principal, its session state): a listing shows an item only when the caller passes it, and a
call of an item the caller cannot see is refused as for an unknown one. Declared scopes hide
an item from the listings of callers whose principal lacks them (``Principal.has_scopes``,
the auth layer's own check, scopes implied by a ``scope_hierarchy`` included), unless
``Server(hide_ungranted=False)``; a call without them is refused 403 by the auth layer either
way (``mcpbind.auth.server``). A request no auth layer admitted has no principal, and nothing
refuses its calls: it sees scoped items listed, as it can call them.

Cursors of a filtered listing are positions in the server's whole list, not in the caller's
view: a page resumes after the last item the previous one looked at, so no item is skipped
or repeated when two callers (or one caller whose scopes changed) see different sets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from .context import Context

__all__ = ["Rule", "Switches", "make_rule", "page", "per_caller", "shown"]

Visible = Callable[["Context"], bool]
"""A custom listing rule: whether the caller of this request may see (and use) the item."""


class Rule(msgspec.Struct, frozen=True, gc=False):
    """What one item declared: its scopes, its ``visible`` predicate and its tags."""

    scopes: frozenset[str] = frozenset()
    visible: Visible | None = None
    tags: frozenset[str] = frozenset()


def make_rule(scopes: frozenset[str], visible: Visible | None, tags: Iterable[str]) -> Rule | None:
    """The rule of an item registered with these options (``None``: it declared none)."""
    tag_set = frozenset((tags,) if isinstance(tags, str) else tags)
    if not scopes and visible is None and not tag_set:
        return None
    return Rule(scopes, visible, tag_set)


class Switches(msgspec.Struct):
    """What is switched off at run time: items by key (``"tools/call <name>"``,
    ``"prompts/get <name>"``, ``"resources/read <uri or template>"``) and tags."""

    keys: set[str] = msgspec.field(default_factory=set)
    tags: set[str] = msgspec.field(default_factory=set)


def shown(
    rule: Rule | None, key: str, ctx: Context, switches: Switches, *, by_scopes: bool
) -> bool:
    """Whether the caller of ``ctx`` may see the item ``key`` (``by_scopes``: its declared
    scopes count too; a call leaves them to the auth layer)."""
    if key in switches.keys:
        return False
    if rule is None:
        return True
    if rule.tags and not rule.tags.isdisjoint(switches.tags):
        return False
    if by_scopes and rule.scopes:
        # No principal: no auth layer admitted this request (stdio, HTTP without one), and
        # none refuses its call either; the listing shows what the caller can call.
        principal = ctx.principal
        if principal is not None and not principal.has_scopes(rule.scopes):
            return False
    return rule.visible is None or bool(rule.visible(ctx))


def per_caller(rules: Iterable[Rule | None], *, by_scopes: bool) -> bool:
    """Whether a listing under these rules may differ from one caller to another (then it is
    not a shareable cache entry: server/utilities/caching.mdx, ``cacheScope``)."""
    return any(
        rule is not None and (rule.visible is not None or (by_scopes and bool(rule.scopes)))
        for rule in rules
    )


def page(
    items: Sequence[Any], keep: Callable[[int], bool], start: int, size: int
) -> tuple[list[Any], int | None]:
    """Up to ``size`` of ``items`` from position ``start`` that ``keep`` keeps, and the
    position the next page starts at (``None``: no kept item is left)."""
    found: list[Any] = []
    end = len(items)
    index = start
    while index < end and len(found) < size:
        if keep(index):
            found.append(items[index])
        index += 1
    # No cursor to an empty last page; the cursor itself stays right after this page, so a
    # caller who sees more by the next page (a stepped-up token) misses nothing.
    ahead = index
    while ahead < end and not keep(ahead):
        ahead += 1
    return found, index if ahead < end else None
