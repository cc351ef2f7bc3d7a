"""What the client answers when the server asks: the application's handlers, the capabilities
they declare, and the answers to a 2026-07-28 ``InputRequiredResult``'s input requests.

basic/patterns/mrtr.mdx: the client answers every ``inputRequests`` entry with the
application's handlers and retries the original request; the server MUST NOT ask for what the
client did not declare.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from mcpbind_types import unified as t

from .._lazy import LazyModule
from ..protocol import INVALID_PARAMS, INVALID_REQUEST, McpError

if TYPE_CHECKING:
    from ..protocol import subcaps
else:  # it reads the session's capability checks: imported by the first input request
    subcaps = LazyModule("mcpbind.protocol.subcaps", globals(), "subcaps")

__all__ = ["ClientHandlers", "answer_inputs", "capabilities_of"]

# The types quoted: they are imported at their first use, not with mcpbind (issue 15).
SamplingHandler = Callable[["t.CreateMessageRequestParams"], Awaitable["t.CreateMessageResult"]]
ElicitationHandler = Callable[[Any], Awaitable["t.ElicitResult"]]
LoggingHandler = Callable[["t.LoggingMessageNotificationParams"], Awaitable[None]]
NotificationCallback = Callable[[str, Any], Awaitable[None]]


class ClientHandlers(msgspec.Struct):
    """What the client answers when the server asks. Declared capabilities follow from it."""

    sampling: SamplingHandler | None = None
    elicitation: ElicitationHandler | None = None
    roots: Sequence[t.Root] | None = None
    logging: LoggingHandler | None = None
    #: Called for every server notification (list_changed, resources/updated, messages, ...).
    notification: NotificationCallback | None = None
    #: Declare ``sampling.tools``: the sampling handler takes ``tools``/``toolChoice``
    #: (sampling.mdx §Tools in Sampling); without it such requests are refused with -32602.
    sampling_tools: bool = False
    #: The elicitation modes the handler supports (elicitation.mdx §Capabilities).
    elicitation_modes: Sequence[str] = ("form", "url")
    #: Called with the ``elicitationId`` of a URL-mode elicitation this client saw (asked, or
    #: listed in a -32042 error) when the server says it completed; other ids are ignored.
    elicitation_complete: Callable[[str], Awaitable[None]] | None = None
    #: Be a task receiver (2025-11-25 tasks.mdx §Client Capabilities): declare ``tasks`` for
    #: the sampling and elicitation handlers given, so the server may ask for them as tasks
    #: (answered at once, run in the background, polled with ``tasks/*``). Handshake era only.
    tasks: bool = False


def capabilities_of(h: ClientHandlers) -> t.ClientCapabilities:
    """The client capabilities the handlers given declare."""
    caps = t.ClientCapabilities()
    if h.sampling is not None:
        caps.sampling = t.ClientCapabilitiesSampling()
        if h.sampling_tools:
            caps.sampling.tools = {}
    if h.elicitation is not None:
        unknown = set(h.elicitation_modes) - {"form", "url"}
        if unknown or not h.elicitation_modes:
            raise ValueError(f"elicitation_modes: 'form' and/or 'url', not {unknown or 'none'}")
        caps.elicitation = t.ClientCapabilitiesElicitation()
        for mode in h.elicitation_modes:
            setattr(caps.elicitation, mode, {})
    if h.roots is not None:
        caps.roots = t.ClientCapabilitiesRoots(list_changed=True)
    return caps


async def answer_inputs(
    requests: dict[str, Any],
    *,
    sampling: SamplingHandler | None,
    elicitation: ElicitationHandler | None,
    roots: Sequence[t.Root] | None,
    caps: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One response per input request, from the application's handlers; a request needing a
    sub-capability missing from ``caps`` (what the client declared) is refused -32602."""
    responses: dict[str, Any] = {}
    for key, request in requests.items():
        tag = getattr(getattr(type(request), "__struct_config__", None), "tag", None)
        method = tag if isinstance(tag, str) else type(request).__name__
        refusal = subcaps.subcapability_refusal(method, getattr(request, "params", None), caps)
        if caps is not None and refusal is not None:
            raise McpError(INVALID_PARAMS, f"Invalid params: input {key!r}: {refusal[1]}")
        if isinstance(request, t.ElicitRequest) and elicitation is not None:
            responses[key] = await elicitation(request.params)
        elif isinstance(request, t.CreateMessageRequest) and sampling is not None:
            responses[key] = await sampling(request.params)
        elif isinstance(request, t.ListRootsRequest) and roots is not None:
            responses[key] = t.ListRootsResult(roots=list(roots))
        else:
            # mrtr.mdx: servers MUST NOT ask for what the client did not declare.
            raise McpError(
                INVALID_REQUEST,
                f"the server asked for {method} (input {key!r}), which this client did not declare",
            )
    return responses
