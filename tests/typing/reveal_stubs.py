"""Checked by mypy only (tests/typing/test_reveal.py): the stubs' result types, per direction and version.

Each `reveal_type` line carries its expected type in an "expect" comment; lines with an "error" comment must fail.
"""

from __future__ import annotations

from mcpbind_types import unified as U
from mcpbind_types import v2024_11_05 as V24
from mcpbind_types import v2025_03_26 as V2503
from mcpbind_types import v2025_06_18 as V2506
from mcpbind_types import v2025_11_25 as V25
from mcpbind_types import v2026_07_28 as V26
from mcpbind_types.unified import stubs as us
from mcpbind_types.v2024_11_05 import stubs as s24
from mcpbind_types.v2025_03_26 import stubs as s2503
from mcpbind_types.v2025_06_18 import stubs as s2506
from mcpbind_types.v2025_11_25 import stubs as s25
from mcpbind_types.v2026_07_28 import stubs as s26


async def unified(server: us.ServerMethods, client: us.ClientMethods) -> None:
    reveal_type(await server.call_tool(U.CallToolRequestParams(name="x")))  # expect: mcpbind_types.unified.types.CallToolResult
    reveal_type(await server.list_tools())  # expect: mcpbind_types.unified.types.ListToolsResult
    reveal_type(await server.read_resource(U.ReadResourceRequestParams(uri="file:///a")))  # expect: mcpbind_types.unified.types.ReadResourceResult
    reveal_type(await server.discover())  # expect: mcpbind_types.unified.types.DiscoverResult
    reveal_type(await server.ping())  # expect: dict[str, Any]
    reveal_type(await client.list_roots())  # expect: mcpbind_types.unified.types.ListRootsResult
    reveal_type(await client.create_message(U.CreateMessageRequestParams(max_tokens=5, messages=[])))  # expect: mcpbind_types.unified.types.CreateMessageResult
    reveal_type(await server.notify_initialized())  # expect: None
    await server.call_tool(U.ListToolsRequest())  # error: arg-type


async def v2024(server: s24.ServerMethods, client: s24.ClientMethods) -> None:
    reveal_type(await server.initialize(V24.InitializeRequestParams(capabilities=V24.ClientCapabilities(), client_info=V24.Implementation(name="a", version="1"), protocol_version="2024-11-05")))  # expect: mcpbind_types.v2024_11_05.types.InitializeResult
    reveal_type(await server.get_prompt(V24.GetPromptRequestParams(name="p")))  # expect: mcpbind_types.v2024_11_05.types.GetPromptResult
    reveal_type(await client.list_roots())  # expect: mcpbind_types.v2024_11_05.types.ListRootsResult
    await client.notify_progress(V24.ProgressNotificationParams(progress=0.5, progress_token=1))


async def v2025_03(server: s2503.ServerMethods, client: s2503.ClientMethods) -> None:
    reveal_type(await server.complete(V2503.CompleteRequestParams(argument=V2503.CompleteRequestParamsArgument(name="a", value="b"), ref=V2503.PromptReference(name="p"))))  # expect: mcpbind_types.v2025_03_26.types.CompleteResult
    reveal_type(await client.create_message(V2503.CreateMessageRequestParams(max_tokens=1, messages=[])))  # expect: mcpbind_types.v2025_03_26.types.CreateMessageResult


async def v2025_06(server: s2506.ServerMethods, client: s2506.ClientMethods) -> None:
    reveal_type(await server.list_resource_templates())  # expect: mcpbind_types.v2025_06_18.types.ListResourceTemplatesResult
    reveal_type(await client.elicit(V2506.ElicitRequestParams(message="m", requested_schema=V2506.ElicitRequestParamsRequestedSchema(properties={}, type="object"))))  # expect: mcpbind_types.v2025_06_18.types.ElicitResult


async def v2025_11(server: s25.ServerMethods, client: s25.ClientMethods) -> None:
    reveal_type(await server.call_tool(V25.CallToolRequestParams(name="x")))  # expect: mcpbind_types.v2025_11_25.types.CallToolResult
    reveal_type(await server.list_tasks())  # expect: mcpbind_types.v2025_11_25.types.ListTasksResult
    reveal_type(await client.elicit(V25.ElicitRequestURLParams(message="m", mode="url", url="https://x", elicitation_id="e")))  # expect: mcpbind_types.v2025_11_25.types.ElicitResult
    reveal_type(await server.set_level(V25.SetLevelRequestParams(level="info")))  # expect: dict[str, Any]
    await server.set_level(V25.SetLevelRequestParams(level="loud"))  # error: arg-type


async def v2026(server: s26.ServerMethods) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    reveal_type(await server.discover(V26.RequestParams(meta=meta)))  # expect: mcpbind_types.v2026_07_28.types.DiscoverResult
    reveal_type(await server.call_tool(V26.CallToolRequestParams(name="x", meta=meta)))  # expect: mcpbind_types.v2026_07_28.types.CallToolResult
    reveal_type(await server.subscriptions_listen(V26.SubscriptionsListenRequestParams(meta=meta, notifications=V26.SubscriptionFilter())))  # expect: mcpbind_types.v2026_07_28.types.SubscriptionsListenResult
