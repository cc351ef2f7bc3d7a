"""Approval: server/tools.mdx §User Interaction Model and §Security Considerations (a human can
deny tool invocations; confirmation for sensitive operations), client/sampling.mdx (human in the
loop who can view, edit or deny; -1 "User rejected sampling request"), client/elicitation.mdx."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcpbind import types as t
from mcpbind.host import (
    TOOL_CALL_DENIED,
    ApprovalDenied,
    ApprovalPolicy,
    Host,
    HostEvent,
    SamplingReview,
    ToolCallRequest,
    UnknownName,
    approve_all,
)

from .helpers import recorded, text_of
from .servers import legacy, normal

pytestmark = pytest.mark.anyio


class Approver:
    def __init__(self, answer: bool | Exception) -> None:
        self.answer = answer
        self.asked: list[ToolCallRequest] = []

    async def __call__(self, request: ToolCallRequest) -> bool:
        self.asked.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def tool_calls(wire: Any) -> list[str]:
    return [m["params"]["name"] for m in wire.received if m.get("method") == "tools/call"]


async def test_annotation_defaults_without_an_approver() -> None:
    """tools.mdx §Tool annotations (readOnlyHint default false, destructiveHint default true):
    read-only tools run; everything else asks, and with no approver asking means deny. A denied
    call reaches the caller as ApprovalDenied (TOOL_CALL_DENIED, -32010) and never reaches the server."""
    connect, wire = recorded(normal("s"))
    async with Host({"s": connect}) as host:
        assert text_of(await host.call_tool("s__echo", {"text": "hi"})) == "s: hi"
        for name in ("write", "append", "wipe"):
            with pytest.raises(ApprovalDenied) as info:
                await host.call_tool(f"s__{name}", {"value": "v"} if name != "wipe" else {})
            assert info.value.code == TOOL_CALL_DENIED == -32010
            assert "no approver" in info.value.message
    assert tool_calls(wire) == ["echo"]
    reasons = [(a.subject, a.verdict, a.reason) for a in host.audit]
    assert reasons[0] == ("echo", "allow", "annotations: readOnlyHint=true")
    assert reasons[1][:2] == ("write", "deny")
    assert "destructiveHint absent (defaults to true)" in reasons[1][2]
    assert "destructiveHint=false" in reasons[2][2]
    assert "destructiveHint=true" in reasons[3][2]


async def test_ask_path_yes_and_no() -> None:
    """tools.mdx §Security Considerations: "Show tool inputs to the user before calling the
    server" -- the approver sees server, tool, arguments and why it is asked; its answer decides."""
    connect, wire = recorded(normal("s"))
    yes = Approver(True)
    async with Host({"s": connect}, approve=yes) as host:
        assert text_of(await host.call_tool("s__write", {"value": "v"})) == "wrote v"
        (request,) = yes.asked
        assert (request.server, request.tool, request.host_name) == ("s", "write", "s__write")
        assert request.arguments == {"value": "v"}
        assert "destructiveHint" in request.reason
        host.approve = Approver(False)
        with pytest.raises(ApprovalDenied, match="user denied"):
            await host.call_tool("s__write", {"value": "secret"})
        host.approve = Approver(RuntimeError("ui crashed"))
        with pytest.raises(ApprovalDenied, match="approver failed"):
            await host.call_tool("s__write", {"value": "secret"})
    assert tool_calls(wire) == ["write"]
    assert [a.verdict for a in host.audit] == ["allow", "deny", "deny"]
    assert "secret" not in wire.text()


async def test_authorize_tool_call_is_the_gate_call_tool_passes() -> None:
    """tools.mdx §Security Considerations: every way to call a tool through the host (a plain
    call, a task) is put through the same policy and approver, and audited; nothing reaches the
    server until the caller calls the client it is handed."""
    connect, wire = recorded(normal("s"))
    approver = Approver(True)
    async with Host({"s": connect}, approve=approver) as host:
        entry, client = await host.authorize_tool_call("s__write", {"value": "v"})
        assert (entry.server, entry.tool.name, entry.name) == ("s", "write", "s__write")
        assert client is host.client("s")
        assert [r.arguments for r in approver.asked] == [{"value": "v"}]
        assert tool_calls(wire) == []
        approver.answer = False
        with pytest.raises(ApprovalDenied, match="user denied"):
            await host.authorize_tool_call("s__write", {"value": "w"})
        with pytest.raises(UnknownName):
            await host.authorize_tool_call("s__nope")
    assert [(a.subject, a.verdict) for a in host.audit] == [("write", "allow"), ("write", "deny")]


async def test_policy_per_server_and_per_tool() -> None:
    """Per-tool entries win over the server default, which wins over annotations; an
    untrusted server's annotations are ignored (tools.mdx: annotations are untrusted unless
    from trusted servers)."""
    approver = Approver(True)
    policy = ApprovalPolicy(default="allow", tools={"echo": "deny", "wipe": "ask"})
    untrusted = ApprovalPolicy(trust_annotations=False)
    async with Host(approve=approver) as host:
        await host.add_server("p", normal("p"), approval=policy)
        await host.add_server("u", normal("u"), approval=untrusted)
        assert text_of(await host.call_tool("p__write", {"value": "v"})) == "wrote v"
        with pytest.raises(ApprovalDenied, match="per-tool policy: deny"):
            await host.call_tool("p__echo", {"text": "x"})
        await host.call_tool("p__wipe")
        await host.call_tool("u__echo", {"text": "x"})
    assert [r.host_name for r in approver.asked] == ["p__wipe", "u__echo"]
    assert approver.asked[1].reason.startswith("annotations of this server are not trusted")
    assert [(a.subject, a.verdict) for a in host.audit] == [
        ("write", "allow"),
        ("echo", "deny"),
        ("wipe", "allow"),
        ("echo", "allow"),
    ]


async def test_policy_naming_no_tool_is_reported() -> None:
    """server/tools.mdx §Listing Tools (tools are named by the server): a per-tool policy entry
    that names no tool of the server -- a typo, or the host name instead of the tool's -- is
    reported once the tools are known, instead of silently leaving the default in force."""
    events: list[HostEvent] = []
    policy = ApprovalPolicy(tools={"s__wipe": "deny", "wipe": "deny", "wpie": "allow"})
    async with Host(on_event=events.append) as host:
        await host.add_server("s", normal("s"), approval=policy)
    (warning,) = [e for e in events if e.kind == "warning"]
    assert warning.server == "s"
    assert "names no tool of this server: s__wipe, wpie" in warning.message


async def test_check_hook_runs_before_every_call() -> None:
    """tools.mdx §Security Considerations ("Implement proper access controls"): the host's
    check hook is consulted before every call and may override the policy."""
    seen: list[str] = []

    async def check(request: ToolCallRequest) -> Any:
        seen.append(request.host_name)
        return "deny" if request.tool == "search" else None

    async with Host({"s": normal("s")}, check=check) as host:
        await host.call_tool("s__echo", {"text": "x"})
        with pytest.raises(ApprovalDenied, match="host check: deny"):
            await host.call_tool("s__search", {"query": "x"})
    assert seen == ["s__echo", "s__search"]


class Model:
    def __init__(self) -> None:
        self.prompts: list[tuple[str, str]] = []
        self.contexts: list[object] = []

    async def __call__(
        self, server: str, params: t.CreateMessageRequestParams
    ) -> t.CreateMessageResult:
        content = params.messages[-1].content
        assert isinstance(content, t.TextContent)
        self.prompts.append((server, content.text))
        self.contexts.append(params.include_context)
        return t.CreateMessageResult(
            content=t.TextContent(text=content.text.upper()), model="m1", role="assistant"
        )


async def test_sampling_approve_edit_deny() -> None:
    """sampling.mdx §User Interaction Model + §Error Handling: the request reaches the model only
    after the reviewer approves (as is) or edits it; a denial reaches the server as JSON-RPC
    error -1 "User rejected sampling request"."""
    model = Model()
    reviews = [
        SamplingReview.approve(),
        None,  # edit, built from the request below
        SamplingReview.deny("not today"),
    ]

    async def review(server: str, params: t.CreateMessageRequestParams) -> SamplingReview:
        choice = reviews.pop(0)
        if choice is not None:
            return choice
        edited = t.CreateMessageRequestParams(
            max_tokens=params.max_tokens,
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text="edited"))],
        )
        return SamplingReview.edit(edited)

    connect, wire = recorded(legacy("s"))
    async with Host(
        {"s": connect}, sampler=model, review_sampling=review, approve=Approver(True)
    ) as host:
        assert text_of(await host.call_tool("s__sample", {"prompt": "hello"})) == "m1: HELLO"
        assert text_of(await host.call_tool("s__sample", {"prompt": "hello"})) == "m1: EDITED"
        denied = text_of(await host.call_tool("s__sample", {"prompt": "hello"}))
        assert denied == "error -1: User rejected sampling request"
    assert model.prompts == [("s", "hello"), ("s", "edited")]
    errors = [m["error"] for m in wire.received if "error" in m]
    assert errors == [
        {"code": -1, "message": "User rejected sampling request", "data": {"reason": "not today"}}
    ]
    sampling = [(a.verdict, a.reason) for a in host.audit if a.kind == "sampling"]
    assert [v for v, _ in sampling] == ["approve", "edit", "deny"]


async def test_the_audit_keeps_the_last_decisions() -> None:
    """A server can send sampling requests without end, each one a decision: the audit keeps
    the newest ``audit_limit`` of them, not every one."""
    count = 0

    async def review(server: str, params: t.CreateMessageRequestParams) -> SamplingReview:
        nonlocal count
        count += 1
        return SamplingReview.deny(f"no {count}")

    async with Host(
        {"s": legacy("s")},
        sampler=Model(),
        review_sampling=review,
        approve=Approver(True),
        audit_limit=4,
    ) as host:
        for _ in range(5):
            await host.call_tool("s__sample", {"prompt": "x"})
    kept = [(a.kind, a.reason if a.kind == "sampling" else a.verdict) for a in host.audit]
    assert kept == [
        ("tool", "allow"),
        ("sampling", "no 4"),
        ("tool", "allow"),
        ("sampling", "no 5"),
    ]


async def test_sampling_without_reviewer_or_with_tools_is_refused() -> None:
    """sampling.mdx: a human in the loop SHOULD always be able to deny -- with no reviewer the
    host denies (-1); tool use without the sampling.tools capability, which the host does not
    declare, is refused by the server before it is sent (§Tools in Sampling: servers MUST NOT
    send it; a server that did would get -32602 from the client's core); a host without a
    sampler does not declare sampling at all (§Capabilities)."""
    model = Model()
    connect, wire = recorded(legacy("s"))
    async with Host({"s": connect}, sampler=model, approve=Approver(True)) as host:
        assert text_of(await host.call_tool("s__sample", {"prompt": "x"})).startswith("error -1")
        host.review_sampling = approve_all
        refused = text_of(await host.call_tool("s__sample_with_tools"))
        assert refused == "error LocalProtocolError"
    assert model.prompts == []
    assert not any("tools" in m.get("params", {}) for m in wire.received)
    init = next(m for m in wire.received if m.get("method") == "initialize")
    assert "sampling" in init["params"]["capabilities"]

    connect, wire = recorded(legacy("s"))
    async with Host({"s": connect}, approve=Approver(True)) as host:
        result = await host.call_tool("s__sample", {"prompt": "x"})
        assert result.is_error is True or text_of(result).startswith("error")
    init = next(m for m in wire.received if m.get("method") == "initialize")
    assert "sampling" not in init["params"]["capabilities"]


async def test_elicitation_goes_to_the_ui_hook() -> None:
    """elicitation.mdx §Security Considerations: the UI is told which server asks; accept with
    content, decline, and a failing UI (cancel) each reach the server as an ElicitResult."""
    answers: list[t.ElicitResult | Exception] = [
        t.ElicitResult(action="accept", content={"answer": "blue"}),
        t.ElicitResult(action="decline"),
        RuntimeError("window closed"),
    ]
    asked: list[tuple[str, str]] = []

    async def ui(server: str, params: Any) -> t.ElicitResult:
        asked.append((server, params.message))
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async with Host({"s": normal("s")}, elicit=ui, approve=Approver(True)) as host:
        replies = [
            text_of(await host.call_tool("s__ask", {"question": "Colour?"})) for _ in range(3)
        ]
    assert replies == ['accept {"answer": "blue"}', "decline {}", "cancel {}"]
    assert asked == [("s", "Colour?")] * 3
    assert [a.verdict for a in host.audit if a.kind == "elicitation"] == [
        "accept",
        "decline",
        "cancel",
    ]


async def test_sampling_response_review() -> None:
    """sampling.mdx §User Interaction Model: "Present generated responses for review before
    delivery" -- the reviewer may edit the answer or withhold it (-1 to the server)."""
    verdicts: list[t.CreateMessageResult | None] = [
        t.CreateMessageResult(content=t.TextContent(text="redacted"), model="m1", role="assistant"),
        None,
    ]

    async def review_result(
        server: str, result: t.CreateMessageResult
    ) -> t.CreateMessageResult | None:
        return verdicts.pop(0)

    async with Host(
        {"s": legacy("s")},
        sampler=Model(),
        review_sampling=approve_all,
        review_sampling_result=review_result,
        approve=Approver(True),
    ) as host:
        assert text_of(await host.call_tool("s__sample", {"prompt": "secret"})) == "m1: redacted"
        withheld = text_of(await host.call_tool("s__sample", {"prompt": "secret"}))
    assert withheld == "error -1: User rejected sampling request"
    assert [(a.subject, a.verdict) for a in host.audit if a.kind == "sampling"][-1] == (
        "response",
        "deny",
    )


async def test_sampling_never_includes_other_context() -> None:
    """sampling.mdx §Capabilities (includeContext "thisServer"/"allServers" only for clients
    declaring sampling.context) and architecture §Design Principles 3 (no server sees the
    conversation or another server): the host does not declare it, and the model gets such a
    request with includeContext "none"; the audit says so."""
    model = Model()
    connect, wire = recorded(legacy("s"))
    async with Host(
        {"s": connect}, sampler=model, review_sampling=approve_all, approve=Approver(True)
    ) as host:
        for context in ("allServers", "thisServer"):
            reply = await host.call_tool("s__sample", {"prompt": "hi", "context": context})
            assert text_of(reply) == "m1: HI"
    assert model.contexts == ["none", "none"]
    init = next(m for m in wire.received if m.get("method") == "initialize")
    assert init["params"]["capabilities"]["sampling"] == {}
    reasons = [a.reason for a in host.audit if a.kind == "sampling"]
    assert reasons == [
        "includeContext 'allServers' ignored",
        "includeContext 'thisServer' ignored",
    ]


def test_a_call_the_policy_allows_outright_is_told_without_the_hooks() -> None:
    """tools.mdx §Security Considerations: every decision is still recorded; Gate.allows (the
    Host's step before awaiting Gate.authorize) says yes only when no hook could change it."""
    from collections import deque

    from mcpbind.host.catalog import ToolEntry
    from mcpbind.host.gate import Gate

    class Hooks:
        approve = None
        check: Any = None
        sampler = review_sampling = review_sampling_result = elicit = None

    hooks = Hooks()
    audit: deque[Any] = deque()
    gate = Gate(hooks, audit)
    schema = msgspec.Raw(b'{"type": "object"}')
    entry = ToolEntry("s__echo", "s", t.Tool(name="echo", input_schema=schema))
    assert gate.allows(ApprovalPolicy(default="allow"), entry) is True
    assert [(a.kind, a.server, a.subject, a.verdict) for a in audit] == [
        ("tool", "s", "echo", "allow")
    ]
    assert audit[0].reason == "server default policy: allow"
    assert gate.allows(ApprovalPolicy(default="ask"), entry) is False
    assert gate.allows(ApprovalPolicy(tools={"echo": "deny"}), entry) is False

    async def check(request: ToolCallRequest) -> None:
        return None

    hooks.check = check  # a hook may override the policy: Gate.authorize decides
    assert gate.allows(ApprovalPolicy(default="allow"), entry) is False
    assert len(audit) == 1
