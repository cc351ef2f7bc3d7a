"""The mcpbind client under the official conformance suite's client scenarios.

The suite runs ``<command> <server url>`` with ``MCP_CONFORMANCE_SCENARIO``,
``MCP_CONFORMANCE_PROTOCOL_VERSION`` and (for some scenarios) ``MCP_CONFORMANCE_CONTEXT``
(JSON) in the environment, and judges what the client did against its mock server.
Run: ``conformance client --command "python conformance/everything_client.py"
--spec-version 2025-11-25``. Exit status 0 means the client finished its script.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec

from mcpbind import LATEST_HANDSHAKE, Client, ClientHandlers, json_object, types

logger = logging.getLogger("everything_client")

Scenario = Callable[[str], Awaitable[None]]


def connect(url: str, **options: Any) -> Client:
    """A client offering the version the suite asks for (MCP_CONFORMANCE_PROTOCOL_VERSION):
    a handshake version runs ``initialize``, 2026-07-28 the stateless era."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or LATEST_HANDSHAKE
    # The suite starts every scenario at once, each a new process: on a loaded 2-core
    # machine the first answer can take longer than the 10 s default discover probe.
    options.setdefault("probe_timeout", 60.0)
    return Client(
        url, name="mcpbind-conformance", version="0.1.0", protocol_version=version, **options
    )


async def initialize(url: str) -> None:
    """``initialize``: the handshake, then tools/list if the server offers tools."""
    async with connect(url) as client:
        if client.peer_has_capability(("tools",)):
            await client.list_tools()


async def tools_call(url: str) -> None:
    """``tools_call``: find ``add_numbers`` and call it with two numbers."""
    async with connect(url) as client:
        tools = await client.list_tools()
        for tool in tools.tools:
            if tool.name == "add_numbers":
                result = await client.call(tool.name, {"a": 5, "b": 3})
                logger.info("add_numbers: %s", result.content)


def _defaults(schema: Any) -> dict[str, Any]:
    """The ``default`` of every property of a requested elicitation schema (SEP-1034)."""
    plain = msgspec.to_builtins(schema)
    properties = plain.get("properties", {}) if isinstance(plain, dict) else {}
    return {
        name: spec["default"]
        for name, spec in properties.items()
        if isinstance(spec, dict) and "default" in spec
    }


async def accept_with_defaults(params: Any) -> types.ElicitResult:
    schema = getattr(params, "requested_schema", None)
    return types.ElicitResult(action="accept", content=_defaults(schema) if schema else {})


async def elicitation_defaults(url: str) -> None:
    """``elicitation-sep1034-client-defaults``: accept the server's elicitation with the
    schema's default values filled in."""
    handlers = ClientHandlers(elicitation=accept_with_defaults)
    async with connect(url, handlers=handlers) as client:
        tools = await client.list_tools()
        for tool in tools.tools:
            await client.call(tool.name, {})


async def sse_retry(url: str) -> None:
    """``sse-retry``: the tool's SSE stream closes after a priming event with ``retry``;
    the transport waits that long and resumes with GET + Last-Event-ID."""
    async with connect(url, timeout=20) as client:
        tools = await client.list_tools()
        for tool in tools.tools:
            result = await client.call(tool.name, {})
            logger.info("%s: %s", tool.name, result.content)


async def json_schema_preservation(url: str) -> None:
    """``json-schema-2020-12-preservation``: echo the focal tool's inputSchema back
    verbatim (mcpbind keeps schemas as raw JSON, so no keyword is lost)."""
    async with connect(url) as client:
        listed = await client.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        focal = json_object(tools["json_schema_2020_12_tool"].input_schema)
        await client.call("json_schema_echo", {"schema": focal})


async def _sample(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        content=types.TextContent(text="sampled"), model="none", role="assistant"
    )


async def request_metadata(url: str) -> None:
    """``request-metadata`` (2026-07-28): every request carries ``_meta`` (version, client
    info and capabilities) and a matching MCP-Protocol-Version header; the client retries
    with a version the server lists after an unsupported-version rejection."""
    handlers = ClientHandlers(
        sampling=_sample,
        elicitation=accept_with_defaults,
        roots=[types.Root(uri="file:///tmp", name="tmp")],
    )
    async with connect(url, handlers=handlers) as client:
        if client.peer_has_capability(("tools",)):
            await client.list_tools()


def _all_handlers() -> ClientHandlers:
    return ClientHandlers(
        sampling=_sample,
        elicitation=accept_with_defaults,
        roots=[types.Root(uri="file:///tmp", name="tmp")],
    )


def _context() -> dict[str, Any]:
    value = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    return value if isinstance(value, dict) else {}


async def call_every_tool(url: str) -> None:
    """``sep-2322-client-request-state``, ``http-custom-headers``, ``http-invalid-tool-headers``:
    list the tools (tools with invalid ``x-mcp-header`` annotations are left out by the client),
    then call the calls the context names, or every listed tool with no arguments. MRTR input
    requests are answered by the handlers and the call retried."""
    async with connect(url, handlers=_all_handlers()) as client:
        listed = [tool.name async for tool in client.iter_tools()]
        calls = _context().get("toolCalls")
        if not isinstance(calls, list):
            calls = [{"name": name, "arguments": {}} for name in listed]
        for call in calls:
            if call.get("name") in listed:
                result = await client.call(call["name"], call.get("arguments") or {})
                logger.info("%s: %s", call["name"], result.content)


async def list_tools_only(url: str) -> None:
    """``json-schema-ref-no-deref``: list the tools; a network ``$ref`` in a schema is kept
    as data and never fetched."""
    async with connect(url) as client:
        listed = await client.list_tools()
        logger.info("tools: %s", [tool.name for tool in listed.tools])


async def standard_headers(url: str) -> None:
    """``http-standard-headers``: one request of each kind, so every Mcp-Method / Mcp-Name
    header is exercised (tools, resources and prompts)."""
    async with connect(url) as client:
        if client.peer_has_capability(("tools",)):
            for tool in (await client.list_tools()).tools:
                await client.call(tool.name, {})
        if client.peer_has_capability(("resources",)):
            for resource in (await client.list_resources()).resources:
                await client.read_resource(types.ReadResourceRequestParams(uri=resource.uri))
        if client.peer_has_capability(("prompts",)):
            for prompt in (await client.list_prompts()).prompts:
                await client.get_prompt(types.GetPromptRequestParams(name=prompt.name))


CIMD_URL = "https://conformance-test.local/client-metadata.json"


def _auth_for(scenario: str) -> Any:
    """The ``auth=`` of an ``auth/*`` scenario: credentials from MCP_CONFORMANCE_CONTEXT,
    else the interactive flow with the headless redirect handler."""
    from mcpbind.auth.client import (
        ClientCredentials,
        EnterpriseManaged,
        HeadlessRedirect,
        JwtBearer,
        OAuth,
    )

    ctx = _context()
    if scenario == "auth/client-credentials-jwt":
        return ClientCredentials(
            ctx["client_id"],
            private_key=ctx["private_key_pem"],
            signing_algorithm=ctx.get("signing_algorithm", "ES256"),
        )
    if scenario == "auth/client-credentials-basic":
        return ClientCredentials(ctx["client_id"], client_secret=ctx["client_secret"])
    if scenario == "auth/enterprise-managed-authorization":
        return EnterpriseManaged(
            id_token=ctx["idp_id_token"],
            idp_token_endpoint=ctx["idp_token_endpoint"],
            idp_client_id=ctx.get("idp_client_id"),
            client_id=ctx["client_id"],
            client_secret=ctx.get("client_secret"),
        )
    if scenario == "auth/wif-jwt-bearer":
        return JwtBearer(ctx["valid_jwt"], client_id=ctx.get("client_id"))
    return OAuth(
        redirect_handler=HeadlessRedirect(),
        client_name="mcpbind-conformance",
        client_id=ctx.get("client_id"),
        client_secret=ctx.get("client_secret"),
        client_metadata_url=CIMD_URL,
    )


async def authorized(url: str) -> None:
    """``auth/*``: connect with the scenario's ``auth=``, list the tools and call each one
    (step-up and server-migration scenarios need a second, differently-scoped request)."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    async with connect(url, auth=_auth_for(scenario)) as client:
        if client.peer_has_capability(("tools",)) or client.era == "stateless":
            for tool in (await client.list_tools()).tools:
                result = await client.call(tool.name, {})
                logger.info("%s: %s", tool.name, result.content)


SCENARIOS: dict[str, Scenario] = {
    "sep-2322-client-request-state": call_every_tool,
    "http-custom-headers": call_every_tool,
    "http-invalid-tool-headers": call_every_tool,
    "http-standard-headers": standard_headers,
    "json-schema-ref-no-deref": list_tools_only,
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": json_schema_preservation,
    "request-metadata": request_metadata,
}


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    if len(sys.argv) < 2:
        print("usage: everything_client.py SERVER_URL", file=sys.stderr)
        return 2
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    logger.info("scenario %s, version %s, context %s, url %s", scenario, version, context, url)
    run = SCENARIOS.get(scenario) or (authorized if scenario.startswith("auth/") else None)
    if run is None:
        print(f"scenario {scenario!r} is not supported by this client", file=sys.stderr)
        return 1
    anyio.run(run, url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
