"""The Host as a gateway (issue 33), in memory, on both eras downstream: the catalog under host
names, calls routed to the owning server, progress, cancellation, the approval policy asking
the caller by elicitation, and what happens when it cannot be asked.

Spec: 2025-11-25 server/tools.mdx (§Listing Tools, §Calling Tools, §Security Considerations:
"a human in the loop with the ability to deny tool invocations"), client/elicitation.mdx
(§Capabilities: servers MUST NOT ask clients that did not declare it),
basic/utilities/progress.mdx, basic/utilities/cancellation.mdx, server/resources.mdx
(§Reading Resources, §Error Handling), server/prompts.mdx (§Getting a Prompt).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest

from mcpbind import Client, ClientHandlers, McpError, Server
from mcpbind import types as t
from mcpbind.host import TOOL_CALL_DENIED, ApprovalPolicy, Backoff, Host
from mcpbind.host.relay import APPROVE_FIELD
from mcpbind.protocol import INVALID_PARAMS, RESOURCE_NOT_FOUND
from mcpbind.server import ToolExecutionError
from mcpbind.server.options import StatelessOptions
from mcpbind.server.tasks import TaskContext, Tasks
from mcpbind.versions import LATEST_HANDSHAKE, LATEST_STATELESS, STATELESS_VERSIONS, era_of
from mcpbind_types._common import RequestOptions

from .helpers import recorded, stdio, text_of, wait_for
from .servers import READ_ONLY, forms, legacy, modern, normal

pytestmark = pytest.mark.anyio

ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]


class Asked:
    """The downstream client's elicitation handler: answers, and records what it was asked."""

    def __init__(self, approve: bool | None = True) -> None:
        self.approve = approve
        self.messages: list[str] = []

    async def __call__(self, params: Any) -> t.ElicitResult:
        self.messages.append(params.message)
        props = params.requested_schema.properties
        if APPROVE_FIELD in props:
            if self.approve is None:
                return t.ElicitResult(action="decline")
            return t.ElicitResult(action="accept", content={APPROVE_FIELD: self.approve})
        return t.ElicitResult(action="accept", content={"answer": "forty-two"})


@asynccontextmanager
async def gateway(
    servers: dict[str, Any], *, version: str, handlers: ClientHandlers | None = None, **host: Any
) -> AsyncIterator[tuple[Host, Client]]:
    h = Host(servers, **host)
    server = h.as_server()
    async with h, Client(server, protocol_version=version, handlers=handlers) as client:
        yield h, client


def three() -> dict[str, Any]:
    """Three upstreams: both eras, handshake only, 2026-07-28 only."""
    return {"a": normal("a"), "old": legacy("old"), "new": modern("new")}


@pytest.mark.parametrize("version", ERAS)
async def test_tools_of_every_server_are_listed_under_host_names(version: str) -> None:
    """tools.mdx §Listing Tools: one list, each tool under its host name, paged."""
    async with gateway(three(), version=version) as (host, client):
        names = [tool.name async for tool in client.iter_tools()]
        assert sorted(names) == sorted(host.catalog.tools)
        for server in ("a", "old", "new"):
            assert f"{server}__echo" in names
        schema = next(t for t in host.catalog.tools.values() if t.name == "a__echo").tool
        listed = [tool async for tool in client.iter_tools() if tool.name == "a__echo"].pop()
        assert listed.input_schema == schema.input_schema
        assert listed.description == "Echo the text back."


@pytest.mark.parametrize("version", ERAS)
async def test_a_call_is_routed_to_the_owning_server(version: str) -> None:
    """tools.mdx §Calling Tools: the call reaches the server that owns the tool, under the
    tool's own name, and its result comes back."""
    async with gateway(three(), version=version) as (_, client):
        for server in ("a", "old", "new"):
            result = await client.call(f"{server}__echo", {"text": "hi"})
            assert text_of(result) == f"{server}: hi"


@pytest.mark.parametrize("version", ERAS)
async def test_an_unknown_tool_is_invalid_params(version: str) -> None:
    async with gateway(three(), version=version) as (_, client):
        with pytest.raises(McpError) as caught:
            await client.call("a__nope", {})
        assert caught.value.code == INVALID_PARAMS
        assert "a__nope" in caught.value.message


@pytest.mark.parametrize("version", ERAS)
async def test_progress_of_the_upstream_call_reaches_the_caller(version: str) -> None:
    """progress.mdx: the upstream's notifications arrive under the caller's progress token."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with gateway({"f": forms()}, version=version) as (_, client):
        options = RequestOptions(on_progress=progress)
        result = await client.call("f__count", {"steps": 3}, options=options)
        assert text_of(result) == "counted 3"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("version", ERAS)
async def test_cancelling_the_call_cancels_it_upstream(version: str) -> None:
    """cancellation.mdx: the downstream cancel becomes ``notifications/cancelled`` upstream
    for the request the gateway sent there."""
    connect, wire = recorded(legacy("s"))
    async with gateway({"s": connect}, version=version) as (_, client):
        with anyio.move_on_after(0.5):
            await client.call("s__slow", {})
        await wait_for(lambda: "notifications/cancelled" in wire.methods())
        call = next(m for m in wire.received if m.get("method") == "tools/call")
        cancel = next(m for m in wire.received if m.get("method") == "notifications/cancelled")
        assert cancel["params"]["requestId"] == call["id"]
        # The gateway still serves after the cancel.
        assert text_of(await client.call("s__echo", {"text": "after"})) == "s: after"


@pytest.mark.parametrize("version", ERAS)
async def test_a_check_hook_sees_the_call_s_arguments_decoded(version: str) -> None:
    """The gateway hands the caller's argument JSON on undecoded; a check hook still gets
    them as an object (and a call without arguments as ``None``)."""
    seen: list[Any] = []

    async def check(request: Any) -> str:
        seen.append(request.arguments)
        return "allow"

    async with gateway({"a": normal("a")}, version=version, check=check) as (_, client):
        assert text_of(await client.call("a__echo", {"text": "ü ✓"})) == "a: ü ✓"
        wiped = await client.call_tool(t.CallToolRequestParams(name="a__wipe"))
        assert text_of(wiped) == "wiped"
    assert seen == [{"text": "ü ✓"}, None]


@pytest.mark.parametrize("version", ERAS)
async def test_a_call_needing_approval_is_approved_by_elicitation(version: str) -> None:
    """tools.mdx §Security Considerations: ``write`` (destructive by default) asks; the
    caller is asked by elicitation and the call runs on its approval."""
    asked = Asked(approve=True)
    handlers = ClientHandlers(elicitation=asked)
    async with gateway(three(), version=version, handlers=handlers) as (host, client):
        result = await client.call("a__write", {"value": "v"})
        assert text_of(result) == "wrote v"
    assert len(asked.messages) == 1
    assert "write" in asked.messages[0] and '"value": "v"' in asked.messages[0]
    verdicts = [(a.subject, a.verdict) for a in host.audit if a.kind == "tool"]
    assert verdicts[-1] == ("write", "allow")


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("answer", [False, None])
async def test_a_call_the_user_refuses_is_an_error_and_never_sent(
    version: str, answer: bool | None
) -> None:
    """Refused (the box unticked, or the form declined): a JSON-RPC error naming the tool, with
    the Host's code for a denied call (an implementation-defined server error, JSON-RPC 2.0
    §5.1: -32000 to -32099); the upstream server never sees the call."""
    connect, wire = recorded(normal("s"))
    handlers = ClientHandlers(elicitation=Asked(approve=answer))
    async with gateway({"s": connect}, version=version, handlers=handlers) as (_, client):
        with pytest.raises(McpError) as caught:
            await client.call("s__wipe", {})
    assert caught.value.code == TOOL_CALL_DENIED
    assert "s__wipe was denied" in caught.value.message
    assert "user denied" in caught.value.message
    assert "tools/call" not in wire.methods()


@pytest.mark.parametrize("version", ERAS)
async def test_a_client_without_elicitation_is_refused_with_a_clear_error(version: str) -> None:
    """elicitation.mdx §Capabilities: a client that did not declare elicitation is not asked;
    the call needing approval is refused, saying why, and a read-only one still runs."""
    connect, wire = recorded(normal("s"))
    async with gateway({"s": connect}, version=version) as (_, client):
        with pytest.raises(McpError) as caught:
            await client.call("s__write", {"value": "v"})
        assert caught.value.code == TOOL_CALL_DENIED
        assert caught.value.message == (
            "Tool call s__write was denied: annotations: not read-only, destructiveHint absent "
            "(defaults to true); not asked: the client did not declare elicitation, so it "
            "cannot approve"
        )
        assert text_of(await client.call("s__search", {"query": "q"})) == "s results for q"
    assert [m["params"]["name"] for m in wire.received if m.get("method") == "tools/call"] == [
        "search"
    ]


@pytest.mark.parametrize("version", ERAS)
async def test_the_policy_s_allow_and_deny_need_no_question(version: str) -> None:
    asked = Asked()
    handlers = ClientHandlers(elicitation=asked)
    policy = ApprovalPolicy(tools={"write": "allow", "echo": "deny"})
    host = Host()
    server = host.as_server()
    async with host:
        await host.add_server("s", normal("s"), approval=policy)
        async with Client(server, protocol_version=version, handlers=handlers) as client:
            assert text_of(await client.call("s__write", {"value": "v"})) == "wrote v"
            with pytest.raises(McpError, match="per-tool policy: deny"):
                await client.call("s__echo", {"text": "x"})
    assert asked.messages == []


@pytest.mark.parametrize("version", ERAS)
async def test_resources_and_templates_are_listed_and_read_from_their_server(
    version: str,
) -> None:
    """resources.mdx §Listing Resources, §Resource Templates, §Reading Resources."""
    async with gateway(three(), version=version) as (_, client):
        uris = sorted([r.uri async for r in client.iter_resources()])
        assert uris == ["mem://a/info", "mem://new/info", "mem://old/info"]
        templates = sorted([r.uri_template async for r in client.iter_resource_templates()])
        assert templates == [f"mem://{s}/items/{{id}}" for s in ("a", "new", "old")]
        read = await client.read_resource(t.ReadResourceRequestParams(uri="mem://new/items/7"))
        assert [c.text for c in read.contents] == ["item 7 of new"]  # type: ignore[union-attr]
        with pytest.raises(McpError) as caught:
            await client.read_resource(t.ReadResourceRequestParams(uri="mem://zzz/none"))
        # resources.mdx §Error Handling: -32002, and -32602 from 2026-07-28 on.
        expected = INVALID_PARAMS if era_of(version).stateless else RESOURCE_NOT_FOUND
        assert caught.value.code == expected
        assert caught.value.message.startswith("Unknown resource: 'mem://zzz/none'")


@pytest.mark.parametrize("version", ERAS)
async def test_prompts_are_listed_under_host_names_and_got_from_their_server(
    version: str,
) -> None:
    """prompts.mdx §Listing Prompts, §Getting a Prompt."""
    async with gateway(three(), version=version) as (_, client):
        names = sorted([p.name async for p in client.iter_prompts()])
        assert names == ["a__greet", "new__greet", "old__greet"]
        got = await client.get_prompt(
            t.GetPromptRequestParams(name="old__greet", arguments={"who": "Ann"})
        )
        assert got.messages[0].content.text == "Hello Ann from old"  # type: ignore[union-attr]


def failing() -> Server:
    server = Server("failing", version="1.0.0")

    @server.tool(annotations=READ_ONLY)
    def refuse() -> str:
        raise McpError(-32010, "refused on purpose", {"why": "test"})

    @server.tool(annotations=READ_ONLY)
    def broken() -> str:
        raise ToolExecutionError("the tool broke")

    return server


@pytest.mark.parametrize("version", ERAS)
async def test_an_upstream_error_keeps_its_code_message_and_data(version: str) -> None:
    """An upstream JSON-RPC error reaches the caller as the server sent it; a tool's own
    failure stays a result with ``isError`` (tools.mdx §Error Handling)."""
    async with gateway({"f": failing()}, version=version) as (_, client):
        with pytest.raises(McpError) as caught:
            await client.call("f__refuse", {})
        assert (caught.value.code, caught.value.message, caught.value.data) == (
            -32010,
            "refused on purpose",
            {"why": "test"},
        )
        broken = await client.call("f__broken", {})
        assert broken.is_error and text_of(broken) == "the tool broke"


def annotated(name: str, *, only_stateless: bool = False) -> Server:
    """A tool whose result carries every field of CallToolResult, and ``_meta`` of its own."""
    server = Server(name, version="1.0.0")
    if only_stateless:  # speaking only 2026-07-28, as servers.modern
        server.stateless = StatelessOptions(versions=STATELESS_VERSIONS)

    @server.tool(annotations=READ_ONLY)
    def report() -> t.CallToolResult:
        return t.CallToolResult(
            content=[t.TextContent(text="ünïcode ✓"), t.ImageContent(data="AAAA", mime_type="x/y")],
            structured_content={"n": [1, 2.5, None]},
            is_error=True,
            meta={"example.com/trace": {"id": "t1"}},
        )

    return server


@pytest.mark.parametrize("upstream", ["both", "modern"])
@pytest.mark.parametrize("version", ERAS)
async def test_a_result_is_passed_on_as_the_upstream_sent_it(version: str, upstream: str) -> None:
    """tools.mdx §Tool Result: content, structured content, ``isError`` and the result's own
    ``_meta`` reach the caller as the upstream sent them (the gateway passes its JSON on).
    The upstream's identity does not: on 2026-07-28 the result names the gateway
    (basic/index.mdx, ``io.modelcontextprotocol/serverInfo``), on 2025-11-25 it has no
    ``resultType`` and no server identity, even from a 2026-07-28-only upstream."""
    only = upstream == "modern"
    async with gateway({"u": annotated("up", only_stateless=only)}, version=version) as (_, c):
        result = await c.call("u__report", {})
    text, image = result.content
    assert isinstance(text, t.TextContent) and text.text == "ünïcode ✓"
    assert isinstance(image, t.ImageContent) and (image.data, image.mime_type) == ("AAAA", "x/y")
    assert msgspec.json.decode(result.structured_content) == {"n": [1, 2.5, None]}
    assert result.is_error is True
    assert isinstance(result.meta, dict)
    assert result.meta["example.com/trace"] == {"id": "t1"}
    info = result.meta.get("io.modelcontextprotocol/serverInfo")
    if era_of(version).stateless:
        assert result.result_type == "complete"
        assert info == {"name": "mcpbind-gateway", "version": "0.1.0"}
    else:
        assert result.result_type is msgspec.UNSET
        assert info is None and set(result.meta) == {"example.com/trace"}


async def test_the_arguments_reach_the_server_as_the_caller_sent_them() -> None:
    """The gateway passes the caller's argument JSON on unchanged (no re-encoding)."""
    connect, wire = recorded(legacy("s"))
    async with gateway({"s": connect}, version=LATEST_HANDSHAKE) as (_, client):
        args = {"text": 'ünïcode ✓ "quoted"'}
        assert text_of(await client.call("s__echo", args)) == f"s: {args['text']}"
    sent = next(m for m in wire.received if m.get("method") == "tools/call")
    assert sent["params"] == {"name": "echo", "arguments": args}


async def test_the_gateway_is_made_before_the_host_starts_its_servers() -> None:
    """Made later, the servers' clients would have declared no sampling or elicitation: a
    clear error instead of a gateway that cannot relay."""
    async with Host({"a": normal("a")}) as host:
        with pytest.raises(RuntimeError, match="before entering the host"):
            host.as_server()


def completing(name: str) -> Server:
    """A prompt and a template whose arguments complete with the server's name in them."""
    server = Server(name, version="1.0.0")

    @server.prompt()
    def greet(who: str) -> str:
        return f"Hello {who}"

    @server.resource_template(f"mem://{name}/users/{{user}}")
    def user(user: str) -> str:
        return user

    @server.completion()
    async def complete(ref: Any, argument: Any, context: dict[str, str] | None) -> list[str]:
        kind = "prompt" if isinstance(ref, t.PromptReference) else "template"
        target = ref.name if isinstance(ref, t.PromptReference) else ref.uri
        return [f"{name} {kind} {target} {argument.name}={argument.value}"]

    return server


@pytest.mark.parametrize("version", ERAS)
async def test_completion_is_answered_by_the_server_that_owns_the_reference(
    version: str,
) -> None:
    """server/utilities/completion.mdx: a prompt's argument (by its host name: the server
    sees its own name) and a template's variable, completed by their server; a reference
    nobody owns completes to nothing."""
    servers = {"x": completing("x"), "y": completing("y")}
    async with gateway(servers, version=version) as (_, client):
        argument = t.CompleteRequestParamsArgument(name="who", value="A")
        prompt = await client.complete(
            t.CompleteRequestParams(ref=t.PromptReference(name="y__greet"), argument=argument)
        )
        assert prompt.completion.values == ["y prompt greet who=A"]
        uri = "mem://x/users/{user}"
        template = await client.complete(
            t.CompleteRequestParams(
                ref=t.ResourceTemplateReference(uri=uri),
                argument=t.CompleteRequestParamsArgument(name="user", value="b"),
            )
        )
        assert template.completion.values == [f"x template {uri} user=b"]
        nobody = await client.complete(
            t.CompleteRequestParams(
                ref=t.ResourceTemplateReference(uri="mem://z/{q}"), argument=argument
            )
        )
        assert nobody.completion.values == []


def tasked(ended: list[str]) -> Server:
    """Tools its server runs only as tasks (tasks.mdx §Tool-Level Negotiation)."""
    server = Server("jobs", version="1.0.0")
    Tasks(server, poll_interval_ms=20)

    @server.tool(task="required", annotations=READ_ONLY)
    async def build(steps: int, task: TaskContext) -> str:
        for step in range(1, steps + 1):
            await task.status(f"step {step}")
            await anyio.sleep(0.02)
        return f"built in {steps} steps"

    @server.tool(task="required", annotations=READ_ONLY)
    async def forever(task: TaskContext) -> str:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            ended.append("cancelled")
            raise
        return "never"

    return server


@pytest.mark.parametrize("version", ERAS)
async def test_a_task_required_tool_is_run_as_a_task_upstream(version: str) -> None:
    """basic/utilities/tasks.mdx: a client that asks for no task may call it (§Tool-Level
    Negotiation: listed ``optional``, test_gateway_tasks.py passes tasks through); the gateway
    calls it as a task, waits for the result and answers the call with it. Cancelling the call
    cancels the task (§Cancelling Tasks)."""
    ended: list[str] = []
    async with gateway({"j": tasked(ended)}, version=version) as (_, client):
        listed = [tool async for tool in client.iter_tools() if tool.name == "j__build"].pop()
        assert isinstance(listed.execution, t.ToolExecution)
        assert listed.execution.task_support == "optional"
        assert text_of(await client.call("j__build", {"steps": 2})) == "built in 2 steps"
        with anyio.move_on_after(0.3):
            await client.call("j__forever", {})
        await wait_for(lambda: ended == ["cancelled"])


@pytest.mark.parametrize("version", ERAS)
async def test_a_server_dying_mid_call_is_one_clear_error_and_the_gateway_serves_on(
    version: str,
) -> None:
    """The upstream process exits during the call: the caller gets one line naming the
    server (not a crash, not a hang); the other server still answers, and so does the same
    server once the Host has restarted it."""
    servers = {"c": stdio("crashy"), "a": normal("a")}
    backoff = Backoff(initial=0.05, maximum=0.1)
    async with gateway(servers, version=version, backoff=backoff) as (host, client):
        with pytest.raises(McpError) as caught:
            await client.call("c__crash", {})
        assert caught.value.message.startswith("server 'c' closed the connection: ")
        assert "\n" not in caught.value.message
        assert text_of(await client.call("a__echo", {"text": "x"})) == "a: x"
        await wait_for(lambda: host.supervisor.handle("c").status == "running", 30)
        assert text_of(await client.call("c__echo", {"text": "y"})).startswith("crashy: y")
