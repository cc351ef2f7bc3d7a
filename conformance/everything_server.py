"""The mcpbind "everything server" for the official conformance suite's server scenarios.

Every tool, resource, prompt and behaviour the 2025-11-25 server scenarios ask for, served with
``StreamableHTTPApp`` on 127.0.0.1 (DNS-rebinding protection on: loopback Host/Origin only),
with an in-memory event store so SSE streams are resumable and ``test_reconnection`` can make
the client poll (SEP-1699).

    python conformance/everything_server.py --port 3001   # http://127.0.0.1:3001/mcp
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpbind import Context, Server
from mcpbind import types as t
from mcpbind.http import InMemoryEventStore, StreamableHTTPApp, close_sse_stream, serve_http


def _stateless_tools(name: str = "stateless_tools") -> Callable[[Server], object]:
    """``register_<name>`` from the sibling <name>.py, however this file was loaded (as a
    script, by path from the tests, or as a package module)."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"mcpbind_conformance_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    register: Callable[[Server], object] = getattr(module, f"register_{name}")
    return register


__all__ = ["build_app", "create_server", "main"]

# A 1x1 red PNG and a tiny silent WAV: the scenarios only check type, data and mimeType.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = base64.b64encode(
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00"
    b"\x80>\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00"
).decode()

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def _text(text: str) -> t.TextContent:
    return t.TextContent(text=text)


def _elicit_result_text(result: t.ElicitResult) -> str:
    content = result.content if isinstance(result.content, dict) else {}
    return f"Elicitation completed: action={result.action}, content={json.dumps(content)}"


def create_server() -> Server:
    server = Server("mcpbind-everything-server", "1.0.0")

    # -------------------------------------------------------------- tools: content kinds
    @server.tool(description="Returns a simple text response")
    def test_simple_text() -> t.TextContent:
        return _text("This is a simple text response for testing.")

    @server.tool(description="Returns an image")
    def test_image_content() -> t.ImageContent:
        return t.ImageContent(data=PNG, mime_type="image/png")

    @server.tool(description="Returns audio")
    def test_audio_content() -> t.AudioContent:
        return t.AudioContent(data=WAV, mime_type="audio/wav")

    @server.tool(description="Returns an embedded resource")
    def test_embedded_resource() -> t.EmbeddedResource:
        return t.EmbeddedResource(
            resource=t.TextResourceContents(
                uri="test://embedded-resource",
                mime_type="text/plain",
                text="This is an embedded resource content.",
            )
        )

    @server.tool(description="Returns text, an image and a resource")
    def test_multiple_content_types() -> list[t.TextContent | t.ImageContent | t.EmbeddedResource]:
        return [
            _text("Multiple content types test:"),
            t.ImageContent(data=PNG, mime_type="image/png"),
            t.EmbeddedResource(
                resource=t.TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text='{"test":"data","value":123}',
                )
            ),
        ]

    @server.tool(description="Always fails")
    def test_error_handling() -> t.CallToolResult:
        return t.CallToolResult(
            content=[_text("This tool intentionally returns an error for testing")],
            is_error=True,
        )

    # -------------------------------------------------------------- tools: during a call
    @server.tool(description="Logs three messages while it runs")
    async def test_tool_with_logging(ctx: Context) -> t.TextContent:
        await ctx.info("Tool execution started")
        await asyncio.sleep(0.05)
        await ctx.info("Tool processing data")
        await asyncio.sleep(0.05)
        await ctx.info("Tool execution completed")
        return _text("Logging test completed")

    @server.tool(description="Reports progress 0, 50, 100 of 100")
    async def test_tool_with_progress(ctx: Context) -> t.TextContent:
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100)
            if step < 100:
                await asyncio.sleep(0.05)
        return _text("Progress test completed")

    @server.tool(description="Asks the client's LLM")
    async def test_sampling(prompt: str, ctx: Context) -> t.TextContent:
        result = await ctx.sample(
            t.CreateMessageRequestParams(
                messages=[t.SamplingMessage(role="user", content=_text(prompt))], max_tokens=100
            )
        )
        content = result.content
        text = getattr(content, "text", None) or json.dumps(str(content))
        return _text(f"LLM response: {text}")

    @server.tool(description="Asks the user for a username and an email")
    async def test_elicitation(message: str, ctx: Context) -> t.TextContent:
        properties: dict[str, Any] = {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        }
        result = await ctx.elicit(
            t.ElicitRequestFormParams(
                message=message,
                requested_schema=t.ElicitRequestFormParamsRequestedSchema(
                    type="object",
                    properties=properties,
                    required=["username", "email"],
                ),
            )
        )
        content = result.content if isinstance(result.content, dict) else {}
        return _text(f"User response: action={result.action}, content={json.dumps(content)}")

    @server.tool(description="Elicitation with a default for every primitive type (SEP-1034)")
    async def test_elicitation_sep1034_defaults(ctx: Context) -> t.TextContent:
        properties: dict[str, Any] = {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        }
        result = await ctx.elicit(
            t.ElicitRequestFormParams(
                message="Please review your information",
                requested_schema=t.ElicitRequestFormParamsRequestedSchema(
                    type="object", properties=properties
                ),
            )
        )
        return _text(_elicit_result_text(result))

    @server.tool(description="Elicitation with every enum variant (SEP-1330)")
    async def test_elicitation_sep1330_enums(ctx: Context) -> t.TextContent:
        properties: dict[str, Any] = {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        }
        result = await ctx.elicit(
            t.ElicitRequestFormParams(
                message="Please choose",
                requested_schema=t.ElicitRequestFormParamsRequestedSchema(
                    type="object", properties=properties
                ),
            )
        )
        return _text(_elicit_result_text(result))

    @server.tool(description="Closes its SSE connection mid-call; the client resumes (SEP-1699)")
    async def test_reconnection() -> t.TextContent:
        close_sse_stream()
        await asyncio.sleep(0.1)
        return _text("Reconnection test completed")

    @server.tool(description="Tool with JSON Schema 2020-12 features")
    def json_schema_2020_12_tool() -> t.TextContent:
        return _text("ok")

    server.tools["json_schema_2020_12_tool"].tool.input_schema = JSON_SCHEMA_2020_12

    # -------------------------------------------------------------- resources
    @server.resource(
        "test://static-text",
        name="static-text",
        description="A static text resource",
        mime_type="text/plain",
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary",
        name="static-binary",
        description="A static binary resource",
        mime_type="image/png",
    )
    def static_binary() -> bytes:
        return base64.b64decode(PNG)

    @server.resource(
        "test://watched-resource",
        name="watched-resource",
        description="A resource to watch",
        mime_type="text/plain",
    )
    def watched() -> str:
        return "Watched resource content."

    @server.resource_template(
        "test://template/{id}/data",
        name="template-data",
        description="Data by id",
        mime_type="application/json",
    )
    def template_data(id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    # -------------------------------------------------------------- prompts
    @server.prompt(description="A simple prompt without arguments")
    def test_simple_prompt() -> str:
        return "This is a simple prompt for testing."

    @server.prompt(description="A prompt with two arguments")
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(description="A prompt embedding a resource")
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[t.PromptMessage]:
        return [
            t.PromptMessage(
                role="user",
                content=t.EmbeddedResource(
                    resource=t.TextResourceContents(
                        uri=resourceUri,
                        mime_type="text/plain",
                        text="Embedded resource content for testing.",
                    )
                ),
            ),
            t.PromptMessage(
                role="user", content=_text("Please process the embedded resource above.")
            ),
        ]

    @server.prompt(description="A prompt with an image")
    def test_prompt_with_image() -> list[t.PromptMessage]:
        return [
            t.PromptMessage(role="user", content=t.ImageContent(data=PNG, mime_type="image/png")),
            t.PromptMessage(role="user", content=_text("Please analyze the image above.")),
        ]

    @server.tool(description="Runs a query in a region; the region is mirrored into a header")
    def test_custom_header(region: str, query: str = "") -> t.TextContent:
        return _text(f"region={region} query={query}")

    # streamable-http.mdx, Custom Headers from Tool Parameters (SEP-2243).
    current = server.tools["test_custom_header"].tool.input_schema
    assert isinstance(current, dict)
    schema: dict[str, Any] = dict(current)
    properties = dict(schema["properties"])
    properties["region"] = {**properties["region"], "x-mcp-header": "Region"}
    server.tools["test_custom_header"].tool.input_schema = {**schema, "properties": properties}

    # -------------------------------------------------------------- 2026-07-28 (MRTR, SEP-2322)
    _stateless_tools()(server)
    _register_stateless_diagnostics(server)

    # -------------------------------------------------------------- tasks (2025-11-25, SEP-2663)
    _stateless_tools("task_tools")(server)

    # -------------------------------------------------------------- completion
    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        value = getattr(argument, "value", "") or ""
        words = ["paris", "park", "party", "test", "testing"]
        return [w for w in words if w.startswith(value)]

    return server


def _register_stateless_diagnostics(server: Server) -> None:
    """The diagnostic tools the server-stateless scenario calls (SEP-2575): a response stream
    with an input request, logging without a requested level, list mutations for listen."""

    @server.tool(description="Reports progress, then asks for input (an MRTR round)")
    async def test_streaming_elicitation(ctx: Context) -> t.TextContent:
        await ctx.report_progress(1, 2)
        form = t.ElicitRequestFormParams(
            message="Continue?",
            requested_schema=t.ElicitRequestFormParamsRequestedSchema(
                type="object", properties={"ok": t.BooleanSchema(type="boolean")}
            ),
        )
        result = await ctx.elicit(form)
        return _text(_elicit_result_text(result))

    @server.tool(description="Logs; only requests that set a log level receive the messages")
    async def test_logging_tool(ctx: Context) -> t.TextContent:
        await ctx.info("test_logging_tool ran")
        return _text("logged")

    def dynamic() -> t.TextContent:
        return _text("dynamic")

    @server.tool(description="Adds or removes a tool (tools list_changed)")
    def test_trigger_tool_change() -> t.TextContent:
        if "test_dynamic_tool" in server.tools:
            server.remove_tool("test_dynamic_tool")
            return _text("removed test_dynamic_tool")
        server.tool("test_dynamic_tool", description="Comes and goes")(dynamic)
        return _text("added test_dynamic_tool")

    def dynamic_prompt() -> str:
        return "dynamic"

    @server.tool(description="Adds or removes a prompt (prompts list_changed)")
    def test_trigger_prompt_change() -> t.TextContent:
        if "test_dynamic_prompt" in server.prompts:
            server.remove_prompt("test_dynamic_prompt")
            return _text("removed test_dynamic_prompt")
        server.prompt("test_dynamic_prompt", description="Comes and goes")(dynamic_prompt)
        return _text("added test_dynamic_prompt")


def build_app(**options: Any) -> StreamableHTTPApp:
    """The conformance app; ``options`` override ``StreamableHTTPApp``'s."""
    kwargs: dict[str, Any] = {"event_store": InMemoryEventStore(), "path": "/mcp"}
    kwargs.update(options)
    return StreamableHTTPApp(create_server(), **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3001)
    args = parser.parse_args()
    serve_http(create_server(), "127.0.0.1", args.port, "/mcp", event_store=InMemoryEventStore())


if __name__ == "__main__":
    main()
