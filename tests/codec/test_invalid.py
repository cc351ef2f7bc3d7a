"""Invalid messages are rejected with a ``msgspec.ValidationError`` naming the field's path, and
floats decode wherever the TypeScript schema says ``number``.

Every invalid instance is first checked to be invalid under the official JSON schema too, and every
valid base instance to be valid, so each test exercises what the spec says and not a guess.

Spec pages named in the docstrings are relative to ``specification/<version>/`` of each version a
test runs on (e.g. "2025-11-25 basic/utilities/progress.mdx").
"""

from __future__ import annotations

import copy
import importlib
import json
from types import ModuleType
from typing import Any

import msgspec
import pytest

from mcpbind_types._common import decoder, encode, join_error_path

from .strategies import VERSIONS, definitions, validator

#: Versions with form elicitation (``ElicitResult``, ``NumberSchema``).
ELICITATION = ("2025-06-18", "2025-11-25", "2026-07-28")
#: Errors raised inside the untagged-union hook and the raw-JSON object check carry their own
#: relative path first ("X at `.message` - at `$.params`"): msgspec appends where the union or
#: struct sits. ``join_error_path`` joins the halves; the runtime sends joined paths.


def types(version: str) -> ModuleType:
    return importlib.import_module(f"mcpbind_types.v{version.replace('-', '_')}.types")


def schema_valid(version: str, name: str, value: Any) -> bool:
    return bool(validator(version, name).is_valid(value))


def rejected(version: str, name: str, value: Any) -> str:
    """The message of the ``ValidationError`` decoding ``value`` as ``types.<name>``."""
    if name in definitions(version):
        assert not schema_valid(version, name, value), "the official schema accepts it"
    with pytest.raises(msgspec.ValidationError) as info:
        decoder(getattr(types(version), name)).decode(json.dumps(value))
    return str(info.value)


def round_trip(version: str, name: str, value: Any) -> Any:
    out = json.loads(encode(decoder(getattr(types(version), name)).decode(json.dumps(value))))
    assert out == value
    return out


def request_meta(version: str) -> dict[str, Any]:
    """The ``_meta`` a 2026-07-28 request must carry (basic/index.mdx#_meta); none before."""
    if version != "2026-07-28":
        return {}
    return {
        "_meta": {
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/protocolVersion": version,
        }
    }


def message(version: str, name: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A ``name`` message, with the ``jsonrpc``/``id`` envelope where the definition declares it.

    Up to 2025-06-18 the envelope lives in ``JSONRPCRequest`` only; 2026-07-28 input requests
    (embedded in an ``InputRequiredResult``) have none.
    """
    declared = definitions(version)[name]["properties"]
    envelope = {"jsonrpc": "2.0", "id": 1}
    return {
        **{k: v for k, v in envelope.items() if k in declared},
        "method": method,
        "params": params,
    }


def call_tool(version: str, **params: Any) -> dict[str, Any]:
    return message(version, "CallToolRequest", "tools/call", {**request_meta(version), **params})


def call_tool_result(version: str, content: list[Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"content": content}
    if version == "2026-07-28":
        result["resultType"] = "complete"
    return result


def as_python(value: Any) -> Any:
    """A free-form JSON field's value, whether decoded eagerly or kept as ``msgspec.Raw``."""
    return msgspec.json.decode(value) if isinstance(value, msgspec.Raw) else value


def with_path(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(value)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return out


# --------------------------------------------------------------------------- wrong type


@pytest.mark.parametrize("version", VERSIONS)
def test_wrong_type_names_the_field(version: str) -> None:
    """A tool name that is not a string (server/tools.mdx#calling-tools)."""
    good = call_tool(version, name="get_weather")
    assert schema_valid(version, "CallToolRequest", good)
    round_trip(version, "CallToolRequest", good)
    msg = rejected(version, "CallToolRequest", with_path(good, ("params", "name"), 5))
    assert msg == "Expected `str`, got `int` - at `$.params.name`"


@pytest.mark.parametrize("version", VERSIONS)
def test_wrong_const_names_the_field(version: str) -> None:
    """A JSON-RPC version other than "2.0" (basic/index.mdx#requests)."""
    good = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    assert schema_valid(version, "JSONRPCRequest", good)
    msg = rejected(version, "JSONRPCRequest", {**good, "jsonrpc": "1.0"})
    assert "'1.0'" in msg
    assert msg.endswith("- at `$.jsonrpc`")


def list_tools_result(version: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("a", "b")]
    }
    if version == "2026-07-28":
        result.update(resultType="complete", ttlMs=0, cacheScope="private")
    return result


@pytest.mark.parametrize("version", VERSIONS)
def test_wrong_type_in_a_list_item(version: str) -> None:
    """A tool whose name is not a string, second in the list (server/tools.mdx#listing-tools)."""
    good = list_tools_result(version)
    assert schema_valid(version, "ListToolsResult", good)
    round_trip(version, "ListToolsResult", good)
    msg = rejected(version, "ListToolsResult", with_path(good, ("tools", 1, "name"), 5))
    assert msg == "Expected `str`, got `int` - at `$.tools[1].name`"


@pytest.mark.parametrize("version", VERSIONS)
def test_free_form_object_must_be_an_object(version: str) -> None:
    """A tool whose ``inputSchema`` is not an object (server/tools.mdx#tool).

    Free-form JSON is kept raw (``JSONObjectRaw``) and checked by ``check_object`` on decode.
    """
    bad = with_path(list_tools_result(version), ("tools", 1, "inputSchema"), "x")
    msg = rejected(version, "ListToolsResult", bad)
    assert msg.startswith("Expected `object`, got `str`")
    assert "inputSchema" in msg
    assert "$.tools[1]" in msg
    bad = call_tool(version, name="t", arguments=[1])
    msg = rejected(version, "CallToolRequest", bad)
    assert msg.startswith("Expected `object`, got `array`")
    assert "arguments" in msg
    assert "$.params" in msg


@pytest.mark.parametrize("version", VERSIONS)
def test_free_form_object_error_names_the_full_path(version: str) -> None:
    """The ``inputSchema`` error names one ``$.`` path (server/tools.mdx#tool)."""
    bad = with_path(list_tools_result(version), ("tools", 1, "inputSchema"), "x")
    msg = rejected(version, "ListToolsResult", bad)
    assert join_error_path(msg) == "Expected `object`, got `str` - at `$.tools[1].inputSchema`"


# --------------------------------------------------------------------------- missing field


@pytest.mark.parametrize("version", VERSIONS)
def test_missing_required_field_names_its_object(version: str) -> None:
    """``tools/call`` params without the tool name (server/tools.mdx#calling-tools)."""
    bad = call_tool(version)
    msg = rejected(version, "CallToolRequest", bad)
    assert msg == "Object missing required field `name` - at `$.params`"


@pytest.mark.parametrize("version", VERSIONS)
def test_missing_required_field_in_nested_content(version: str) -> None:
    """An image content block without its data (server/tools.mdx#image-content)."""
    bad = call_tool_result(version, [{"type": "image", "mimeType": "image/png"}])
    msg = rejected(version, "CallToolResult", bad)
    assert msg == "Object missing required field `data` - at `$.content[0]`"


# --------------------------------------------------------------------------- unknown tag


@pytest.mark.parametrize("version", VERSIONS)
def test_unknown_content_type_is_rejected(version: str) -> None:
    """A content block of type "video" (server/tools.mdx#tool-result)."""
    good = call_tool_result(version, [{"type": "text", "text": "hi"}])
    assert schema_valid(version, "CallToolResult", good)
    bad = call_tool_result(version, [{"type": "text", "text": "hi"}, {"type": "video", "data": ""}])
    msg = rejected(version, "CallToolResult", bad)
    assert msg == "Invalid value 'video' - at `$.content[1].type`"


@pytest.mark.parametrize("version", VERSIONS)
def test_unknown_method_in_a_client_request(version: str) -> None:
    """A request whose method no client request has (basic/index.mdx#requests)."""
    good = call_tool(version, name="t")
    assert schema_valid(version, "ClientRequest", good)
    round_trip(version, "ClientRequest", good)
    msg = rejected(version, "ClientRequest", {**good, "method": "tools/unknown"})
    assert msg == "Invalid value 'tools/unknown' - at `$.method`"


@pytest.mark.parametrize("version", VERSIONS)
def test_server_request_is_not_a_client_request(version: str) -> None:
    """``sampling/createMessage`` goes server -> client only (client/sampling.mdx)."""
    params = {**request_meta(version), "messages": [], "maxTokens": 1}
    bad = message(version, "CreateMessageRequest", "sampling/createMessage", params)
    msg = rejected(version, "ClientRequest", bad)
    assert msg == "Invalid value 'sampling/createMessage' - at `$.method`"


# --------------------------------------------------------------------------- nested paths


@pytest.mark.parametrize("version", VERSIONS)
def test_nested_path_in_a_list_of_content(version: str) -> None:
    """Text content whose text is not a string (server/tools.mdx#text-content)."""
    bad = call_tool_result(version, [{"type": "text", "text": 3}])
    assert (
        rejected(version, "CallToolResult", bad)
        == "Expected `str`, got `int` - at `$.content[0].text`"
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_nested_path_through_prompt_messages(version: str) -> None:
    """A prompt message with an unknown role (server/prompts.mdx#promptmessage)."""
    good: dict[str, Any] = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}]
    }
    if version == "2026-07-28":
        good["resultType"] = "complete"
    assert schema_valid(version, "GetPromptResult", good)
    round_trip(version, "GetPromptResult", good)
    msg = rejected(version, "GetPromptResult", with_path(good, ("messages", 0, "role"), "robot"))
    assert msg == "Invalid enum value 'robot' - at `$.messages[0].role`"
    msg = rejected(
        version, "GetPromptResult", with_path(good, ("messages", 0, "content", "text"), None)
    )
    assert msg == "Expected `str`, got `null` - at `$.messages[0].content.text`"


@pytest.mark.parametrize("version", VERSIONS)
def test_nested_path_in_progress_params(version: str) -> None:
    """A progress value that is not a number (basic/utilities/progress.mdx)."""
    good = progress(version, 1, 2)
    msg = rejected(version, "ProgressNotification", with_path(good, ("params", "progress"), "1"))
    assert msg == "Expected `int | float`, got `str` - at `$.params.progress`"


@pytest.mark.parametrize("version", VERSIONS)
def test_untagged_union_error_names_the_path(version: str) -> None:
    """Resource contents that are neither text nor blob (server/resources.mdx#reading-resources)."""
    bad: dict[str, Any] = {"contents": [{"uri": "file:///a"}]}
    if version == "2026-07-28":
        bad["resultType"] = "complete"
    msg = join_error_path(rejected(version, "ReadResourceResult", bad))
    assert "matches no variant" in msg
    assert msg.endswith("- at `$.contents[0]`")


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_discriminated_union_error_names_the_full_path(version: str) -> None:
    """Form elicitation whose message is not a string (client/elicitation.mdx#form-mode)."""
    params = {"message": 5, "requestedSchema": {"type": "object", "properties": {}}}
    bad = message(version, "ElicitRequest", "elicitation/create", params)
    assert "- at `$.params.message`" in join_error_path(rejected(version, "ElicitRequest", bad))


# --------------------------------------------------------------------------- floats


def progress(version: str, value: Any, total: Any) -> dict[str, Any]:
    params = {"progressToken": "t", "progress": value, "total": total}
    return message(version, "ProgressNotification", "notifications/progress", params)


def assert_floats_survive(version: str, name: str, value: Any) -> None:
    """``value`` decodes as ``types.<name>`` and re-encodes with every float still a float."""
    out = round_trip(version, name, value)
    assert json.dumps(out, sort_keys=True) == json.dumps(value, sort_keys=True)


@pytest.mark.parametrize("version", VERSIONS)
def test_progress_is_a_float(version: str) -> None:
    """Progress and total are TypeScript ``number`` (basic/utilities/progress.mdx)."""
    msg = progress(version, 0.5, 1.5)
    assert schema_valid(version, "ProgressNotification", msg)
    assert_floats_survive(version, "ProgressNotification", msg)
    value = decoder(types(version).ProgressNotification).decode(json.dumps(msg))
    assert (value.params.progress, value.params.total) == (0.5, 1.5)


@pytest.mark.parametrize("version", VERSIONS)
def test_annotation_priority_is_a_float(version: str) -> None:
    """``priority`` is a number in [0, 1] (server/resources.mdx#annotations)."""
    annotations = {"priority": 0.25, "audience": ["user"]}
    assert_floats_survive(version, "Annotations", annotations)
    content = {"type": "text", "text": "x", "annotations": annotations}
    assert schema_valid(version, "TextContent", content)
    assert_floats_survive(version, "TextContent", content)
    assert decoder(types(version).Annotations).decode(json.dumps(annotations)).priority == 0.25


@pytest.mark.parametrize("version", VERSIONS)
def test_model_preferences_are_floats(version: str) -> None:
    """Cost/speed/intelligence priorities are numbers in [0, 1] (client/sampling.mdx#model-preferences)."""
    prefs = {"costPriority": 0.3, "speedPriority": 0.75, "intelligencePriority": 1}
    assert schema_valid(version, "ModelPreferences", prefs)
    assert_floats_survive(version, "ModelPreferences", prefs)
    assert decoder(types(version).ModelPreferences).decode(json.dumps(prefs)).cost_priority == 0.3


@pytest.mark.parametrize("version", VERSIONS)
def test_sampling_temperature_is_a_float(version: str) -> None:
    """``temperature`` is a number (client/sampling.mdx#creating-messages)."""
    params = {"messages": [], "maxTokens": 100, "temperature": 0.7}
    req = message(version, "CreateMessageRequest", "sampling/createMessage", params)
    assert schema_valid(version, "CreateMessageRequest", req)
    assert_floats_survive(version, "CreateMessageRequest", req)
    assert_floats_survive(version, "CreateMessageRequestParams", params)
    tp = types(version).CreateMessageRequestParams
    assert decoder(tp).decode(json.dumps(params)).temperature == 0.7


@pytest.mark.parametrize("version", ELICITATION)
def test_elicit_result_numbers_are_floats(version: str) -> None:
    """Submitted form values may be numbers (client/elicitation.mdx#response-actions).

    The official schema says ``integer`` (``--defaultNumberType integer``); the ``patch`` override
    in codegen/mcpbind_codegen/overrides.py restores TypeScript's ``number``.
    """
    result = {"action": "accept", "content": {"ratio": 1.5, "count": 3, "name": "x", "ok": True}}
    assert not schema_valid(version, "ElicitResult", result), "override no longer needed?"
    assert schema_valid(version, "ElicitResult", {**result, "content": {"count": 3}})
    assert_floats_survive(version, "ElicitResult", result)
    content = decoder(types(version).ElicitResult).decode(json.dumps(result)).content
    assert content["ratio"] == 1.5


@pytest.mark.parametrize("version", ELICITATION)
def test_number_schema_bounds_are_floats(version: str) -> None:
    """``minimum``/``maximum`` of a number field (client/elicitation.mdx#supported-schema-types)."""
    schema = {"type": "number", "minimum": 0.5, "maximum": 2.5}
    assert schema_valid(version, "NumberSchema", schema)
    assert_floats_survive(version, "NumberSchema", schema)
    assert_floats_survive(version, "PrimitiveSchemaDefinition", schema)
    assert decoder(types(version).NumberSchema).decode(json.dumps(schema)).minimum == 0.5


def test_json_values_hold_floats_2026() -> None:
    """Structured tool output is arbitrary JSON (2026-07-28 server/tools.mdx#structured-content).

    The official ``JSONValue`` lists only string/integer/boolean; the ``patch`` override restores
    ``number`` and ``null``.
    """
    version = "2026-07-28"
    structured = {"ratio": 0.5, "nested": [1.25, {"e": -2.5e-3, "n": None}], "big": 1e300}
    result = {**call_tool_result(version, []), "structuredContent": structured}
    assert_floats_survive(version, "CallToolResult", result)
    for value in (1.5, [0.5, -0.25], {"a": {"b": [2.75]}}, None):
        assert_floats_survive(version, "JSONValue", value)
    decoded = decoder(types(version).CallToolResult).decode(json.dumps(result))
    assert as_python(decoded.structured_content)["nested"][1]["e"] == -2.5e-3
