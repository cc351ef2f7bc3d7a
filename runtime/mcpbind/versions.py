"""Protocol versions this runtime speaks, newest first, and what each one changes: its
:class:`Era` (basic/versioning.mdx).

The handshake era ("legacy" in the 2026-07-28 spec) negotiates once with ``initialize``; the
stateless era ("modern") carries the version in every request's ``_meta``. Code that behaves
differently per version asks the version's era (``era_of(version).input_rounds``) instead of
comparing version strings: a new protocol version is a new row of the table below, and the
version literals live in this module only (``tests/test_versions_seam.py``).
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = [
    "ALL_VERSIONS",
    "AUTO",
    "ERAS",
    "HANDSHAKE_VERSIONS",
    "HEADERLESS_VERSION",
    "LATEST_HANDSHAKE",
    "LATEST_STATELESS",
    "STATELESS_VERSIONS",
    "Era",
    "era_of",
    "is_stateless",
    "pinned_version",
]


# A NamedTuple, not a dataclass or a Struct: the CLI imports this module before msgspec, and a
# dataclass compiles source when it is defined (issue 15, cold start).
class Era(NamedTuple):
    """What one protocol version changes, as the runtime branches on it; each feature is off
    unless that version's spec turns it on (the page that says so is named per field)."""

    version: str
    stateless: bool = False
    """Per-request ``_meta`` and ``server/discover`` (basic/versioning.mdx, server/discover.mdx)
    instead of the ``initialize`` handshake (basic/lifecycle.mdx)."""
    input_rounds: bool = False
    """Multi round-trip requests: a result may be an ``InputRequiredResult``
    (basic/patterns/mrtr.mdx); there are no server-to-client requests."""
    result_types: bool = False
    """Every result carries ``resultType`` (basic/index.mdx §Responses)."""
    tasks_extension: bool = False
    """Tasks are the ``io.modelcontextprotocol/tasks`` extension (SEP-2663: ``tasks/update``,
    results inlined on ``tasks/get``, no client-side tasks) rather than the core tasks of
    basic/utilities/tasks.mdx (2025-11-25, the shape a handshake peer gets)."""
    batches: bool = False
    """JSON-RPC batches (basic/index.mdx §Batching; added in 2025-03-26, removed in the next)."""
    argument_errors_as_results: bool = False
    """Invalid tool arguments are a tool result with ``isError``, not a -32602 error
    (server/tools.mdx §Error Handling)."""
    json_schema_2020_12: bool = False
    """A schema without ``$schema`` is JSON Schema 2020-12 (basic/index.mdx §JSON Schema
    Usage); before, the spec names no default and its own schema is draft-07."""
    priming_events: bool = False
    """A Streamable HTTP server opens an SSE stream with an event id and empty data
    (basic/transports.mdx §Sending Messages to the Server), so the client can resume."""


_TABLE: Final = (
    Era(
        "2026-07-28",
        stateless=True,
        input_rounds=True,
        result_types=True,
        tasks_extension=True,
        argument_errors_as_results=True,
        json_schema_2020_12=True,
    ),
    Era(
        "2025-11-25",
        argument_errors_as_results=True,
        json_schema_2020_12=True,
        priming_events=True,
    ),
    Era("2025-06-18"),
    Era("2025-03-26", batches=True),
    Era("2024-11-05"),
)
"""Every version this runtime speaks, newest first: the one place to add a version."""

HANDSHAKE_VERSIONS: Final = tuple(era.version for era in _TABLE if not era.stateless)
"""The initialize-handshake era, newest first: the client offers the first one."""

LATEST_HANDSHAKE: Final = HANDSHAKE_VERSIONS[0]

STATELESS_VERSIONS: Final = tuple(era.version for era in _TABLE if era.stateless)
"""The stateless era (per-request ``_meta``, ``server/discover``, MRTR), newest first."""

LATEST_STATELESS: Final = STATELESS_VERSIONS[0]

ALL_VERSIONS: Final = STATELESS_VERSIONS + HANDSHAKE_VERSIONS
"""Every version, newest first: what ``server/discover`` advertises by default."""

HEADERLESS_VERSION: Final = "2025-03-26"
"""The version a Streamable HTTP server assumes for a request without ``MCP-Protocol-Version``
(2025-06-18 basic/transports.mdx §Protocol Version Header)."""


class _EraTable(dict[str | None, Era]):
    def __missing__(self, version: str | None) -> Era:
        return self[LATEST_HANDSHAKE]


_ERAS: Final = _EraTable({era.version: era for era in _TABLE})
_ERAS[None] = _ERAS[LATEST_HANDSHAKE]

era_of: Final = _ERAS.__getitem__
"""``era_of(version)``: the :class:`Era` of ``version``. ``None`` (nothing negotiated yet, or a
handler called outside a session) and a version this runtime does not speak get the newest
handshake version's, the version a server answers such an ``initialize`` with
(basic/lifecycle.mdx §Version Negotiation). The table's own lookup, no Python call: it is
asked on the hot path of every result."""

AUTO: Final = "auto"
"""The client's default: probe ``server/discover``, fall back to ``initialize`` (the era is
the server's choice; application code is the same in both)."""


def is_stateless(version: str | None) -> bool:
    """Whether ``version`` belongs to the stateless era."""
    return era_of(version).stateless


ERAS: Final = {"auto": None, "handshake": LATEST_HANDSHAKE, "stateless": LATEST_STATELESS}
"""The names a user may pin instead of a version: ``auto`` negotiates, an era its newest."""


def pinned_version(value: str | None) -> str | None:
    """A version to pin, as a user writes it: ``auto`` (or absent), an era (``handshake``,
    ``stateless``) or a version this runtime speaks; ``None`` means negotiate. Raises
    ``ValueError`` otherwise."""
    if value is None or value in ALL_VERSIONS:
        return value
    if value in ERAS:
        return ERAS[value]
    choices = ", ".join((*ERAS, *ALL_VERSIONS))
    raise ValueError(f"unknown protocol version {value!r}; one of {choices}")
