"""The one table of quirks of the official MCP schemas, and the bookkeeping that keeps it honest.

Every entry says what it changes, why (one line) and which spec page says so. An entry that no
longer matches anything in a version it names fails generation: when upstream fixes a quirk, the
table must shrink with it.
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
HANDSHAKE = (V2024, V2025_03, V2025_06, V2025_11)
ALL = (*HANDSHAKE, V2026)


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
      result       -- ``target`` is a request definition; ``value`` is its result definition.
      name         -- ``target`` is ``Def.property`` of an inline object; ``value`` is its name.
      inherit      -- ``*.params._meta``: message params lacking ``_meta`` get the base one.
      lazy         -- ``Def.property``, an open JSON object the protocol only carries: kept as
                      undecoded JSON (``msgspec.Raw``) until read. A representation choice for
                      speed rather than a schema quirk, kept here so it is checked the same way.
    """

    kind: OverrideKind
    versions: tuple[str, ...]
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
        (V2025_06,),
        "ElicitResult/properties/content/additionalProperties/type",
        _NUMBER,
        "client/elicitation.mdx",
        (["string", "integer", "boolean"], ["string", "number", "boolean"]),
    ),
    Override(
        "patch",
        (V2025_11, V2026),
        "ElicitResult/properties/content/additionalProperties/anyOf/1/type",
        _NUMBER,
        "client/elicitation.mdx",
        (["string", "integer", "boolean"], ["string", "number", "boolean"]),
    ),
    Override(
        "patch",
        (V2026,),
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
        (V2025_06, V2025_11, V2026),
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
            ("Tool.outputSchema", (V2025_06, V2025_11, V2026), "server/tools.mdx#output-schema"),
            ("CallToolRequestParams.arguments", ALL, "server/tools.mdx#calling-tools"),
            (
                "CallToolResult.structuredContent",
                (V2025_06, V2025_11, V2026),
                "server/tools.mdx#structured-content",
            ),
        )
    ),
    # --- required fields that receivers must tolerate when absent ------------------------
    *(
        Override(
            "tolerate",
            (V2026,),
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
            (V2026,),
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
        (V2025_11, V2026),
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
            (V2026,),
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
    # --- results not derivable from names ------------------------------------------------
    *(
        Override(
            "result",
            vs,
            req,
            "returns the empty result; no `<Name>Result` definition exists",
            page,
            "EmptyResult",
        )
        for req, vs, page in (
            ("PingRequest", HANDSHAKE, "basic/utilities/ping.mdx"),
            ("SetLevelRequest", HANDSHAKE, "server/utilities/logging.mdx"),
            ("SubscribeRequest", HANDSHAKE, "server/resources.mdx#subscriptions"),
            ("UnsubscribeRequest", HANDSHAKE, "server/resources.mdx#subscriptions"),
        )
    ),
    # --- names of repeated inline shapes in the draft-07 schemas --------------------------
    *(
        Override(
            "name",
            (V2024,),
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
    """Hands out the overrides of one version and fails if any of them was never used."""

    def __init__(self, version: str, table: Iterable[Override] = OVERRIDES) -> None:
        self.version = version
        self._entries = [o for o in table if version in o.versions]
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

    def check_all_used(self) -> None:
        stale = [o for i, o in enumerate(self._entries) if i not in self._used]
        if stale:
            lines = "\n".join(f"  - [{o.kind}] {o.target}: {o.reason}" for o in stale)
            raise OverrideError(
                f"{len(stale)} override(s) no longer apply to schema {self.version}; "
                f"remove or fix them in codegen/mcpbind_codegen/overrides.py:\n{lines}"
            )


class OverrideError(Exception):
    """An override does not match the schema it is meant to fix."""
