"""Re-exports kept while other branches still import from here (issue 11 moved the server side
to :mod:`mcpbind.server` and the per-request ``_meta`` to :mod:`mcpbind.protocol.meta`);
what remains here is the client side and the classifier, which their owners move."""

from __future__ import annotations

from ..server.dispatch import CACHEABLE, Reply, answer, discover_result, stateless_capabilities
from ..server.options import CacheHint, StatelessOptions
from ..server.request_state import InvalidRequestState
from .classify import Incoming, classify

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
