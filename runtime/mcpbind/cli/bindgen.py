"""The source text ``mcpbind bind`` writes: msgspec types for each tool's input and output
schema (made by datamodel-code-generator) plus a typed wrapper class, one method per tool.

Every tool schema becomes one entry of a single JSON Schema's ``$defs`` (``<Tool>Params``,
``<Tool>Result``); each tool's own ``$defs`` are hoisted next to them (shared when identical,
prefixed with the tool's name when not) and its ``$ref`` pointers rewritten. Tools are sorted
by name and the generator runs with fixed options and no timestamp, so the same server gives
the same bytes. The output is ASCII (other characters are escaped), passes ``mypy --strict``
and ruff, and imports only :mod:`mcpbind.bindings` from mcpbind.

datamodel-code-generator is imported here, and this module only by ``mcpbind bind``: it is a
generator dependency (the ``codegen`` extra), never a runtime one.
"""

from __future__ import annotations

import ast
import copy
import json
import keyword
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BindError", "ToolBinding", "generate_bindings", "pascal_case", "plan_tools"]

_BINDINGS_IMPORT = "import mcpbind.bindings as _mcpbind"
_RESERVED_METHODS = frozenset({"server"})


class BindError(Exception):
    """The tools cannot be turned into bindings (the message says which and why)."""


@dataclass(frozen=True, slots=True)
class ToolBinding:
    """How one tool appears in the generated module."""

    name: str  # the tool's wire name
    method: str  # the wrapper method
    params_type: str
    result_type: str | None  # None: no output schema, the method returns CallToolResult
    params_required: bool
    description: str


def pascal_case(name: str) -> str:
    """``add_note`` -> ``AddNote``, ``files.list-dir`` -> ``FilesListDir``."""
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", name) if p]
    text = "".join(p[0].upper() + p[1:] for p in parts)
    return text if text and not text[0].isdigit() else f"Tool{text}"


def _method_name(name: str) -> str:
    text = re.sub(r"\W", "_", name, flags=re.ASCII)
    if not text or text[0].isdigit() or text.startswith("_"):
        text = f"tool_{text.lstrip('_')}"
    if keyword.iskeyword(text) or text in _RESERVED_METHODS:
        text += "_"
    return text


def _unique(candidate: str, taken: set[str]) -> str:
    name, n = candidate, 1
    while name in taken:
        n += 1
        name = f"{candidate}{n}"
    taken.add(name)
    return name


def plan_tools(tools: Iterable[Mapping[str, Any]]) -> tuple[list[ToolBinding], dict[str, Any]]:
    """The bindings for ``tools`` (wire form, as in ``tools/list``) and the combined schema."""
    ordered = sorted(tools, key=lambda tool: str(tool["name"]))
    if not ordered:
        raise BindError("the server lists no tools")
    names = [str(tool["name"]) for tool in ordered]
    if len(set(names)) != len(names):
        raise BindError("the server lists the same tool name twice")
    type_names: set[str] = set()
    methods: set[str] = set()
    bindings: list[ToolBinding] = []
    bases: list[str] = []
    for tool in ordered:
        base = _unique(pascal_case(str(tool["name"])), type_names)
        type_names.add(f"{base}Params")
        type_names.add(f"{base}Result")
        bases.append(base)
    defs: dict[str, Any] = {}
    originals: dict[str, str] = {}  # hoisted name -> canonical JSON of the original def
    for tool, base in zip(ordered, bases, strict=True):
        params_type = f"{base}Params"
        defs[params_type] = _hoist(
            _as_object(tool.get("inputSchema")), params_type, base, defs, originals, type_names
        )
        result_type: str | None = None
        output = tool.get("outputSchema")
        if isinstance(output, dict):
            result_type = f"{base}Result"
            defs[result_type] = _hoist(
                _as_object(output), result_type, base, defs, originals, type_names
            )
        required = defs[params_type].get("required")
        description = tool.get("description")
        bindings.append(
            ToolBinding(
                name=str(tool["name"]),
                method=_unique(_method_name(str(tool["name"])), methods),
                params_type=params_type,
                result_type=result_type,
                params_required=isinstance(required, list) and bool(required),
                description=description if isinstance(description, str) else "",
            )
        )
    return bindings, {"$defs": defs}


def _as_object(schema: object) -> dict[str, Any]:
    """A tool schema as a fresh dict, ``type: object`` (MCP requires it) and no ``$schema``."""
    result: dict[str, Any] = copy.deepcopy(schema) if isinstance(schema, dict) else {}
    for key in ("$schema", "$id", "$anchor", "$dynamicAnchor"):
        result.pop(key, None)
    result.setdefault("type", "object")
    return result


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _hoist(
    schema: dict[str, Any],
    own_name: str,
    base: str,
    defs: dict[str, Any],
    originals: dict[str, str],
    reserved: set[str],
) -> dict[str, Any]:
    """Move ``schema``'s local definitions into ``defs`` and point its refs at them."""
    local: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        found = schema.pop(key, None)
        if isinstance(found, dict):
            local.update(found)
    mapping: dict[str, str] = {}
    for local_name, definition in local.items():
        canonical = _canonical(definition)
        candidate = pascal_case(str(local_name))
        if originals.get(candidate) == canonical:
            mapping[str(local_name)] = candidate  # the same definition from another tool
            continue
        if candidate in defs or candidate in reserved:
            candidate = f"{base}{candidate}"
        while candidate in defs or candidate in reserved:
            candidate += "_"
        mapping[str(local_name)] = candidate
        originals[candidate] = canonical
        defs[candidate] = definition
    for local_name, definition in local.items():
        target = mapping[str(local_name)]
        if defs[target] is definition:
            defs[target] = _rewrite_refs(definition, mapping, own_name)
    rewritten: dict[str, Any] = _rewrite_refs(schema, mapping, own_name)
    return rewritten


_LOCAL_REF = re.compile(r"^#/(?:\$defs|definitions)/([^/]+)$")


def _rewrite_refs(value: Any, mapping: Mapping[str, str], own_name: str) -> Any:
    """Point ``$ref`` at the hoisted names; a ref we cannot resolve locally becomes ``{}``
    (any value), so generation never fetches anything."""
    if isinstance(value, list):
        return [_rewrite_refs(item, mapping, own_name) for item in value]
    if not isinstance(value, dict):
        return value
    result = {key: _rewrite_refs(item, mapping, own_name) for key, item in value.items()}
    ref = result.get("$ref")
    if isinstance(ref, str):
        match = _LOCAL_REF.match(ref)
        target = mapping.get(_unescape_pointer(match.group(1))) if match else None
        if ref == "#":
            target = own_name
        if target is None:
            del result["$ref"]
        else:
            result["$ref"] = f"#/$defs/{target}"
    return result


def _unescape_pointer(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


# ------------------------------------------------------------------------------ rendering
def _docstring(text: str, indent: str) -> str:
    """A one-line docstring, safe for any text (escaped; ASCII handled later)."""
    flat = " ".join(text.split())
    if not flat:
        return ""
    flat = flat.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if flat.endswith('"'):
        flat = flat[:-1] + '\\"'
    return f'{indent}"""{flat}"""\n'


def _ascii(source: str) -> str:
    """Escape non-ASCII characters. They only occur in string literals and comments here
    (the generator makes ASCII identifiers); escaped, ruff's confusable checks stay quiet."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"

    return re.sub(r"[^\x00-\x7f]", escape, source)


def _header(server_name: str, server_version: str) -> str:
    who = " ".join(f"{server_name} {server_version}".split()).replace("\\", "/")
    who = who.replace('"', "'")
    return (
        f'"""Typed bindings for the tools of the MCP server {who}.\n'
        "\n"
        "Generated by `mcpbind bind` from the server's tools/list: do not edit; run the same\n"
        "command again to update (an unchanged server leaves this file untouched).\n"
        '"""'
    )


def _models(schema: dict[str, Any], header: str) -> str:
    try:
        from datamodel_code_generator import InputFileType, LiteralType, PythonVersion, generate
        from datamodel_code_generator.enums import DataModelType
        from datamodel_code_generator.format import Formatter
    except ImportError as exc:
        raise ImportError(f"datamodel-code-generator is not installed ({exc})") from exc
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its FutureWarnings are about defaults we set anyway
        try:
            output = generate(
                json.dumps(schema),
                input_file_type=InputFileType.JsonSchema,
                output_model_type=DataModelType.MsgspecStruct,
                target_python_version=PythonVersion.PY_311,
                formatters=[Formatter.BUILTIN],
                custom_file_header=header,
                disable_timestamp=True,
                skip_root_model=True,
                class_name="BindingsRoot",
                use_standard_collections=True,
                use_union_operator=True,
                use_schema_description=True,
                use_annotated=True,
                field_constraints=True,
                snake_case_field=True,
                use_double_quotes=True,
                enum_field_as_literal=LiteralType.All,
            )
        except Exception as exc:  # its error types vary between versions; say which step failed
            raise BindError(f"datamodel-code-generator failed: {exc}") from exc
    if not isinstance(output, str):
        raise BindError("datamodel-code-generator produced several modules; expected one")
    # ruff RUF036: ``None`` belongs at the end of a union.
    return re.sub(r"(\s)\| None(\s+)\| UnsetType\b", r"\1| UnsetType\2| None", output)


def _top_level_names(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.Assign):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _method(binding: ToolBinding) -> str:
    params = binding.params_type if binding.params_required else f"{binding.params_type} | None"
    default = "" if binding.params_required else " = None"
    returns = binding.result_type or "_mcpbind.CallToolResult"
    lines = [
        f"    async def {binding.method}(\n",
        "        self,\n",
        f"        params: {params}{default},\n",
        "        /,\n",
        "        *,\n",
        "        options: _mcpbind.RequestOptions | None = None,\n",
        f"    ) -> {returns}:\n",
        _docstring(binding.description, "        "),
    ]
    call = ["self.server", json.dumps(binding.name), "params"]
    if binding.result_type is None:
        function = "call_tool"
    else:
        function = "call_tool_typed"
        call.append(binding.result_type)
    call.append("options")
    lines.append(f"        return await _mcpbind.{function}(\n")
    lines.extend(f"            {arg},\n" for arg in call)
    lines.append("        )\n")
    return "".join(lines)


def generate_bindings(
    tools: Iterable[Mapping[str, Any]],
    *,
    server_name: str,
    server_version: str,
    class_name: str | None = None,
) -> str:
    """The whole module for ``tools`` (wire form), deterministic for the same input."""
    bindings, schema = plan_tools(tools)
    models = _models(schema, _header(server_name, server_version))
    tree = ast.parse(models)
    names = _top_level_names(tree)
    missing = [
        name
        for b in bindings
        for name in (b.params_type, b.result_type)
        if name is not None and name not in names
    ]
    if missing:
        raise BindError(f"the generator did not emit {', '.join(missing)}")
    wrapper = class_name or f"{pascal_case(server_name)}Tools"
    if not wrapper.isidentifier() or keyword.iskeyword(wrapper):
        raise BindError(f"{wrapper!r} is not a valid class name")
    wrapper = _unique(wrapper, set(names))
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    if not imports or imports[-1].end_lineno is None:
        raise BindError("unexpected generator output: no imports")
    lines = models.splitlines(keepends=True)
    head, body = lines[: imports[-1].end_lineno], lines[imports[-1].end_lineno :]
    exported = [wrapper, *names]
    parts = [
        "".join(head),
        "\n",
        f"{_BINDINGS_IMPORT}\n",
        "\n",
        "__all__ = [\n",
        *(f"    {json.dumps(name)},\n" for name in exported),
        "]\n",
        "".join(body).rstrip("\n") + "\n",
        "\n\n",
        f"class {wrapper}:\n",
        _docstring(
            f"Typed calls to the tools of {server_name}: one async method per tool. Methods "
            "of tools with an output schema return its type and raise "
            "mcpbind.bindings.ToolError when the tool reports an error; the others return "
            "the CallToolResult.",
            "    ",
        ),
        "\n",
        "    def __init__(self, server: _mcpbind.ServerMethods) -> None:\n",
        "        self.server = server\n",
    ]
    for binding in bindings:
        parts.append("\n")
        parts.append(_method(binding))
    return _ascii("".join(parts))
