"""The Host's gatekeeping: tool-call approval, sampling review, elicitation, and the audit.

Every request that needs a human decision, or that a server sends for the user or the model,
passes through the :class:`Gate` and leaves an :class:`AuditEntry`. The gate asks the hooks
its owner declares (:class:`GateHooks`: the ``Host``'s ``approve``, ``check``, ``sampler``,
``review_sampling``, ``review_sampling_result`` and ``elicit``) at each use, so a hook set on
the Host later takes effect.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

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

__all__ = ["Gate", "GateHooks"]


class GateHooks(Protocol):
    """The hooks a :class:`Gate` asks (the ``Host`` has them; see ``Host`` for each)."""

    @property
    def approve(self) -> Approver | None: ...

    @property
    def check(self) -> ToolCheck | None: ...

    @property
    def sampler(self) -> Sampler | None: ...

    @property
    def review_sampling(self) -> SamplingReviewer | None: ...

    @property
    def review_sampling_result(self) -> SamplingResultReviewer | None: ...

    @property
    def elicit(self) -> ElicitationHook | None: ...


class Gate:
    """Applies the approval policy and the ``hooks`` to what passes, recording each decision
    in ``audit``."""

    def __init__(self, hooks: GateHooks, audit: deque[AuditEntry]) -> None:
        self.hooks = hooks
        self.audit = audit

    def sampling_for(self, name: str) -> Callable[[t.CreateMessageRequestParams], Any] | None:
        """The sampling handler for server ``name``'s client (``None``: the host has no
        sampler, so the client declares no sampling)."""
        if self.hooks.sampler is None:
            return None

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
            reviewer = self.hooks.review_sampling
            if reviewer is not None:
                try:
                    review = await reviewer(name, params)
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
            sampler = self.hooks.sampler
            assert sampler is not None  # there was one when the client connected
            result = await sampler(name, params)
            result_reviewer = self.hooks.review_sampling_result
            if result_reviewer is None:
                return result
            try:
                reviewed = await result_reviewer(name, result)
            except Exception as exc:
                reviewed, why = None, f"response reviewer failed: {describe(exc)}"
            else:
                why = "the user withheld the response"
            if reviewed is None:
                self._record("sampling", name, "response", "deny", why)
                raise McpError(USER_REJECTED, "User rejected sampling request", {"reason": why})
            return reviewed

        return sample

    def elicitation_for(self, name: str) -> Callable[[Any], Any] | None:
        """The elicitation handler for server ``name``'s client (``None``: the host has no
        ``elicit`` hook, so the client declares no elicitation)."""
        if self.hooks.elicit is None:
            return None

        async def elicit(params: Any) -> t.ElicitResult:
            hook = self.hooks.elicit
            assert hook is not None  # there was one when the client connected
            subject = getattr(params, "message", "")[:80]
            try:
                result = await hook(name, params)
            except McpError as exc:  # a refusal the server is to hear (a gateway's client
                # cannot be asked): recorded, and answered as that error
                self._record("elicitation", name, subject, "refuse", describe(exc))
                raise
            except Exception as exc:
                result = t.ElicitResult(action="cancel")
                self._record("elicitation", name, subject, "cancel", describe(exc))
                return result
            self._record("elicitation", name, subject, result.action, "user answered")
            return result

        return elicit

    def _record(self, kind: Any, server: str, subject: str, verdict: str, reason: str) -> None:
        self.audit.append(AuditEntry(kind, server, subject, verdict, reason))

    def allows(self, policy: ApprovalPolicy, entry: ToolEntry) -> bool:
        """The usual call, told without a coroutine: ``True`` (and recorded) when the policy
        allows it outright and no check hook is set; ``False``: :meth:`authorize` decides."""
        if self.hooks.check is not None:
            return False
        verdict, reason = decide(policy, entry.tool)
        if verdict != "allow":
            return False
        self._record("tool", entry.server, entry.tool.name, verdict, reason)
        return True

    async def authorize(
        self,
        policy: ApprovalPolicy,
        entry: ToolEntry,
        arguments: dict[str, Any] | msgspec.Raw | None,
    ) -> None:
        """Policy, then the check hook, then the approver for ``ask``; recorded either way.
        Raises :class:`ApprovalDenied` unless the call is allowed. ``arguments`` may be the
        call's JSON: decoded for a hook only."""
        verdict, reason = decide(policy, entry.tool)
        # What the hooks see, made only for a hook (most calls the policy allows outright).
        request: ToolCallRequest | None = None
        check = self.hooks.check
        if check is not None:
            request = _request(entry, arguments, reason)
            try:
                override = await check(request)
            except Exception as exc:
                verdict, reason = "deny", f"host check failed: {describe(exc)}"
            else:
                if override is not None:
                    verdict, reason = override, f"host check: {override} (policy: {reason})"
        if verdict == "ask":
            approve = self.hooks.approve
            if approve is None:
                verdict, reason = "deny", f"{reason}; asked, but the host has no approver"
            else:
                if request is None:  # no check hook: the reason is still the policy's
                    request = _request(entry, arguments, reason)
                try:
                    ok = await approve(request)
                except McpError as exc:  # the approver could not ask anyone (a gateway's
                    # client without elicitation): said as such, not as the user's answer
                    verdict, reason = "deny", f"{reason}; not asked: {exc.message}"
                except Exception as exc:
                    verdict, reason = "deny", f"{reason}; approver failed: {describe(exc)}"
                else:
                    verdict = "allow" if ok else "deny"
                    reason = f"{reason}; user {'approved' if ok else 'denied'}"
        self._record("tool", entry.server, entry.tool.name, verdict, reason)
        if verdict != "allow":
            raise ApprovalDenied(entry.name, reason)


def _request(
    entry: ToolEntry, arguments: dict[str, Any] | msgspec.Raw | None, reason: str
) -> ToolCallRequest:
    decoded = msgspec.json.decode(arguments) if isinstance(arguments, msgspec.Raw) else arguments
    return ToolCallRequest(
        entry.server, entry.tool.name, entry.name, decoded, entry.annotations, reason
    )


def _joined(*reasons: str) -> str:
    return "; ".join(reason for reason in reasons if reason)
