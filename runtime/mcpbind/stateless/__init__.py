"""The stateless era (protocol 2026-07-28): per-request ``_meta``, ``server/discover``, multi
round-trip requests, cache hints. ``answer`` is the transport-independent server seam."""

from __future__ import annotations

from ..protocol.classify import Incoming, classify
from .dispatch import CACHEABLE, Reply, answer, discover_result, stateless_capabilities
from .options import CacheHint, StatelessOptions
from .request_state import InvalidRequestState

__all__ = [
    "CACHEABLE",
    "CacheHint",
    "Incoming",
    "InvalidRequestState",
    "Reply",
    "StatelessOptions",
    "answer",
    "classify",
    "discover_result",
    "stateless_capabilities",
]
