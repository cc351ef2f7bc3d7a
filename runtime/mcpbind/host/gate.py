"""The Host's gatekeeping: tool-call approval, sampling review, elicitation, and the audit.

Kept apart from the supervision code: every request that needs a human decision, or that a
server sends for the user or the model, passes through here and leaves an :class:`AuditEntry`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import msgspec

from mcpbind_types import unified as t

from ..protocol import INVALID_PARAMS, McpError
from .approval import (
    USER_REJECTED,
    ApprovalDenied,
    Approver,
    AuditEntry,
    ElicitationHook,
    Sampler,
    SamplingResultReviewer,
    SamplingReview,
    SamplingReviewer,
    ToolCallRequest,
    ToolCheck,
    decide,
)
from .catalog import ToolEntry
from .config import ApprovalPolicy
from .state import describe

__all__ = ["Gate"]


class Gate:
    """The hooks and the audit list (the ``Host`` is one); see ``Host`` for each hook."""

    approve: Approver | None
    check: ToolCheck | None
    sampler: Sampler | None
    review_sampling: SamplingReviewer | None
    review_sampling_result: SamplingResultReviewer | None
    elicit: ElicitationHook | None
    audit: deque[AuditEntry]

    def _sampling_for(self, name: str) -> Callable[[t.CreateMessageRequestParams], Any]:
        async def sample(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
            if not isinstance(params.tools, msgspec.UnsetType) or not isinstance(
                params.tool_choice, msgspec.UnsetType
            ):
                # sampling.mdx: tools need the sampling.tools capability, which we do not declare.
                self._record("sampling", name, "createMessage", "deny", "tools in sampling")
                raise McpError(INVALID_PARAMS, "Tool use in sampling is not supported by this host")
            note = ""
            if params.include_context in ("thisServer", "allServers"):
                # sampling.mdx: soft-deprecated, and only for clients declaring sampling.context,
                # which the host does not: no server gets the conversation or another's context.
                note = f"includeContext {params.include_context!r} ignored"
                params = msgspec.structs.replace(params, include_context="none")
            review = SamplingReview.deny("no human-in-the-loop reviewer is configured")
            if self.review_sampling is not None:
                try:
                    review = await self.review_sampling(name, params)
                except Exception as exc:
                    review = SamplingReview.deny(f"reviewer failed: {describe(exc)}")
            if review.action == "deny":
                self._record(
                    "sampling", name, "createMessage", "deny", _joined(review.reason, note)
                )
                raise McpError(
                    USER_REJECTED, "User rejected sampling request", {"reason": review.reason}
                )
            if review.action == "edit" and review.params is not None:
                params = review.params
            self._record(
                "sampling", name, "createMessage", review.action, _joined(review.reason, note)
            )
            assert self.sampler is not None
            result = await self.sampler(name, params)
            if self.review_sampling_result is None:
                return result
            try:
                reviewed = await self.review_sampling_result(name, result)
            except Exception as exc:
                reviewed, why = None, f"response reviewer failed: {describe(exc)}"
            else:
                why = "the user withheld the response"
            if reviewed is None:
                self._record("sampling", name, "response", "deny", why)
                raise McpError(USER_REJECTED, "User rejected sampling request", {"reason": why})
            return reviewed

        return sample

    def _elicitation_for(self, name: str) -> Callable[[Any], Any]:
        async def elicit(params: Any) -> t.ElicitResult:
            assert self.elicit is not None
            subject = getattr(params, "message", "")[:80]
            try:
                result = await self.elicit(name, params)
            except Exception as exc:
                result = t.ElicitResult(action="cancel")
                self._record("elicitation", name, subject, "cancel", describe(exc))
                return result
            self._record("elicitation", name, subject, result.action, "user answered")
            return result

        return elicit

    def _record(self, kind: Any, server: str, subject: str, verdict: str, reason: str) -> None:
        self.audit.append(AuditEntry(kind, server, subject, verdict, reason))

    async def _authorize(
        self, policy: ApprovalPolicy, entry: ToolEntry, arguments: dict[str, Any] | None
    ) -> None:
        """Policy, then the check hook, then the approver for ``ask``; recorded either way."""
        verdict, reason = decide(policy, entry.tool)
        request = ToolCallRequest(
            entry.server, entry.tool.name, entry.name, arguments, entry.annotations, reason
        )
        if self.check is not None:
            try:
                override = await self.check(request)
            except Exception as exc:
                verdict, reason = "deny", f"host check failed: {describe(exc)}"
            else:
                if override is not None:
                    verdict, reason = override, f"host check: {override} (policy: {reason})"
        if verdict == "ask":
            if self.approve is None:
                verdict, reason = "deny", f"{reason}; asked, but the host has no approver"
            else:
                try:
                    ok = await self.approve(request)
                except Exception as exc:
                    ok, reason = False, f"{reason}; approver failed: {describe(exc)}"
                verdict = "allow" if ok else "deny"
                reason = f"{reason}; user {'approved' if ok else 'denied'}"
        self._record("tool", entry.server, entry.tool.name, verdict, reason)
        if verdict != "allow":
            raise ApprovalDenied(entry.name, reason)


def _joined(*reasons: str) -> str:
    return "; ".join(reason for reason in reasons if reason)
