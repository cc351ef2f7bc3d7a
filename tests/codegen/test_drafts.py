"""Every draft of the spec under ``../shared/schema/drafts/`` generates as an unknown version.

Issue 13 §1: a schema the generator has never seen gives working bindings with no generator
change. Each folder found there (none is named here, a new one is tested too) is generated with
``python -m mcpbind_codegen generate`` under a label like ``draft-2026-03-31`` into one package,
which must import as written, pass ``mypy --strict`` (one run over every draft) and round-trip
every example of the draft (``examples/<Type>/*.json`` upstream) through the generated
``decode``/``encode``: decode into the type the folder names, re-encode, compare equal.

Two differences are allowed, each only where the draft's own schema says so: a key the schema
does not declare at that place is dropped (the example contradicts its schema), and a required
key absent from the example is re-encoded with the default the schema (or a `tolerate` entry of
the override table) gives it.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

from mcpbind_codegen.cli import main
from mcpbind_codegen.overrides import OVERRIDES
from mcpbind_codegen.pipeline import package_name

ROOT = Path(__file__).resolve().parents[2]
DRAFTS_DIR = ROOT.parent / "shared" / "schema" / "drafts"
DRAFTS = (
    sorted(p for p in DRAFTS_DIR.iterdir() if (p / "schema.json").is_file())
    if DRAFTS_DIR.is_dir()
    else []
)
PACKAGE = "mcpbind_drafts"
_MISSING = object()

pytestmark = pytest.mark.skipif(not DRAFTS, reason=f"no drafts under {DRAFTS_DIR}")


def _labels(drafts: list[Path]) -> dict[str, str]:
    """Folder name -> version label: ``draft-<date>`` where the date is unique, else the name."""
    dates = {p.name: m[0] for p in drafts if (m := re.match(r"\d{4}-\d{2}-\d{2}", p.name))}
    counts = {d: list(dates.values()).count(d) for d in dates.values()}
    return {
        p.name: "draft-" + (dates[p.name] if counts.get(dates.get(p.name, ""), 0) == 1 else p.name)
        for p in drafts
    }


LABELS = _labels(DRAFTS)
EXAMPLES = [(d, f) for d in DRAFTS for f in sorted((d / "examples").rglob("*.json"))]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every draft generated into one package ``mcpbind_drafts`` on ``sys.path``."""
    root = tmp_path_factory.mktemp("drafts")
    runner = CliRunner()
    for draft in DRAFTS:
        args = ["generate", str(draft / "schema.json"), "--version", LABELS[draft.name]]
        result = runner.invoke(main, [*args, "--out", str(root / PACKAGE)])
        assert result.exit_code == 0, result.output
        assert "is not a pinned version" in result.output
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def _module(draft: str, name: str = "") -> ModuleType:
    """The draft's package, or its submodule ``name``."""
    package = f"{PACKAGE}.{package_name(LABELS[draft])}"
    return importlib.import_module(f"{package}.{name}" if name else package)


def test_every_draft_generates_into_one_package(generated: Path) -> None:
    package = importlib.import_module(PACKAGE)
    assert set(package.VERSIONS) == set(LABELS.values())


@pytest.mark.parametrize("draft", [d.name for d in DRAFTS])
def test_the_output_imports_as_written(generated: Path, draft: str) -> None:
    package, methods = _module(draft), _module(draft, "methods")
    _module(draft, "stubs")
    assert LABELS[draft] == package.PROTOCOL_VERSION
    schema = json.loads((DRAFTS_DIR / draft / "schema.json").read_text())["$defs"]
    assert set(schema) <= set(package.__all__)
    requests = [m for m in methods.METHODS if m.kind != "notification"]
    assert requests and all(m.result_type is not None for m in requests)


def test_the_output_passes_mypy_strict(generated: Path) -> None:
    """One mypy run over every draft's package, its cache in the temporary folder."""
    cmd = [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "-p", PACKAGE]
    cmd += ["--cache-dir", str(generated / ".mypy_cache")]
    # The drafts import the runtime's own mcpbind_types._common: point mypy at this checkout's
    # generated/ whatever the install (a setuptools editable finder is invisible to mypy).
    env = {**os.environ, "MYPYPATH": str(ROOT / "generated")}
    done = subprocess.run(cmd, cwd=generated, capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("draft", "path"),
    [(d.name, f) for d, f in EXAMPLES],
    ids=[f"{d.name}/{f.parent.name}/{f.name}" for d, f in EXAMPLES],
)
def test_every_example_round_trips(generated: Path, draft: str, path: Path) -> None:
    types, common = _module(draft, "types"), importlib.import_module("mcpbind_types._common")
    tp = getattr(types, path.parent.name, None)
    assert tp is not None, f"the example folder names {path.parent.name}, which is not generated"
    raw = path.read_bytes()
    obj = common.decoder(tp).decode(raw)
    back: Any = json.loads(common.encode(obj))
    defs = json.loads((DRAFTS_DIR / draft / "schema.json").read_text())["$defs"]
    _compare(obj, json.loads(raw), back, defs, path.parent.name)


def _compare(obj: Any, expected: Any, back: Any, defs: dict[str, Any], where: str) -> None:
    """``back`` equals ``expected`` but for the two differences the schema explains."""
    if isinstance(obj, msgspec.Struct) and isinstance(expected, dict) and isinstance(back, dict):
        name = type(obj).__name__
        declared = _properties(defs, name)
        for key in expected.keys() - back.keys():
            assert declared is not None and key not in declared, (
                f"{where}.{key} was dropped on re-encode, though {name} declares it"
            )
        for key in back.keys() - expected.keys():
            assert _default(defs, name, key) == back[key], (
                f"{where}.{key} = {back[key]!r} was added on re-encode: not the default of {name}"
            )
        fields = {f.encode_name: f.name for f in msgspec.structs.fields(obj)}
        for key in expected.keys() & back.keys():
            value = getattr(obj, fields[key]) if key in fields else None
            _compare(value, expected[key], back[key], defs, f"{where}.{key}")
    elif (
        isinstance(obj, list)
        and isinstance(expected, list)
        and isinstance(back, list)
        and len(obj) == len(expected) == len(back)
    ):
        for i, (o, e, b) in enumerate(zip(obj, expected, back, strict=True)):
            _compare(o, e, b, defs, f"{where}[{i}]")
    elif (
        isinstance(obj, dict)
        and isinstance(expected, dict)
        and isinstance(back, dict)
        and expected.keys() == back.keys()
    ):
        for key in expected:
            _compare(obj.get(key), expected[key], back[key], defs, f"{where}.{key}")
    else:
        assert back == expected, f"{where}: {expected!r} re-encoded as {back!r}"


def _node(defs: dict[str, Any], name: str) -> dict[str, Any]:
    """A definition with its ``allOf`` parts merged in."""
    node = dict(defs[name])
    props = dict(node.get("properties", {}))
    required = list(node.get("required", []))
    for part in node.get("allOf", []):
        if "$ref" in part:
            part = _node(defs, part["$ref"].rsplit("/", 1)[1])
        props.update(part.get("properties", {}))
        required += part.get("required", [])
    return {**node, "properties": props, "required": required}


def _properties(defs: dict[str, Any], name: str) -> set[str] | None:
    """The keys the schema declares for the definition ``name`` (None: not a definition)."""
    return set(_node(defs, name)["properties"]) if name in defs else None


def _default(defs: dict[str, Any], name: str, key: str) -> Any:
    """What an absent required key means, by the schema or by a `tolerate` override."""
    if name not in defs:
        return _MISSING
    node = _node(defs, name)
    if key not in node["required"]:
        return _MISSING
    prop = node["properties"].get(key, {})
    if "default" in prop:
        return prop["default"]
    target = f"{name}.{key}"
    return next(
        (o.value for o in OVERRIDES if o.kind == "tolerate" and o.target == target), _MISSING
    )
