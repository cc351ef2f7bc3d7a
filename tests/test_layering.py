"""The layering the architecture promises, checked on the source: generated/ imports only msgspec
and the standard library; runtime/ never imports codegen/; the protocol core imports no transport."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imports(folder: Path) -> Iterator[tuple[Path, str]]:
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield path, alias.name
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                yield path, node.module


def test_generated_imports_only_msgspec_and_the_standard_library() -> None:
    allowed = set(sys.stdlib_module_names) | {"msgspec", "mcpbind_types"}
    bad = [(p, m) for p, m in _imports(ROOT / "generated") if m.split(".")[0] not in allowed]
    assert bad == []


def test_runtime_never_imports_codegen() -> None:
    bad = [(p, m) for p, m in _imports(ROOT / "runtime") if m.startswith("mcpbind_codegen")]
    assert bad == []


def test_protocol_core_imports_no_transport() -> None:
    core = ROOT / "runtime" / "mcpbind" / "protocol"
    banned = ("mcpbind.transports", "anyio", "asyncio", "socket", "subprocess")
    bad = [(p, m) for p, m in _imports(core) if m.startswith(banned)] if core.exists() else []
    assert bad == []
