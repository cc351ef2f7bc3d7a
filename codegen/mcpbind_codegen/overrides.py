"""The one table of quirks of the official MCP schemas, and the bookkeeping that keeps it honest.

Every entry says what it changes, why (one line), which spec page says so, and the versions it
covers: a range over the pinned versions, usually open to every later one ("2025-06-18 and
later"). An entry applies where its target matches. Under a pinned version an entry in range that
matches nothing fails generation: when upstream fixes a quirk, the table must shrink with it.
Under any other label (a draft of the spec: ``draft-2026-03-31``), which counts as later than
every pinned version, each entry of an open range applies where it still matches and the others
are skipped, so a new schema gets every fix it still needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

OverrideKind = Literal[
    "patch", "open", "tolerate", "discriminate", "result", "name", "inherit", "lazy"
]

V2024 = "2024-11-05"
V2025_03 = "2025-03-26"
V2025_06 = "2025-06-18"
V2025_11 = "2025-11-25"
V2026 = "2026-07-28"
#: The pinned versions, oldest first (schema/manifest.json pins the same list; tested).
PINNED = (V2024, V2025_03, V2025_06, V2025_11, V2026)


@dataclass(frozen=True)
class Versions:
    """A range of versions: ``first`` up to ``last``; ``last=None`` is open to every later one."""

    first: str
    last: str | None = None

    def __post_init__(self) -> None:
        for v in (self.first, self.last):
            if v is not None and v not in PINNED:
                raise ValueError(f"version range bound {v!r} is not a pinned version")

    def covers(self, version: str) -> bool:
        """Whether ``version`` is in range; a label that is not pinned is later than all."""
        if version not in PINNED:
            return self.last is None
        i = PINNED.index(version)
        return PINNED.index(self.first) <= i and (self.last is None or i <= PINNED.index(self.last))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, str) and self.covers(version)

    @property
    def pinned(self) -> tuple[str, ...]:
        """The pinned versions in range."""
        return tuple(v for v in PINNED if self.covers(v))

    def __str__(self) -> str:
        if self.last is None:
            return f"{self.first} and later"
        return self.first if self.first == self.last else f"{self.first} to {self.last}"


def since(version: str) -> Versions:
    return Versions(version)


def only(version: str) -> Versions:
    return Versions(version, version)


ALL = since(V2024)


@dataclass(frozen=True)
class Override:
    """One quirk.

    kinds:
      patch        -- ``target`` is ``Def/json/pointer``; ``value`` is ``(expected, replacement)``.
      open         -- ``target`` is ``Def.property`` (``*`` for any definition): keep every key.
      tolerate     -- ``target`` is ``Def.property``, required in the schema; ``value`` is the
                      default taken when absent (``None``: optional with no default).
      discriminate -- ``target`` is a union (``Def`` or ``Def.property``); ``value`` is
                      ``(field, {value: member}, default member)``; the value ``"*"`` means
                      "the key is present, whatever its value".
      result       -- ``target`` is a request definition; ``value`` is its result definition,
                      where it differs from what the schema says (methods.py derives results).
      name         -- ``target`` is ``Def.property`` of an inline object; ``value`` is its name.
      inherit      -- ``*.params._meta``: message params lacking ``_meta`` get the base one.
      lazy         -- ``Def.property``, an open JSON object the protocol only carries: kept as
                      undecoded JSON (``msgspec.Raw``) until read. A representation choice for
                      speed rather than a schema quirk, kept here so it is checked the same way.
    """

    kind: OverrideKind
    versions: Versions
    target: str
    reason: str
    spec: str
    value: Any = None


_NUMBER = (
    "TypeScript `number` emitted as `integer` by --defaultNumberType integer; floats are valid"
)
_META = "`_meta` is an open map: vendor keys must survive decode -> encode"

OVERRIDES: tuple[Override, ...] = (
    # --- numbers -------------------------------------------------------------------------
    Override(
        "patch",
        only(V2025_06),
        "ElicitResult/properties/content/additionalProperties/type",
        _NUMBER,
        "client/elicitation.mdx",
        (["string", "integer", "boolean"], ["string", "number", "boolean"]),
    ),
    Override(
        "patch",
        since(V2025_11),
        "ElicitResult/properties/content/additionalProperties/anyOf/1/type",
        _NUMBER,
        "client/elicitation.mdx",
        (["string", "integer", "boolean"], ["string", "number", "boolean"]),
    ),
    Override(
        "patch",
        since(V2026),
        "JSONValue/anyOf/2/type",
        _NUMBER,
        "basic/index.mdx",
        (["string", "integer", "boolean"], ["string", "number", "boolean", "null"]),
    ),
    # --- open objects --------------------------------------------------------------------
    Override("open", ALL, "*._meta", _META, "basic/index.mdx#_meta"),
    Override(
        "open",
        ALL,
        "Tool.inputSchema",
        "a JSON Schema: every keyword ($defs, additionalProperties, ...) must be kept",
        "server/tools.mdx#tool",
    ),
    Override(
        "open",
        since(V2025_06),
        "Tool.outputSchema",
        "a JSON Schema: every keyword ($defs, additionalProperties, ...) must be kept",
        "server/tools.mdx#output-schema",
    ),
    Override(
        "inherit",
        ALL,
        "*.params._meta",
        "params `extends` the base params in schema.ts; the JSON schema dropped the inherited `_meta`",
        "basic/index.mdx#_meta",
    ),
    # --- free-form JSON kept undecoded until read ------------------------------------------
    *(
        Override(
            "lazy",
            vs,
            target,
            "free-form JSON mcpbind only carries: no intermediate dicts on decode",
            page,
        )
        for target, vs, page in (
            ("Tool.inputSchema", ALL, "server/tools.mdx#tool"),
            ("Tool.outputSchema", since(V2025_06), "server/tools.mdx#output-schema"),
            ("CallToolRequestParams.arguments", ALL, "server/tools.mdx#calling-tools"),
            (
                "CallToolResult.structuredContent",
                since(V2025_06),
                "server/tools.mdx#structured-content",
            ),
        )
    ),
    # --- required fields that receivers must tolerate when absent ------------------------
    *(
        Override(
            "tolerate",
            since(V2026),
            f"{d}.resultType",
            'absent `resultType` from an older server means "complete"',
            "basic/index.mdx#result-type",
            "complete",
        )
        for d in (
            "CacheableResult",
            "PaginatedResult",
            "InputRequiredResult",
            "DiscoverResult",
            "ListResourcesResult",
            "ListResourceTemplatesResult",
            "ReadResourceResult",
            "SubscriptionsListenResult",
            "ListPromptsResult",
            "GetPromptResult",
            "ListToolsResult",
            "CallToolResult",
            "CompleteResult",
        )
    ),
    *(
        Override(
            "tolerate",
            since(V2026),
            f"{d}.{f}",
            "cache hints are advisory: a result without them is simply not cacheable",
            "server/utilities/caching.mdx",
        )
        for d in (
            "CacheableResult",
            "DiscoverResult",
            "ListResourcesResult",
            "ListResourceTemplatesResult",
            "ReadResourceResult",
            "ListPromptsResult",
            "ListToolsResult",
        )
        for f in ("ttlMs", "cacheScope")
    ),
    # --- untagged unions -----------------------------------------------------------------
    Override(
        "discriminate",
        since(V2025_11),
        "ElicitRequestParams",
        "`mode` selects form or URL elicitation; absent `mode` means form",
        "client/elicitation.mdx#elicitation-modes",
        (
            "mode",
            {"form": "ElicitRequestFormParams", "url": "ElicitRequestURLParams"},
            "ElicitRequestFormParams",
        ),
    ),
    *(
        Override(
            "discriminate",
            since(V2026),
            f"{r}Response.result",
            '`resultType` selects the result shape; absent means "complete"',
            "basic/patterns/mrtr.mdx",
            ("resultType", {"input_required": "InputRequiredResult"}, f"{r}"),
        )
        for r in (
            "CallToolResult",
            "GetPromptResult",
            "ReadResourceResult",
        )
    ),
    *(
        Override(
            "discriminate",
            ALL,
            target,
            "text and blob contents differ only in which key is present: `blob` means blob",
            "server/resources.mdx#reading-resources",
            ("blob", {"*": "BlobResourceContents"}, "TextResourceContents"),
        )
        for target in ("EmbeddedResource.resource", "ReadResourceResult.contents")
    ),
    # --- names of repeated inline shapes in the draft-07 schemas --------------------------
    *(
        Override(
            "name",
            only(V2024),
            f"{d}.annotations",
            "the same inline shape repeated per content type; later versions name it",
            "server/resources.mdx#annotations",
            "Annotations",
        )
        for d in (
            "Annotated",
            "Resource",
            "ResourceTemplate",
            "TextContent",
            "ImageContent",
            "EmbeddedResource",
        )
    ),
)


class OverrideTracker:
    """Hands out the overrides in range of one version and keeps count of those that matched.

    Under a pinned version (``strict``) an override that does not match fails at once, and one
    never used fails ``check_all_used``; under any other label both are skipped and reported by
    ``skipped``.
    """

    def __init__(self, version: str, table: Iterable[Override] = OVERRIDES) -> None:
        self.version = version
        self.strict = version in PINNED
        self._entries = [o for o in table if o.versions.covers(version)]
        self._used: set[int] = set()

    def of_kind(self, kind: OverrideKind) -> Iterator[tuple[int, Override]]:
        for i, o in enumerate(self._entries):
            if o.kind == kind:
                yield i, o

    def find(self, kind: OverrideKind, target: str) -> Override | None:
        for i, o in self.of_kind(kind):
            if o.target == target:
                self._used.add(i)
                return o
        return None

    def use(self, index: int) -> None:
        self._used.add(index)

    def mismatch(self, override: Override, message: str) -> None:
        """``override`` was found but does not fit the schema: an error under a pinned version,
        else the override is skipped (the caller goes on as if there were none)."""
        if self.strict:
            raise OverrideError(message)
        self._used.discard(next(i for i, o in enumerate(self._entries) if o is override))

    @property
    def applied(self) -> list[Override]:
        return [o for i, o in enumerate(self._entries) if i in self._used]

    @property
    def skipped(self) -> list[Override]:
        return [o for i, o in enumerate(self._entries) if i not in self._used]

    def check_all_used(self) -> None:
        stale = self.skipped
        if stale and self.strict:
            lines = "\n".join(f"  - [{o.kind}] {o.target}: {o.reason}" for o in stale)
            raise OverrideError(
                f"{len(stale)} override(s) no longer apply to schema {self.version}; "
                f"remove or fix them in codegen/mcpbind_codegen/overrides.py:\n{lines}"
            )


class OverrideError(Exception):
    """An override does not match the schema it is meant to fix."""
