"""``Server.mount(other, prefix)``: another server's tools, resources, templates and prompts
inside a server, names prefixed, capabilities merged, changes passed on, the other server's
middleware, visibility, scopes and lifespan kept, and nothing serialised on the way.

Spec (2025-11-25 unless named): server/tools.mdx §Listing Tools, §Calling Tools, §Tool Names,
§List Changed Notification, §Error Handling; server/resources.mdx §Listing Resources, §Reading
Resources, §Resource Templates, §Subscriptions, §Error Handling; server/prompts.mdx §Getting a
Prompt; server/utilities/completion.mdx; basic/lifecycle.mdx §Capability Negotiation;
2026-07-28 server/discover.mdx and server/utilities/caching.mdx (``cacheScope``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import (
    LATEST_HANDSHAKE,
    LATEST_STATELESS,
    Client,
    ClientHandlers,
    Context,
    McpError,
    RequestOptions,
    Server,
)
from mcpbind import types as t
from mcpbind.server import IncomingCall, Next
from mcpbind.server.lifespan import LifespanError
from mcpbind.server.tasks import Tasks

pytestmark = pytest.mark.anyio

ERAS = pytest.mark.parametrize("era", [LATEST_HANDSHAKE, LATEST_STATELESS])


def _weather() -> Server:
    child = Server("weather")

    @child.tool()
    def forecast(city: str) -> str:
        """The forecast for a city."""
        return f"sun in {city}"

    @child.resource("data://config", mime_type="text/plain")
    def config() -> str:
        return "units=metric"

    @child.resource_template("weather://{city}/now")
    def now(city: str) -> str:
        return f"now in {city}"

    @child.prompt()
    def ask(topic: str) -> str:
        """Ask about a topic."""
        return f"tell me about {topic}"

    return child


def _main() -> Server:
    parent = Server("main")

    @parent.tool()
    def hello() -> str:
        """Say hello."""
        return "hello"

    return parent


def _text(result: Any) -> str:
    (block,) = result.content if hasattr(result, "content") else result.contents
    text: str = block.text
    return text


class Notes:
    """A ``ClientHandlers.notification`` callback that keeps what arrived."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []

    async def __call__(self, method: str, params: Any) -> None:
        self.items.append((method, params))

    def of(self, method: str) -> list[Any]:
        return [params for name, params in self.items if name == method]


async def _until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(5):
        while not condition():  # noqa: ASYNC110 - polls what the session's tasks record
            await anyio.sleep(0.01)


# ---------------------------------------------------------------------- names and routing
@ERAS
async def test_tools_are_listed_and_called_under_the_prefix(era: str) -> None:
    """tools.mdx §Listing Tools / §Calling Tools / §Tool Names: a mounted tool ``forecast``
    is listed as ``weather_forecast`` (a valid tool name) beside the server's own, with its
    schema and description, and a call by that name runs it."""
    parent = _main()
    parent.mount(_weather(), prefix="weather")
    async with Client(parent, protocol_version=era) as client:
        tools = {tool.name: tool async for tool in client.iter_tools()}
        assert list(tools) == ["hello", "weather_forecast"]
        assert tools["weather_forecast"].description == "The forecast for a city."
        assert _text(await client.call("weather_forecast", {"city": "Oslo"})) == "sun in Oslo"
        assert _text(await client.call("hello")) == "hello"
        with pytest.raises(McpError, match=r" Unknown tool: weather_nope$") as caught:
            await client.call("weather_nope")
        assert caught.value.code == -32602


@ERAS
async def test_resources_and_templates_are_read_under_the_prefixed_uri(era: str) -> None:
    """resources.mdx §Listing Resources / §Reading Resources / §Resource Templates: the
    prefix is the first segment after the scheme, in the listing, in the read and in the
    contents' ``uri``; an unknown URI under the prefix is -32002 naming it (§Error Handling)."""
    parent = _main()
    parent.mount(_weather(), prefix="weather")
    async with Client(parent, protocol_version=era) as client:
        listed = await client.list_resources()
        assert [(r.uri, r.mime_type) for r in listed.resources] == [
            ("data://weather/config", "text/plain")
        ]
        templates = await client.list_resource_templates()
        assert [tpl.uri_template for tpl in templates.resource_templates] == [
            "weather://weather/{city}/now"
        ]
        read = await client.read_resource(t.ReadResourceRequestParams(uri="data://weather/config"))
        assert [(c.uri, c.text) for c in read.contents] == [  # type: ignore[union-attr]
            ("data://weather/config", "units=metric")
        ]
        read = await client.read_resource(
            t.ReadResourceRequestParams(uri="weather://weather/Paris/now")
        )
        assert [(c.uri, c.text) for c in read.contents] == [  # type: ignore[union-attr]
            ("weather://weather/Paris/now", "now in Paris")
        ]
        with pytest.raises(McpError) as unknown:  # the era's code for an unknown resource
            await client.read_resource(t.ReadResourceRequestParams(uri="data://nowhere"))
        with pytest.raises(McpError) as caught:
            await client.read_resource(t.ReadResourceRequestParams(uri="data://weather/nope"))
        assert (caught.value.code, caught.value.message) == (
            unknown.value.code,
            "Resource not found: data://weather/nope",
        )


@ERAS
async def test_prompts_and_their_completions_are_reached_under_the_prefix(era: str) -> None:
    """prompts.mdx §Getting a Prompt and completion.mdx: ``weather_ask`` is the mounted
    ``ask``; a completion for it is answered by the mounted server, which sees its own name."""
    child = _weather()
    refs: list[Any] = []

    @child.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        refs.append(ref)
        return [f"{argument.value}-1", f"{argument.value}-2"]

    parent = _main()
    parent.mount(child, prefix="weather")
    async with Client(parent, protocol_version=era) as client:
        assert [p.name for p in (await client.list_prompts()).prompts] == ["weather_ask"]
        got = await client.get_prompt(
            t.GetPromptRequestParams(name="weather_ask", arguments={"topic": "rain"})
        )
        assert got.messages[0].content.text == "tell me about rain"  # type: ignore[union-attr]
        done = await client.complete(
            t.CompleteRequestParams(
                ref=t.PromptReference(name="weather_ask"),
                argument=t.CompleteRequestParamsArgument(name="topic", value="ra"),
            )
        )
        assert done.completion.values == ["ra-1", "ra-2"]
        assert [ref.name for ref in refs] == ["ask"]
        with pytest.raises(McpError, match=r" Unknown prompt: weather_nope$"):
            await client.get_prompt(t.GetPromptRequestParams(name="weather_nope"))


async def test_a_server_mounted_in_a_mounted_server_gets_both_prefixes() -> None:
    """Mounting nests: ``forecast`` of a server mounted as ``weather`` in one mounted as
    ``ext`` is ``ext_weather_forecast``; its resource ``data://ext/weather/config``."""
    middle = Server("middle")
    middle.mount(_weather(), prefix="weather")
    parent = _main()
    parent.mount(middle, prefix="ext")
    async with Client(parent) as client:
        assert [tool.name async for tool in client.iter_tools()] == [
            "hello",
            "ext_weather_forecast",
        ]
        assert _text(await client.call("ext_weather_forecast", {"city": "Rome"})) == "sun in Rome"
        read = await client.read_resource(
            t.ReadResourceRequestParams(uri="data://ext/weather/config")
        )
        assert read.contents[0].uri == "data://ext/weather/config"


# ---------------------------------------------------------------------- capabilities, changes
@ERAS
async def test_capabilities_are_merged(era: str) -> None:
    """lifecycle.mdx §Capability Negotiation (2026-07-28: server/discover.mdx): a server
    with tools alone that mounts one with resources, prompts and completions declares them."""
    child = _weather()

    @child.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        return []

    alone = _main()
    async with Client(alone, protocol_version=era) as client:
        caps = client.server_capabilities
        assert caps is not None and caps.prompts is t.UNSET and caps.completions is t.UNSET
    parent = _main()
    parent.mount(child, prefix="weather")
    async with Client(parent, protocol_version=era) as client:
        caps = client.server_capabilities
        assert caps is not None
        assert caps.prompts == t.ServerCapabilitiesPrompts(list_changed=True)
        assert caps.resources == t.ServerCapabilitiesResources(list_changed=True, subscribe=True)
        assert caps.completions == {}


@ERAS
async def test_changes_of_the_mounted_server_reach_the_clients(era: str) -> None:
    """tools.mdx §List Changed Notification and resources.mdx §Subscriptions: a tool the
    mounted server registers is announced to the mounting server's clients and listed
    prefixed; an update of a mounted resource arrives under its prefixed URI."""
    child = _weather()
    parent = _main()
    parent.mount(child, prefix="weather")
    notes = Notes()
    handlers = ClientHandlers(notification=notes)
    async with Client(parent, protocol_version=era, handlers=handlers, cache=False) as client:
        await client.listen(tools_list_changed=True, resource_uris=["data://weather/config"])

        def later() -> str:
            """Registered late."""
            return "late"

        child.tool("late")(later)
        await _until(lambda: bool(notes.of("notifications/tools/list_changed")))
        assert "weather_late" in [tool.name async for tool in client.iter_tools()]
        child.resource_updated("data://config")
        await _until(lambda: bool(notes.of("notifications/resources/updated")))
        (updated,) = notes.of("notifications/resources/updated")
        uri = updated.uri if hasattr(updated, "uri") else updated["uri"]
        assert uri == "data://weather/config"


@ERAS
async def test_mounting_and_unmounting_while_serving_send_list_changed(era: str) -> None:
    """tools.mdx §List Changed Notification: mounting after serving started announces the
    new tools; unmounting announces their removal, and a call of one is then unknown
    (§Error Handling)."""
    parent = _main()
    notes = Notes()
    handlers = ClientHandlers(notification=notes)
    changed = "notifications/tools/list_changed"
    async with Client(parent, protocol_version=era, handlers=handlers, cache=False) as client:
        await client.listen(tools_list_changed=True)
        assert [tool.name async for tool in client.iter_tools()] == ["hello"]  # initialized
        parent.mount(_weather(), prefix="weather")
        await _until(lambda: len(notes.of(changed)) == 1)
        assert _text(await client.call("weather_forecast", {"city": "Lima"})) == "sun in Lima"
        parent.unmount("weather")
        await _until(lambda: len(notes.of(changed)) == 2)
        assert [tool.name async for tool in client.iter_tools()] == ["hello"]
        with pytest.raises(McpError, match=r" Unknown tool: weather_forecast$"):
            await client.call("weather_forecast", {"city": "Lima"})
    with pytest.raises(KeyError, match="nothing is mounted under the prefix 'weather'"):
        parent.unmount("weather")


# ---------------------------------------------------------------------- collisions
def _with_tasks() -> Server:
    jobs = Server("jobs")
    Tasks(jobs)
    return jobs


def test_collisions_are_refused_with_one_line() -> None:
    """tools.mdx §Tool Names (unique within a server): a prefix used twice, one that would
    share names with another, an own tool or URI the mount would shadow, a later own
    registration a mount already serves, an invalid prefix and a cycle are refused."""
    parent = _main()

    @parent.tool("weather_forecast")
    def mine() -> str:
        return "mine"

    @parent.resource("data://weather/config")
    def config() -> str:
        return "mine"

    cases: list[tuple[Callable[[], None], str]] = [
        (
            lambda: parent.mount(_weather(), prefix="weather"),
            "tool 'weather_forecast' of mounted server 'weather' collides with one of "
            "server 'main'",
        ),
        (lambda: parent.mount(_weather(), prefix="bad prefix"), "invalid mount prefix"),
        (lambda: parent.mount(_weather(), prefix=""), "invalid mount prefix"),
        (lambda: parent.mount(parent, prefix="me"), "cannot mount server 'main' inside itself"),
        (
            lambda: parent.mount(_with_tasks(), prefix="tasks"),
            "server 'jobs' has extensions (tasks): mounting it is not supported",
        ),
    ]
    for attempt, message in cases:
        with pytest.raises(ValueError) as caught:
            attempt()
        assert message in str(caught.value) and "\n" not in str(caught.value)
    parent.remove_tool("weather_forecast")
    with pytest.raises(ValueError, match=r"resource 'data://weather/config' of mounted server"):
        parent.mount(_weather(), prefix="weather")
    parent.remove_resource("data://weather/config")
    child = _weather()
    parent.mount(child, prefix="weather")
    with pytest.raises(ValueError, match=r"^the prefix 'weather' is already mounted"):
        parent.mount(_weather(), prefix="weather")
    with pytest.raises(ValueError, match=r"would share names with the mounted prefix 'weather'"):
        parent.mount(Server("x"), prefix="weather_eu")
    with pytest.raises(ValueError, match=r"^tool 'weather_forecast' collides with one of mounted"):
        parent.tool("weather_forecast")(mine)
    with pytest.raises(ValueError, match=r"^prompt 'weather_ask' collides with one of mounted"):
        parent.prompt("weather_ask")(mine)
    with pytest.raises(ValueError, match=r"^cannot mount server 'main' inside server 'weather'"):
        child.mount(parent, prefix="loop")
    assert list(parent.tools) == ["hello"] and list(parent.prompts) == []


# ---------------------------------------------------------------------- what the child keeps
@ERAS
async def test_the_mounted_servers_middleware_visibility_and_switches_apply(era: str) -> None:
    """The mounted server's middleware sees its own names; an item its ``visible`` rule
    hides, or one switched off on either side, is neither listed nor callable (tools.mdx
    §Error Handling: unknown); a listing that depends on the caller is not a shared cache
    entry on 2026-07-28 (caching.mdx, ``cacheScope: "private"``)."""
    seen: list[str | None] = []

    async def record(call: IncomingCall, call_next: Next) -> Any:
        seen.append(call.target)
        return await call_next(call)

    child = Server("weather", middleware=[record])

    @child.tool(visible=lambda ctx: ctx.session_state.get("admin") is True)
    def secret() -> str:
        return "secret"

    @child.tool()
    def rain() -> str:
        return "rain"

    @child.tool()
    def snow() -> str:
        return "snow"

    parent = _main()
    parent.mount(child, prefix="weather")
    child.disable(tool="snow")
    async with Client(parent, protocol_version=era, cache=False) as client:
        listed = await client.list_tools()
        assert [tool.name for tool in listed.tools] == ["hello", "weather_rain"]
        if era == LATEST_STATELESS:
            assert listed.cache_scope == "private"
        assert _text(await client.call("weather_rain")) == "rain"
        for hidden in ("weather_secret", "weather_snow"):
            with pytest.raises(McpError, match=f" Unknown tool: {hidden}$"):
                await client.call(hidden)
        parent.disable(tool="weather_rain")
        assert [tool.name async for tool in client.iter_tools()] == ["hello"]
        with pytest.raises(McpError, match=r" Unknown tool: weather_rain$"):
            await client.call("weather_rain")
    assert None in seen and "rain" in seen and "weather_rain" not in seen


def test_the_mounted_servers_scopes_are_declared_under_the_prefixed_names() -> None:
    """authorization.mdx §Scope Challenge Handling: the scopes a mounted tool, prompt,
    resource or template declares are what the auth layer asks of a call to it by its
    prefixed name; an own name shadowing nothing declares none."""
    child = Server("weather")

    @child.tool(scopes=["weather:read"])
    def forecast() -> str:
        return "sun"

    @child.resource_template("weather://{city}/now", scopes=["weather:city"])
    def now(city: str) -> str:
        return city

    parent = _main()
    parent.mount(child, prefix="weather")
    assert parent.declared_scopes("tools/call", "weather_forecast") == {"weather:read"}
    assert parent.declared_scopes("resources/read", "weather://weather/Oslo/now") == {
        "weather:city"
    }
    assert parent.declared_scopes("tools/call", "hello") == frozenset()
    assert parent.declared_scopes("tools/call", "weather_nope") == frozenset()


# ---------------------------------------------------------------------- no serialisation
@ERAS
async def test_a_mounted_call_gets_the_callers_objects_as_they_are(era: str) -> None:
    """The in-process case costs no serialisation: the mounted server's middleware and tool
    get the very objects the mounting server's middleware had (the raw arguments, the
    context), and the result it returns is the very one the mounting server answers with."""
    seen: dict[str, Any] = {}

    def recorder(side: str) -> Any:
        async def record(call: IncomingCall, call_next: Next) -> Any:
            if call.method == "tools/call":
                seen[f"{side} call"] = call
                seen[f"{side} result"] = result = await call_next(call)
                return result
            return await call_next(call)

        return record

    child = Server("weather", middleware=[recorder("inner")])

    @child.tool()
    async def forecast(city: str, ctx: Context) -> str:
        seen["tool context"] = ctx
        return f"sun in {city}"

    parent = Server("main", middleware=[recorder("outer")])
    parent.mount(child, prefix="weather")
    async with Client(parent, protocol_version=era) as client:
        assert _text(await client.call("weather_forecast", {"city": "Oslo"})) == "sun in Oslo"
    outer, inner = seen["outer call"], seen["inner call"]
    assert (outer.params.name, inner.params.name) == ("weather_forecast", "forecast")
    assert inner.params.arguments is outer.params.arguments
    assert inner.context is outer.context is seen["tool context"]
    assert seen["inner result"] is seen["outer result"]


@ERAS
async def test_a_mounted_tool_asks_the_client_and_reports_progress(era: str) -> None:
    """client/sampling.mdx, and on 2026-07-28 mrtr.mdx (the input round is the mounting
    server's, the retry routed to the mounted tool again); basic/utilities/progress.mdx: the
    mounted tool's progress reaches the caller with the caller's token."""
    child = Server("geo")

    @child.tool()
    async def capital(country: str, ctx: Context) -> str:
        await ctx.report_progress(1, 2, "asking")
        question = t.CreateMessageRequestParams(
            messages=[
                t.SamplingMessage(role="user", content=t.TextContent(text=f"capital of {country}?"))
            ],
            max_tokens=10,
        )
        result = await ctx.sample(question, key="capital")
        return result.content.text if isinstance(result.content, t.TextContent) else "?"

    async def sample(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(text="Paris"), model="test-model"
        )

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    parent = _main()
    parent.mount(child, prefix="geo")
    handlers = ClientHandlers(sampling=sample)
    async with Client(parent, protocol_version=era, handlers=handlers) as client:
        result = await client.call(
            "geo_capital", {"country": "France"}, options=RequestOptions(on_progress=on_progress)
        )
    assert _text(result) == "Paris"
    assert progress and progress[0] == 1


# ---------------------------------------------------------------------- lifespans
def _lifespan(events: list[str], name: str, fail: bool = False) -> Any:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        events.append(f"{name} up")
        if fail:
            raise RuntimeError("no database")
        yield f"{name} state"
        events.append(f"{name} down")

    return lifespan


def _state_tool(server: Server) -> None:
    @server.tool()
    def state(ctx: Context) -> str:
        return str(ctx.lifespan_state)


@ERAS
async def test_the_mounted_servers_lifespan_runs_with_the_mounting_servers(era: str) -> None:
    """The mounted server's lifespan starts before the mounting server's and stops after
    it; each server's handlers see their own server's lifespan value."""
    events: list[str] = []
    child = Server("weather", lifespan=_lifespan(events, "weather"))
    _state_tool(child)
    parent = Server("main", lifespan=_lifespan(events, "main"))
    _state_tool(parent)
    parent.mount(child, prefix="weather")
    async with Client(parent, protocol_version=era) as client:
        assert events == ["weather up", "main up"]
        assert _text(await client.call("state")) == "main state"
        assert _text(await client.call("weather_state")) == "weather state"
    assert events == ["weather up", "main up", "main down", "weather down"]


async def test_a_server_mounted_while_serving_has_its_lifespan_started_and_stopped() -> None:
    """Mounted while the mounting server's lifespan runs: started then; unmounted: stopped.
    A mounting server without a lifespan of its own still runs its mounts'."""
    events: list[str] = []
    late = Server("late", lifespan=_lifespan(events, "late"))
    _state_tool(late)
    parent = Server("main", lifespan=_lifespan(events, "main"))
    _state_tool(parent)
    async with Client(parent) as client:
        parent.mount(late, prefix="late")
        await _until(lambda: "late up" in events)
        assert _text(await client.call("late_state")) == "late state"
        parent.unmount("late")
        await _until(lambda: "late down" in events)
    assert events == ["main up", "late up", "late down", "main down"]
    events.clear()
    bare = Server("bare")
    bare.mount(late, prefix="late")
    async with Client(bare) as client:
        assert _text(await client.call("late_state")) == "late state"
    assert events == ["late up", "late down"]


async def test_a_mounted_lifespan_that_fails_names_its_server() -> None:
    """A mounted server's lifespan failing at start fails the mounting server's start with
    one line naming the mounted server; nothing stays started."""
    events: list[str] = []
    parent = Server("main", lifespan=_lifespan(events, "main"))
    parent.mount(Server("db", lifespan=_lifespan(events, "db", fail=True)), prefix="db")
    with pytest.raises(LifespanError) as caught:
        async with Client(parent):
            pass
    assert str(caught.value) == (
        "the lifespan of server 'db' failed to start: RuntimeError: no database"
    )
    assert events == ["db up"]
