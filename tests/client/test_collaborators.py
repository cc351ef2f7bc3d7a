"""The client's collaborators through their declared interfaces (issue 29): negotiation
(``Offer`` in, ``Agreement`` out), the per-request ``_meta`` (``OutgoingMeta``), the 2026-07-28
``Pipeline`` over a ``PipelineOwner``, the ``Listener``, list refresh over a ``ListsOwner``,
tool headers, and what ``Client`` declares for them (``request_meta``, ``roots``,
``protocol_version``, ``request(info=)``, ``send_request`` picking the pipeline)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from mcpbind import Client, ClientHandlers, Server, json_value
from mcpbind import types as t
from mcpbind.client.cache import ResultCache
from mcpbind.client.connect import open_target
from mcpbind.client.listen import Listener
from mcpbind.client.negotiation import Agreement, Offer, negotiate, use_version
from mcpbind.client.outgoing_meta import OutgoingMeta
from mcpbind.client.pipeline import Pipeline
from mcpbind.client.refresh import start
from mcpbind.client.subscription import Subscription
from mcpbind.client.tool_headers import reread_tools, vet_tools
from mcpbind.connection import Connection
from mcpbind.protocol import LocalProtocolError, Session, State, custom_method
from mcpbind.protocol.meta import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROTOCOL_VERSION,
    with_meta,
)
from mcpbind.server.options import StatelessOptions
from mcpbind.versions import AUTO, HANDSHAKE_VERSIONS, LATEST_HANDSHAKE, LATEST_STATELESS
from mcpbind_types.unified import methods as m

pytestmark = pytest.mark.anyio

INFO = t.Implementation(name="collab", version="1")


def _server(*, handshake_only: bool = False) -> Server:
    options = StatelessOptions(versions=HANDSHAKE_VERSIONS) if handshake_only else None
    server = Server("collab", instructions="be kind", stateless=options or StatelessOptions())

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.resource("mem://a")
    def a() -> str:
        return "a"

    return server


async def _refuse(event: Any) -> Any:
    raise AssertionError(f"unexpected request {event.method}")  # pragma: no cover


@contextlib.asynccontextmanager
async def _connection(server: Server, version: str | None) -> AsyncIterator[Connection]:
    """A client connection to ``server`` in memory, its core created as ``Client`` does."""
    async with contextlib.AsyncExitStack() as stack:
        transport = await open_target(server, stack)
        core = Session("client", version)
        core.set_local_capabilities(t.ClientCapabilities())
        conn = Connection(core, transport, on_request=_refuse, default_timeout=10.0)
        await stack.enter_async_context(conn)
        yield conn


def _meta() -> OutgoingMeta:
    meta = OutgoingMeta()
    meta.introduce(t.ClientCapabilities(), INFO)
    return meta


# -- OutgoingMeta ------------------------------------------------------------------------------


def test_request_meta_names_the_version_and_encodes_once_per_change() -> None:
    """basic/index.mdx: every 2026-07-28 request carries the protocol version, the client's
    capabilities and info; logging.mdx (2026-07-28): the log level rides along when set."""
    meta = _meta()
    meta.use_version(LATEST_STATELESS)
    assert list(meta.fields) == [PROTOCOL_VERSION, CLIENT_CAPABILITIES, CLIENT_INFO]
    assert meta.fields[PROTOCOL_VERSION] == LATEST_STATELESS
    assert meta.fields[CLIENT_INFO] == {"name": "collab", "version": "1"}
    assert meta.encoded is None
    fields, raw = meta.wire()
    assert meta.wire() is meta.encoded and meta.encoded is not None  # cached
    assert msgspec.json.decode(raw) == fields == meta.fields
    meta.log_level = "debug"
    assert meta.encoded is None
    fields, raw = meta.wire()
    assert msgspec.json.decode(raw) == {**meta.fields, LOG_LEVEL: "debug"} == fields
    assert LOG_LEVEL not in meta.fields
    meta.use_version("2099-01-01")
    assert meta.encoded is None and meta.wire()[0][PROTOCOL_VERSION] == "2099-01-01"


# -- negotiation ------------------------------------------------------------------------------


async def test_negotiate_agrees_on_the_stateless_era_by_discover() -> None:
    """server/discover (lifecycle.mdx, 2026-07-28): the version the meta names, the
    server's capabilities, info and instructions come back as the Agreement."""
    meta = _meta()
    asked: list[str] = []

    def handshake_caps() -> t.ClientCapabilities:  # pragma: no cover - not asked here
        asked.append("handshake")
        return t.ClientCapabilities()

    async with _connection(_server(), LATEST_STATELESS) as conn:
        agreed = await negotiate(conn, Offer(AUTO, INFO, 10.0, 5.0), meta, handshake_caps)
        assert isinstance(agreed, Agreement) and agreed.era == "stateless"
        assert conn.core.version == LATEST_STATELESS == meta.fields[PROTOCOL_VERSION]
        assert agreed.server_info is not None and agreed.server_info.name == "collab"
        assert agreed.instructions == "be kind"
        assert agreed.server_capabilities.tools is not None
        assert conn.core.peer_capabilities is not None and "tools" in conn.core.peer_capabilities
    assert asked == []


async def test_negotiate_falls_back_to_the_handshake_on_the_same_connection() -> None:
    """transports/stdio.mdx, Backward Compatibility: a legacy server refuses the probe; the
    core renegotiates through its transition table and ``initialize`` runs next, declaring
    what the client's callback returns (asked once, only then)."""
    asked: list[str] = []

    def handshake_caps() -> t.ClientCapabilities:
        asked.append("handshake")
        return t.ClientCapabilities(roots=t.ClientCapabilitiesRoots())

    async with _connection(_server(handshake_only=True), LATEST_STATELESS) as conn:
        agreed = await negotiate(conn, Offer(AUTO, INFO, 10.0, 5.0), _meta(), handshake_caps)
        assert agreed.era == "handshake" and asked == ["handshake"]
        assert conn.core.version == LATEST_HANDSHAKE
        assert conn.core.state is State.OPERATING
        assert agreed.server_info is not None and agreed.server_info.name == "collab"
        assert agreed.instructions == "be kind"


async def test_use_version_switches_the_meta_and_the_session() -> None:
    """versioning.mdx §Protocol Version Negotiation: after a -32022 the client speaks a
    version from the server's list, in its ``_meta`` and its session alike."""
    meta = _meta()
    meta.use_version(LATEST_STATELESS)
    core = Session("client", LATEST_STATELESS)
    use_version(core, meta, "2099-01-01")
    assert core.version == "2099-01-01" == meta.fields[PROTOCOL_VERSION]


# -- the pipeline over a PipelineOwner ---------------------------------------------------------


class _Owner:
    """A PipelineOwner that is not a Client: what the pipeline reads, nothing more."""

    def __init__(self) -> None:
        self.handlers = ClientHandlers()
        self.roots: list[t.Root] = []
        self.cache: ResultCache | None = ResultCache()
        self.max_input_rounds = 2
        self.max_reissues = 3
        self.listed = 0

    async def iter_tools(self) -> AsyncIterator[t.Tool]:
        self.listed += 1
        yield t.Tool(name="x", input_schema={"type": "object"})


async def test_pipeline_sends_with_the_meta_and_reads_its_owner() -> None:
    """basic/index.mdx: requests carry the client's ``_meta``; a method is checked once per
    connection; logging/setLevel (logging.mdx, 2026-07-28) becomes the per-request level,
    refused like on the handshake era when the server declared no logging."""
    owner = _Owner()
    meta = _meta()
    meta.use_version(LATEST_STATELESS)
    async with _connection(_server(), LATEST_STATELESS) as conn:
        found = await conn.request("server/discover", with_meta(m.C2S_DISCOVER, None, meta.fields))
        caps = msgspec.to_builtins(found.capabilities)
        conn.core.set_peer_capabilities({k: v for k, v in caps.items() if k != "logging"})
        pipeline = Pipeline(conn, meta, owner, None)
        assert pipeline.meta is meta and pipeline.max_reissues == 3
        owner.max_reissues = 1  # read at each use
        assert pipeline.max_reissues == 1
        params = t.CallToolRequestParams(name="add", arguments={"a": 2, "b": 3})
        first = await pipeline.request(m.C2S_CALL_TOOL, params, None)
        again = await pipeline.request(m.C2S_CALL_TOOL, params, None)  # the shortest way
        assert first.structured_content == again.structured_content
        assert "tools/call" in pipeline.sendable
        listed = await pipeline.request(m.C2S_LIST_TOOLS, None, None)
        assert owner.cache is not None and owner.cache.get("tools/list", None) is listed
        with pytest.raises(LocalProtocolError, match="logging"):
            await pipeline.request(m.C2S_SET_LEVEL, t.SetLevelRequestParams(level="info"), None)
        assert meta.log_level is None
        conn.core.set_peer_capabilities({**caps, "logging": {}})
        assert (
            await pipeline.request(m.C2S_SET_LEVEL, t.SetLevelRequestParams(level="info"), None)
            == {}
        )
        assert meta.log_level == "info"


async def test_pipeline_switch_version_rewrites_the_meta_of_a_request() -> None:
    """versioning.mdx §Protocol Version Negotiation: the retried request names the version
    switched to, whether its ``_meta`` was the client's (encoded) or its own (a dict)."""
    meta = _meta()
    meta.use_version(LATEST_STATELESS)
    async with _connection(_server(), LATEST_STATELESS) as conn:
        pipeline = Pipeline(conn, meta, _Owner(), None)
        own = pipeline.switch_version({"_meta": {"k": 1, PROTOCOL_VERSION: "old"}}, "2099-01-01")
        assert own == {"_meta": {"k": 1, PROTOCOL_VERSION: "2099-01-01"}}
        encoded = pipeline.switch_version(t.PaginatedRequestParams(), "2099-02-02")
        assert msgspec.json.decode(encoded.meta)[PROTOCOL_VERSION] == "2099-02-02"
        assert conn.core.version == "2099-02-02" == meta.fields[PROTOCOL_VERSION]


# -- tool headers, list refresh, listen ----------------------------------------------------------


async def test_tool_headers_take_the_registry_and_the_cache() -> None:
    """streamable-http.mdx §Schema Extension: header paths kept per tool, an invalid one left
    out; after a HeaderMismatch the list is read again past the cache."""
    schema = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    }
    bad = {"type": "object", "properties": {"r": {"type": "object", "x-mcp-header": "R"}}}
    listed = t.ListToolsResult(
        tools=[
            t.Tool(name="good", input_schema=schema),
            t.Tool(name="bad", input_schema=bad),
            t.Tool(name="plain", input_schema={"type": "object"}),
        ]
    )
    registry: dict[str, Any] = {"plain": ["stale"]}
    kept = vet_tools(registry, listed)
    assert [tool.name for tool in kept.tools] == ["good", "plain"]
    assert list(registry) == ["good"]
    assert vet_tools(None, listed) is listed  # a transport without a registry
    owner = _Owner()
    assert owner.cache is not None
    owner.cache.put("tools/list", None, listed)
    await reread_tools(owner.cache, owner.iter_tools)
    assert owner.listed == 1 and owner.cache.get("tools/list", None) is None


class _Lists:
    """A ListsOwner that is not a Client (handshake era: lists are fetched, no listen)."""

    def __init__(self) -> None:
        self.era: str | None = "handshake"
        self.tools: list[t.Tool] | None = None
        self.resources: list[t.Resource] | None = None
        self.prompts: list[t.Prompt] | None = None
        self.lists_subscription: Subscription | None = None

    def peer_has_capability(self, path: tuple[str, ...]) -> bool:
        return path[0] == "tools"

    async def listen(self, **wanted: Any) -> Subscription:  # pragma: no cover - handshake
        raise AssertionError(wanted)

    async def iter_tools(self) -> AsyncIterator[t.Tool]:
        yield t.Tool(name="x", input_schema={"type": "object"})

    async def iter_resources(self) -> AsyncIterator[t.Resource]:  # pragma: no cover
        raise AssertionError("resources were not declared")
        yield

    async def iter_prompts(self) -> AsyncIterator[t.Prompt]:  # pragma: no cover
        raise AssertionError("prompts were not declared")
        yield


async def test_refresh_fills_the_lists_its_owner_declares() -> None:
    lists = _Lists()
    await start(lists)
    assert lists.tools is not None and [tool.name for tool in lists.tools] == ["x"]
    assert lists.resources is None and lists.prompts is None


async def test_listener_holds_resource_subscriptions_through_its_callables() -> None:
    """basic/patterns/subscriptions.mdx, handshake era: ``resources/subscribe`` per URI
    until ``close()``, then ``resources/unsubscribe``."""
    calls: list[tuple[str, str]] = []

    async def subscribe(uri: str) -> None:
        calls.append(("subscribe", uri))

    async def unsubscribe(uri: str) -> None:
        calls.append(("unsubscribe", uri))

    async with _connection(_server(), None) as conn:
        listener = Listener(conn, None, subscribe, unsubscribe)
        sub = await listener.open(t.SubscriptionFilter(resource_subscriptions=["mem://a"]))
        assert calls == [("subscribe", "mem://a")] and sub.active and not sub.closing
        await sub.close()
        assert sub.closing and not sub.active
        assert calls == [("subscribe", "mem://a"), ("unsubscribe", "mem://a")]


# -- what Client declares for them -------------------------------------------------------------


async def test_client_declares_what_its_collaborators_read() -> None:
    roots = [t.Root(uri="file:///tmp")]
    client = Client(_server(), handlers=ClientHandlers(roots=roots), log_level="info")
    assert client.protocol_version is None and client.roots == roots
    async with client:
        assert client.era == "stateless" and client.protocol_version == LATEST_STATELESS
        assert client.request_meta[PROTOCOL_VERSION] == LATEST_STATELESS
        assert LOG_LEVEL not in client.request_meta and client.log_level == "info"
        # send_request stays the class's method: the path was picked once, at connect
        assert "send_request" not in vars(client)
        assert json_value((await client.call("add", {"a": 1, "b": 2})).structured_content) == {
            "result": 3
        }
        row = custom_method("tools/list", "client_to_server")  # plain JSON back
        listed = await client.request("tools/list", None, info=row)
        assert isinstance(listed, dict) and listed["tools"][0]["name"] == "add"
        await client.set_roots([])
        assert client.roots == []
    async with Client(_server(), protocol_version=LATEST_HANDSHAKE) as old:
        assert old.era == "handshake" and old.protocol_version == LATEST_HANDSHAKE
        assert "send_request" not in vars(old)
        assert json_value((await old.call("add", {"a": 1, "b": 2})).structured_content) == {
            "result": 3
        }
