"""Approval: who may run a tool, and what a server may ask of the user or the model.

2025-11-25 server/tools.mdx asks for "a human in the loop with the ability to deny tool
invocations"; client/sampling.mdx for one "with the ability to deny sampling requests" and to
"view and edit prompts before sending". This module holds the pure part: the policy decision
from configuration and annotations, the records of each decision, and the hook signatures.

Policy, per tool call, first match wins:

1. the server's ``approval.tools[<tool>]`` (``allow``, ``deny`` or ``ask``);
2. the server's ``approval.default`` when it is ``allow``, ``deny`` or ``ask``;
3. ``auto``: from the tool's annotations (the spec's defaults apply to absent hints):
   ``readOnlyHint: true`` -> allow; otherwise (``destructiveHint`` defaults to true, and an
   additive tool still changes its environment) -> ask. With ``trustAnnotations: false`` the
   annotations are ignored and every tool asks.

``ask`` consults the host's approver hook; with no hook, ask means deny.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from mcpbind_types import unified as t

from ..protocol import McpError
from .config import ApprovalPolicy, PolicyValue

__all__ = [
    "TOOL_CALL_DENIED",
    "USER_REJECTED",
    "ApprovalDenied",
    "Approver",
    "AuditEntry",
    "ElicitationHook",
    "Sampler",
    "SamplingReview",
    "SamplingResultReviewer",
    "SamplingReviewer",
    "ToolCallRequest",
    "ToolCheck",
    "approve_all",
    "decide",
]

#: client/sampling.mdx §Error Handling: "User rejected sampling request: -1".
USER_REJECTED = -1

#: A tool call the approval policy, the ``check`` hook or the user refused. The spec names no
#: code for it (-1 is sampling's "User rejected", client/sampling.mdx); JSON-RPC 2.0 §5.1
#: reserves -32000..-32099 for implementation-defined server errors, and -32010 is taken by
#: nothing in MCP (basic/index.mdx codes, 2026-07-28 changelog: -32002, -32020..-32022,
#: -32042) nor in mcpbind (-32000 and -32001 are the client's closed and timed out).
TOOL_CALL_DENIED = -32010


class ApprovalDenied(McpError):
    """A tool call the policy or the user refused; raised to the caller, nothing was sent."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(
            TOOL_CALL_DENIED, f"Tool call {name} was denied: {reason}", {"reason": reason}
        )
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """What an approver sees: which server and tool, with which arguments, and why it is asked."""

    server: str
    tool: str
    host_name: str
    arguments: dict[str, Any] | None
    annotations: t.ToolAnnotations | None
    reason: str


class AuditEntry(msgspec.Struct, frozen=True, gc=False):
    """One decision: ``kind`` is ``tool``, ``sampling`` or ``elicitation``. (A Struct: one is
    made for every tool call, and a frozen dataclass's ``__init__`` is a Python frame setting
    each field through ``object.__setattr__``.)"""

    kind: Literal["tool", "sampling", "elicitation"]
    server: str
    subject: str
    verdict: str
    reason: str
    at: float = msgspec.field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class SamplingReview:
    """The human's answer to a sampling request: approve, approve an edited request, or deny."""

    action: Literal["approve", "edit", "deny"]
    params: t.CreateMessageRequestParams | None = None
    reason: str = ""

    @classmethod
    def approve(cls) -> SamplingReview:
        return cls("approve")

    @classmethod
    def edit(cls, params: t.CreateMessageRequestParams, reason: str = "edited") -> SamplingReview:
        return cls("edit", params, reason)

    @classmethod
    def deny(cls, reason: str = "User rejected sampling request") -> SamplingReview:
        return cls("deny", None, reason)


#: Asked for ``ask`` decisions: ``True`` runs the call.
Approver = Callable[[ToolCallRequest], Awaitable[bool]]
#: Consulted before every call, before the policy: a verdict overrides it, ``None`` defers.
ToolCheck = Callable[[ToolCallRequest], Awaitable[PolicyValue | None]]
#: The human-in-the-loop step for ``sampling/createMessage`` (server name, request).
SamplingReviewer = Callable[[str, t.CreateMessageRequestParams], Awaitable[SamplingReview]]
#: Reviews the model's answer before the server sees it: the (possibly edited) result, or
#: ``None`` to withhold it (sampling.mdx: "Present generated responses for review").
SamplingResultReviewer = Callable[
    [str, t.CreateMessageResult], Awaitable[t.CreateMessageResult | None]
]
#: The host's model: answers an approved sampling request (server name, request).
Sampler = Callable[[str, t.CreateMessageRequestParams], Awaitable[t.CreateMessageResult]]
#: The host's UI for ``elicitation/create`` (server name, form or URL params).
ElicitationHook = Callable[
    [str, t.ElicitRequestFormParams | t.ElicitRequestURLParams], Awaitable[t.ElicitResult]
]


async def approve_all(server: str, params: t.CreateMessageRequestParams) -> SamplingReview:
    """A reviewer that approves every sampling request (opting out of the human in the loop)."""
    return SamplingReview.approve()


def _hint(annotations: t.ToolAnnotations | None, name: str, default: bool) -> bool:
    value = getattr(annotations, name, msgspec.UNSET) if annotations is not None else msgspec.UNSET
    return value if isinstance(value, bool) else default


def decide(policy: ApprovalPolicy, tool: t.Tool) -> tuple[PolicyValue, str]:
    """The policy's verdict for one tool, and the reason recorded with it."""
    explicit = policy.tools.get(tool.name)
    if explicit is not None:
        return explicit, f"per-tool policy: {explicit}"
    if policy.default != "auto":
        return policy.default, f"server default policy: {policy.default}"
    if not policy.trust_annotations:
        return "ask", "annotations of this server are not trusted"
    annotations = tool.annotations if isinstance(tool.annotations, t.ToolAnnotations) else None
    if _hint(annotations, "read_only_hint", False):
        return "allow", "annotations: readOnlyHint=true"
    given = annotations is not None and isinstance(annotations.destructive_hint, bool)
    if _hint(annotations, "destructive_hint", True):
        why = "destructiveHint=true" if given else "destructiveHint absent (defaults to true)"
        return "ask", f"annotations: not read-only, {why}"
    return "ask", "annotations: not read-only, destructiveHint=false (still modifies)"
