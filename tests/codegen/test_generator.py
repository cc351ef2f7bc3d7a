"""The generator: deterministic output, gen-check, schema changes flow through, stale overrides fail."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpbind_codegen.cli import main
from mcpbind_codegen.naming import field_name, snake, stub_method_name
from mcpbind_codegen.overrides import OVERRIDES, OverrideError
from mcpbind_codegen.pipeline import build_model, diff_files, generate_all, generate_version

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "schema" / "manifest.json"
OUT = ROOT / "generated" / "mcpbind_types"
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")


def _schema(version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "schema" / version / "schema.json").read_text())
    return data


def test_committed_bindings_match_the_generator() -> None:
    """`make gen-check`: what is committed is exactly what the generator emits."""
    assert diff_files(generate_all(MANIFEST, ROOT / "schema", OUT), OUT) == []


def test_output_is_deterministic() -> None:
    a = generate_all(MANIFEST, ROOT / "schema", OUT)
    b = generate_all(MANIFEST, ROOT / "schema", OUT)
    assert a == b


def test_every_file_has_a_header_with_version_and_sha_and_no_timestamp() -> None:
    pins = {v["version"]: v["sha256"] for v in json.loads(MANIFEST.read_text())["versions"]}
    for path, text in generate_all(MANIFEST, ROOT / "schema", OUT).items():
        head = text.split('"""', 1)[0]
        assert head.startswith("# DO NOT EDIT"), path
        assert not re.search(r"\d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}T", head), path
        package = path.parent.name
        if package.startswith("v"):
            version = package[1:].replace("_", "-")
            assert f"Schema version: {version}" in head and pins[version] in head, path
        else:
            assert all(sha in head for sha in pins.values()), path


def test_gen_check_cli_reports_a_hand_edit(tmp_path: Path) -> None:
    out = tmp_path / "mcpbind_types"
    runner = CliRunner()
    args = ["--manifest", str(MANIFEST), "--schemas", str(ROOT / "schema"), "--out", str(out)]
    assert runner.invoke(main, ["generate-all", *args]).exit_code == 0
    assert runner.invoke(main, ["check", *args]).exit_code == 0
    target = out / "v2025_11_25" / "types.py"
    target.write_text(target.read_text().replace("class Tool(", "class Tool2("))
    result = runner.invoke(main, ["check", *args])
    assert result.exit_code == 1
    assert "v2025_11_25/types.py" in result.output


def test_the_hand_written_common_module_is_kept_and_never_compared(tmp_path: Path) -> None:
    """Issue 11: ``_common.py`` is a hand-written source beside the generated files, not a
    stamped copy: the generator neither writes, compares nor removes it; other strays fail."""
    assert "DO NOT EDIT" not in (OUT / "_common.py").read_text()
    assert OUT / "_common.py" not in generate_all(MANIFEST, ROOT / "schema", OUT)
    out = tmp_path / "mcpbind_types"
    runner = CliRunner()
    args = ["--manifest", str(MANIFEST), "--schemas", str(ROOT / "schema"), "--out", str(out)]
    assert runner.invoke(main, ["generate-all", *args]).exit_code == 0
    (out / "_common.py").write_text("# hand-written\n")
    (out / "v2025_11_25" / "extra.py").write_text("")
    result = runner.invoke(main, ["check", *args])
    assert result.exit_code == 1
    assert "extra.py (not generated)" in result.output and "_common.py" not in result.output
    assert runner.invoke(main, ["generate-all", *args]).exit_code == 0
    assert (out / "_common.py").read_text() == "# hand-written\n"
    assert not (out / "v2025_11_25" / "extra.py").exists()
    assert runner.invoke(main, ["check", *args]).exit_code == 0


def test_a_schema_change_changes_the_output_without_generator_changes(tmp_path: Path) -> None:
    """One added field and one added method in a copied schema appear in types, table and stubs."""
    schema = copy.deepcopy(_schema("2025-11-25"))
    defs = schema["$defs"]
    defs["Tool"]["properties"]["costHint"] = {"type": "number", "description": "Added."}
    defs["FrobRequestParams"] = {
        "type": "object",
        "properties": {"target": {"type": "string"}},
        "required": ["target"],
    }
    defs["FrobRequest"] = {
        "type": "object",
        "properties": {
            "id": {"$ref": "#/$defs/RequestId"},
            "jsonrpc": {"const": "2.0", "type": "string"},
            "method": {"const": "frob/run", "type": "string"},
            "params": {"$ref": "#/$defs/FrobRequestParams"},
        },
        "required": ["id", "jsonrpc", "method", "params"],
    }
    defs["FrobResult"] = {
        "type": "object",
        "properties": {"count": {"type": "integer"}},
        "required": ["count"],
    }
    defs["ClientRequest"]["anyOf"].append({"$ref": "#/$defs/FrobRequest"})
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    files = generate_version(path, "2025-11-25", tmp_path / "out")
    by_name = {p.name: t for p, t in files.items()}
    assert (
        'cost_hint: int | float | UnsetType = msgspec.field(default=UNSET, name="costHint")'
        in (by_name["types.py"])
    )
    assert 'method="frob/run"' in by_name["methods.py"]
    assert "async def frob(" in by_name["stubs.py"]
    assert "-> FrobResult:" in by_name["stubs.py"]
    original = generate_version(ROOT / "schema/2025-11-25/schema.json", "2025-11-25", tmp_path)
    assert "costHint" not in next(t for p, t in original.items() if p.name == "types.py")


def test_an_override_that_no_longer_applies_fails_generation() -> None:
    """Upstream fixed a quirk: the table entry must go, or generation stops."""
    schema = copy.deepcopy(_schema("2025-06-18"))
    node = schema["definitions"]["ElicitResult"]["properties"]["content"]["additionalProperties"]
    node["type"] = ["string", "number", "boolean"]
    with pytest.raises(OverrideError, match="ElicitResult"):
        build_model(schema, "2025-06-18", "x", "0" * 64)


def test_every_override_names_a_reason_and_a_spec_page() -> None:
    spec = ROOT.parent / "shared" / "spec"
    for o in OVERRIDES:
        assert o.reason and o.versions.pinned
        page = o.spec.split("#")[0]
        if spec.exists():
            assert any((spec / v / page).exists() for v in o.versions.pinned), o


@pytest.mark.parametrize("version", VERSIONS)
def test_every_definition_is_emitted(version: str) -> None:
    defs = _schema(version).get("$defs") or _schema(version)["definitions"]
    module = __import__(f"mcpbind_types.v{version.replace('-', '_')}.types", fromlist=["x"])
    assert set(defs) <= set(module.__all__)


def test_names() -> None:
    assert snake("inputSchema") == "input_schema"
    assert snake("_meta") == "meta"
    assert snake("$schema") == "schema"
    assert snake("io.modelcontextprotocol/clientInfo") == "io_modelcontextprotocol_client_info"
    taken: set[str] = set()
    assert field_name("list", taken) == "list_"
    assert field_name("from", taken) == "from_"
    assert stub_method_name("CallToolRequest", "request") == "call_tool"
    assert stub_method_name("ProgressNotification", "notification") == "notify_progress"


def test_importing_the_bindings_builds_no_decoder() -> None:
    """Nothing heavy at import: decoders are built on first use."""
    code = (
        "import mcpbind_types.unified.stubs, mcpbind_types.v2024_11_05.stubs, "
        "mcpbind_types.v2025_11_25.stubs, mcpbind_types.v2026_07_28.stubs\n"
        "from mcpbind_types._common import decoder\n"
        "assert decoder.cache_info().currsize == 0, decoder.cache_info()\n"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
