"""The client's per-request ``_meta`` on 2026-07-28 (basic/index.mdx): the protocol version,
the client's capabilities and info, and the log level (logging.mdx, 2026-07-28: a level per
request), with their JSON encoded once and again only after one of them changed.

One :class:`OutgoingMeta` per ``Client``: negotiation says which version it names, the pipeline
sends it with every request, ``listen`` and the tasks extension start from its fields.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..protocol.meta import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION

__all__ = ["OutgoingMeta"]


class OutgoingMeta:
    """The per-request ``_meta`` fields of one client and their encoded JSON."""

    __slots__ = ("_client", "_fields", "_level", "encoded")

    def __init__(self, log_level: str | None = None) -> None:
        self._client: dict[str, Any] = {}
        self._fields: dict[str, Any] = {}
        self._level = log_level
        #: The fields sent (the log level included) and their JSON, once :meth:`wire` encoded
        #: them; ``None`` after a change. Read it, never assign it: the pipeline's shortest
        #: path takes it as it is.
        self.encoded: tuple[dict[str, Any], msgspec.Raw] | None = None

    def introduce(self, capabilities: object, info: object) -> None:
        """The client's capabilities and ``Implementation`` (Structs or dicts), sent with every
        version named from now on."""
        self._client = {
            CLIENT_CAPABILITIES: msgspec.to_builtins(capabilities),
            CLIENT_INFO: msgspec.to_builtins(info),
        }

    def use_version(self, version: str) -> None:
        """Name protocol ``version`` (and the ``MCP-Protocol-Version`` header it becomes)."""
        self._fields = {PROTOCOL_VERSION: version, **self._client}
        self.encoded = None

    @property
    def fields(self) -> dict[str, Any]:
        """The fields without the log level (a request's own ``_meta`` starts from them)."""
        return self._fields

    @property
    def log_level(self) -> str | None:
        """Sent as ``io.modelcontextprotocol/logLevel`` with every request when set."""
        return self._level

    @log_level.setter
    def log_level(self, level: str | None) -> None:
        self._level = level
        self.encoded = None

    def wire(self) -> tuple[dict[str, Any], msgspec.Raw]:
        """The fields sent (with the log level, if any) and their JSON: encoded once, and
        again only after the version or the level changed."""
        cached = self.encoded
        if cached is not None:
            return cached
        level = self._level
        fields = self._fields if level is None else {**self._fields, LOG_LEVEL: level}
        self.encoded = encoded = (fields, msgspec.Raw(msgspec.json.encode(fields)))
        return encoded
