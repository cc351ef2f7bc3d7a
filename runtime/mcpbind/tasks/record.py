"""The stored state of one task, the same for every store and both protocol eras.

A task (2025-11-25 basic/utilities/tasks.mdx; the 2026-07-28 tasks extension, SEP-2663) is a
durable state machine: ``working`` -> ``input_required`` <-> ``working`` -> one of the terminal
``completed``, ``failed``, ``cancelled``. A record holds what a later ``tasks/get`` or
``tasks/result`` needs, whichever process or connection asks: the result or JSON-RPC error as
encoded JSON, outstanding input requests and the answers to them, and a heartbeat by which a
reader tells a running task from one whose process died.
"""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime
from typing import Any, Final, Literal

import msgspec

from mcpbind_types._common import raw_repr

__all__ = [
    "ACTIVE",
    "ANONYMOUS",
    "DEFAULT_MAX_FINISHED",
    "DEFAULT_MAX_FINISHED_PER_SCOPE",
    "NULL",
    "TERMINAL",
    "TaskRecord",
    "TaskStatus",
    "decode_record",
    "encode_record",
    "iso",
    "new_task_id",
    "raw",
]

NULL: Final = msgspec.Raw(b"null")
"""No result / no error (msgspec cannot decode ``Raw | None``)."""

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: Final[frozenset[str]] = frozenset({"completed", "failed", "cancelled"})
ACTIVE: Final[tuple[str, ...]] = ("working", "input_required")

ANONYMOUS: Final = ""
"""The scope of callers the server cannot tell apart: the task id is the only key. Not one
caller's scope, so per-scope caps do not apply to it (only the totals)."""

DEFAULT_MAX_FINISHED: Final = 10_000
"""Finished tasks a store keeps in all; the oldest finished beyond it are deleted early."""
DEFAULT_MAX_FINISHED_PER_SCOPE: Final = 1_000
"""Finished tasks a store keeps per scope (not :data:`ANONYMOUS`)."""


class TaskRecord(msgspec.Struct, kw_only=True):
    """One task. ``version`` increases on every write (optimistic concurrency in every store)."""

    task_id: str
    scope: str
    """Who may see it (a principal or a session); ``""`` when the server cannot tell callers
    apart (the task id, 128 random bits, is then the only key)."""
    method: str
    era: str
    """The protocol version the task was created under: its era (``versions.era_of``) picks
    the wire shapes."""
    status: TaskStatus = "working"
    status_message: str | None = None
    created_at: float = msgspec.field(default_factory=time.time)
    updated_at: float = 0.0
    ttl_ms: int | None = None
    poll_interval_ms: int = 500
    result: msgspec.Raw = msgspec.field(default_factory=lambda: NULL)
    """The underlying request's result, encoded JSON, or ``NULL`` (terminal ``completed``;
    2025-11-25 also keeps a tool's ``isError`` result under ``failed``)."""
    error: msgspec.Raw = msgspec.field(default_factory=lambda: NULL)
    """The JSON-RPC error object, encoded, or ``NULL`` (terminal ``failed``)."""
    input_requests: dict[str, msgspec.Raw] = msgspec.field(default_factory=dict)
    """Outstanding server-to-client requests by key: ``{"method": ..., "params": ...}``."""
    input_responses: dict[str, msgspec.Raw] = msgspec.field(default_factory=dict)
    """Answers delivered for keys still awaited by the running task."""
    cancel_requested: bool = False
    owner: str = ""
    """The process running it; with ``heartbeat_at`` it tells a live task from an orphan."""
    heartbeat_at: float = 0.0
    version: int = 0

    __repr__ = raw_repr  # its raw JSON as text, not <msgspec.Raw object at 0x...>

    def __post_init__(self) -> None:
        if not self.updated_at:
            self.updated_at = self.created_at

    @property
    def has_result(self) -> bool:
        return bytes(self.result) != b"null"

    @property
    def has_error(self) -> bool:
        return bytes(self.error) != b"null"

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expires_at(self) -> float | None:
        """Epoch seconds after which the task may be deleted (``None``: never)."""
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def expired(self, now: float | None = None) -> bool:
        end = self.expires_at()
        return end is not None and (time.time() if now is None else now) >= end


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(TaskRecord)


def encode_record(record: TaskRecord) -> bytes:
    return _ENCODER.encode(record)


def decode_record(data: bytes | str) -> TaskRecord:
    return _DECODER.decode(data)


def new_task_id() -> str:
    """128 random bits, URL-safe: unguessable (tasks.mdx §Security Considerations)."""
    return secrets.token_urlsafe(16)


def iso(ts: float) -> str:
    """ISO 8601 / RFC 3339 in UTC with millisecond precision (``createdAt``, ``lastUpdatedAt``)."""
    text = datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def raw(value: Any) -> msgspec.Raw:
    """``value`` encoded once, kept as JSON text in the record."""
    return msgspec.Raw(_ENCODER.encode(value))
