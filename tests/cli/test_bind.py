"""``mcpbind bind``: typed bindings from a server's tools/list (server/tools.mdx §Listing
Tools, §Output Schema, §Structured Content). The generated module passes ``mypy --strict``
and ruff, catches misuse at type-check time, returns typed results at run time, and is
byte-identical when regenerated."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from mcpbind import Client
from mcpbind import types as t
from mcpbind.bindings import ToolError
from mcpbind.cli.bindgen import BindError, generate_bindings, pascal_case, plan_tools
from mcpbind.cli.errors import EXIT_MISSING_DEPENDENCY, EXIT_TOOL_ERROR
from mcpbind.transports import StdioClientTransport

from .conftest import NOTES, ROOT, run

pytest.importorskip("datamodel_code_generator")

# Tools that exercise the schema plumbing: local $defs under both spellings, two different
# definitions with one name, a recursive definition, a root self-reference, a remote $ref,
# non-ASCII text, and names that are not identifiers or clash with Python.
SYNTHETIC_TOOLS: list[dict[str, Any]] = [
    {
        "name": "b.lookup",
        "description": 'Find \u201cthings\u201d \u2014 fast. Ends with a quote: "x"',
        "inputSchema": {
            "type": "object",
            "properties": {"item": {"$ref": "#/$defs/Item"}, "class": {"type": "string"}},
            "required": ["item"],
            "$defs": {
                "Item": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}},
                    "required": ["sku"],
                }
            },
        },
        "outputSchema": {
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "required": ["tree"],
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    },
                    "required": ["label"],
                }
            },
        },
    },
    {
        "name": "a-lookup",
        "inputSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"item": {"$ref": "#/definitions/Item"}},
            "required": ["item"],
            "definitions": {
                "Item": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}},
                    "required": ["id"],
                }
            },
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "remote": {"$ref": "https://example.com/never-fetched.json"},
                "again": {"$ref": "#"},
            },
        },
    },
    {"name": "ping", "inputSchema": {"type": "object"}},
    {"name": "server", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "class", "inputSchema": {"type": "object", "properties": {}}},
]

GOOD_APP = """\
from __future__ import annotations

from notes_tools import AddNoteParams, McpbindNotesTools, SearchNotesParams

from mcpbind import Client


async def use(client: Client) -> str:
    tools = McpbindNotesTools(client)
    note = await tools.add_note(AddNoteParams(title="a", body="b", tags=["x"]))
    found = await tools.search_notes(SearchNotesParams(query="a", limit=3))
    return note.id + found.result[0].title
"""

BAD_APP = """\
from __future__ import annotations

from notes_tools import AddNoteParams, McpbindNotesTools, SearchNotesParams, SlowCountParams

from mcpbind import Client


async def misuse(client: Client) -> None:
    tools = McpbindNotesTools(client)
    await tools.add_note(SearchNotesParams(query="x"))
    note = await tools.add_note(AddNoteParams(title="a", body="b"))
    count: int = note.title
    await tools.slow_count(SlowCountParams(to="3"))
    await tools.no_such_tool()
"""
BAD_LINES = {10: "arg-type", 12: "assignment", 13: "arg-type", 14: "attr-defined"}


@pytest.fixture(scope="module")
def bound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The notes server's bindings, written by the CLI over stdio, beside two apps using them
    and the synthetic bindings."""
    folder = tmp_path_factory.mktemp("bind")
    result = run("bind", NOTES, "--out", folder / "notes_tools.py")
    assert result.exit_code == 0, result.output
    assert f"wrote {folder / 'notes_tools.py'} (4 tools of mcpbind-notes)" in result.stderr
    synthetic = generate_bindings(
        SYNTHETIC_TOOLS, server_name="odd\u00e9 server", server_version="0"
    )
    (folder / "synthetic_tools.py").write_text(synthetic, encoding="utf-8")
    (folder / "app_good.py").write_text(GOOD_APP)
    (folder / "app_bad.py").write_text(BAD_APP)
    return folder


def test_generated_modules_pass_mypy_strict_and_catch_misuse(bound: Path) -> None:
    """server/tools.mdx §Input Schema, §Output Schema: One mypy --strict run: the bindings and
    correct use are clean; every misuse (wrong params type, wrong result field type, wrong argument
    type, unknown tool) is reported."""
    env = {**os.environ, "MYPYPATH": f"{ROOT / 'runtime'}{os.pathsep}{ROOT / 'generated'}"}
    files = ["notes_tools.py", "synthetic_tools.py", "app_good.py", "app_bad.py"]
    # Imports are analysed but not reported (silent): this checks the bindings, not mcpbind.
    flags = ["--strict", "--follow-imports=silent", "--no-error-summary", "--show-error-codes"]
    # The cache (git-ignored) outlives the run: mcpbind's own modules are analysed once, not
    # on every run; the bindings and apps live in a fresh folder and are always checked.
    cache = ["--cache-dir", str(ROOT / ".mypy_cache" / "tests-cli-bind")]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", *flags, *cache, *files],
        cwd=bound,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert all(line.startswith("app_bad.py:") for line in errors), done.stdout + done.stderr
    reported = {int(line.split(":")[1]): line.rsplit("[", 1)[-1].rstrip("]") for line in errors}
    assert reported == BAD_LINES, done.stdout


def test_generated_modules_pass_ruff(bound: Path) -> None:
    """Not spec behaviour (issue 6, mcpbind bind): The generated files are ruff-clean (lint and
    format) under the project's settings."""
    config = str(ROOT / "pyproject.toml")
    targets = [str(bound / "notes_tools.py"), str(bound / "synthetic_tools.py")]
    for command in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--config", config, *targets],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def notes_tools(bound: Path) -> Iterator[ModuleType]:
    """The generated module, imported from its file (registered so msgspec resolves hints)."""
    yield from _import(bound / "notes_tools.py", "notes_tools")


def _import(path: Path, name: str) -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[name]


@pytest.mark.anyio
async def test_calls_through_the_bindings_return_typed_results(notes_tools: ModuleType) -> None:
    """server/tools.mdx §Structured Content: structured results come back as the generated
    types; a tool without an output schema gives the CallToolResult; isError raises."""
    m = notes_tools
    args = ["-m", "examples.notes_server"]
    async with (
        StdioClientTransport.spawn(sys.executable, args, cwd=ROOT) as transport,
        Client(transport) as client,
    ):
        tools = m.McpbindNotesTools(client)
        note = await tools.add_note(m.AddNoteParams(title="Typed", body="checked", tags=["A"]))
        assert isinstance(note, m.AddNoteResult)
        assert (note.id, note.title, note.body, note.tags) == ("typed", "Typed", "checked", ["a"])
        found = await tools.search_notes(m.SearchNotesParams(query="checked"))
        assert isinstance(found, m.SearchNotesResult)
        assert [type(n) for n in found.result] == [m.Note]
        assert found.result[0].id == "typed"
        counted = await tools.slow_count(m.SlowCountParams(to=2, delay=0.0))
        assert isinstance(counted, m.SlowCountResult) and counted.result == 2
        deleted = await tools.delete_note(m.DeleteNoteParams(id="typed"))
        assert isinstance(deleted, t.CallToolResult) and deleted.is_error is not True
        with pytest.raises(ToolError, match="needs a non-empty title") as caught:
            await tools.add_note(m.AddNoteParams(title="  ", body="x"))
        assert caught.value.result.is_error is True


def test_rebinding_is_a_no_op(bound: Path) -> None:
    """server/tools.mdx §Listing Tools (the same list gives the same module): Regenerating against
    the same server leaves the file byte-identical and untouched; ``--check`` passes, and fails once
    the file differs."""
    path = bound / "notes_tools.py"
    before, stamp = path.read_bytes(), path.stat().st_mtime_ns
    again = run("bind", NOTES, "--out", path)
    assert again.exit_code == 0, again.output
    assert "unchanged:" in again.stderr
    assert path.read_bytes() == before and path.stat().st_mtime_ns == stamp
    assert run("bind", NOTES, "--out", path, "--check").exit_code == 0
    stale = bound / "stale.py"
    stale.write_bytes(before + b"# edited\n")
    checked = run("bind", NOTES, "--out", stale, "--check")
    assert checked.exit_code == EXIT_TOOL_ERROR and "is out of date" in checked.stderr
    assert stale.read_bytes().endswith(b"# edited\n")


def test_generation_is_deterministic_and_order_independent() -> None:
    """server/tools.mdx §Listing Tools (list order carries no meaning): same tools (in any
    order) -> same text; the module is ASCII."""
    first = generate_bindings(SYNTHETIC_TOOLS, server_name="s", server_version="1")
    assert generate_bindings(SYNTHETIC_TOOLS[::-1], server_name="s", server_version="1") == first
    assert first.isascii()
    assert "\\u201cthings\\u201d" in first


def test_synthetic_schemas_hoist_and_rename(bound: Path) -> None:
    """server/tools.mdx §Input Schema, §Output Schema (JSON Schema 2020-12 $defs, $ref), §Tool
    Names: Local definitions are shared or renamed per tool, refs rewritten, recursion kept, a
    remote ref becomes Any (never fetched); odd tool names become valid methods."""
    for module in _import(bound / "synthetic_tools.py", "synthetic_tools"):
        assert module.Item.__struct_fields__ == ("id",)  # a-lookup's Item (first by name)
        assert module.BLookupItem.__struct_fields__ == ("sku",)  # b.lookup's, renamed
        tree = msgspec.convert(
            {"tree": {"label": "r", "children": [{"label": "c"}]}}, module.BLookupResult
        )
        assert tree.tree.children[0].label == "c"
        wrapper = module.OddServerTools
        for method in ("a_lookup", "b_lookup", "class_", "ping", "server_"):
            assert callable(getattr(wrapper, method))
        params = module.BLookupParams(item=module.BLookupItem(sku="s1"), class_="k")
        assert msgspec.to_builtins(params) == {"item": {"sku": "s1"}, "class": "k"}


def test_plan_names() -> None:
    """server/tools.mdx §Tool Names (A-Z a-z 0-9 _ - .): Class and method names derived from tool
    names stay unique and valid."""
    assert pascal_case("add_note") == "AddNote"
    assert pascal_case("files.list-dir") == "FilesListDir"
    assert pascal_case("3d") == "Tool3d"
    bindings, schema = plan_tools(SYNTHETIC_TOOLS)
    assert [b.method for b in bindings] == ["a_lookup", "b_lookup", "class_", "ping", "server_"]
    assert [b.params_required for b in bindings] == [True, True, False, False, False]
    assert "$schema" not in schema["$defs"]["ALookupParams"]
    assert schema["$defs"]["ALookupResult"]["properties"]["again"] == {
        "$ref": "#/$defs/ALookupResult"
    }
    assert schema["$defs"]["ALookupResult"]["properties"]["remote"] == {}
    with pytest.raises(BindError, match="lists no tools"):
        plan_tools([])
    with pytest.raises(BindError, match="same tool name twice"):
        plan_tools([{"name": "x", "inputSchema": {}}, {"name": "x", "inputSchema": {}}])


def test_missing_generator_dependency_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not spec behaviour (issue 6, mcpbind bind): Without datamodel-code-generator: exit 5 naming
    the codegen extra, before connecting."""
    monkeypatch.setitem(sys.modules, "datamodel_code_generator", None)
    result = run("bind", "mcpbind-never-started", "--out", "unused.py")
    assert result.exit_code == EXIT_MISSING_DEPENDENCY
    assert "pip install 'mcpbind[codegen]'" in result.stderr
