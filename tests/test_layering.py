"""The layering the architecture promises, checked on the source: generated/ imports only msgspec
and the standard library; runtime/ never imports codegen/; the protocol core imports no transport;
no upward imports and no import cycles between runtime packages; no runtime module over 600 lines.

The package rules are written against the target layers (README, "The runtime"). Today's code still breaks
some of them: each known breach is listed, with its reason, in ``KNOWN_UPWARD_IMPORTS`` or
``KNOWN_LONG_MODULES`` below. An entry that no longer occurs fails the suite too, so the lists only
shrink; once they are empty the rules hold without exception.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime" / "mcpbind"

#: Runtime packages (a subpackage, or a module at the root of ``mcpbind``), lowest first. A package
#: may import only from packages on its own level or below. ``mcpbind`` is the package's
#: ``__init__`` (the public facade), above everything.
LAYERS: tuple[frozenset[str], ...] = (
    # the protocol core, the lazy-import helpers every layer may use (issue 15, cold start), and
    # the protocol versions with their eras, which the core asks too
    frozenset({"protocol", "_lazy", "versions"}),
    # root helper modules, the one asyncio backend module, the public API declaration
    frozenset({"types", "output_schema", "bindings", "_asyncio", "_api"}),
    frozenset({"transports"}),  # the Transport interface, memory and stdio
    frozenset({"connection", "runner", "peer_errors"}),
    frozenset({"tasks"}),
    frozenset({"server"}),
    frozenset({"http"}),  # the HTTP client transport and the server app
    frozenset({"auth"}),  # OAuth for the HTTP client, bearer checks for the HTTP server
    # the client, and `launch` (a server string: a command or a URL, opened over stdio or HTTP)
    frozenset({"client", "launch"}),
    frozenset({"host"}),
    frozenset({"cli"}),
    frozenset({"mcpbind"}),
)

#: Imports between runtime packages that break the layering: (importing package, imported
#: package) -> why. Empty: the rules hold without exception. Imports under ``if TYPE_CHECKING:``
#: never run and are not counted; imports inside functions are.
KNOWN_UPWARD_IMPORTS: dict[tuple[str, str], str] = {}

#: Runtime modules over 600 lines (path under runtime/mcpbind) -> why. Empty.
KNOWN_LONG_MODULES: dict[str, str] = {}

MAX_MODULE_LINES = 600


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


# ---------------------------------------------------------------- runtime packages


def _level(package: str) -> int | None:
    return next((i for i, layer in enumerate(LAYERS) if package in layer), None)


def _packages() -> set[str]:
    """The top-level packages and root modules of ``mcpbind``."""
    found = {"mcpbind"}
    for path in RUNTIME.iterdir():
        if path.suffix == ".py" and path.stem != "__init__":
            found.add(path.stem)
        elif path.is_dir() and (path / "__init__.py").exists():
            found.add(path.name)
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that runs (at import time or inside a function), skipping ``if
    TYPE_CHECKING:`` bodies (their ``else:`` does run)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                yield from _runtime_imports(ast.Module(body=[child], type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _runtime_imports(node)


def _package_of(dotted: str, packages: set[str]) -> str | None:
    parts = dotted.split(".")
    if parts[0] != "mcpbind":
        return None
    if len(parts) > 1 and parts[1] in packages:
        return parts[1]
    return "mcpbind"


def _edges() -> dict[tuple[str, str], list[str]]:
    """(importer, imported) package pairs -> the modules where the import is written."""
    packages = _packages()
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(RUNTIME.rglob("*.py")):
        relative = path.relative_to(RUNTIME.parent).with_suffix("")
        module = list(relative.parts)
        if module[-1] == "__init__":
            module.pop()
        source = _package_of(".".join(module), packages)
        package_parts = module if path.name == "__init__.py" else module[:-1]
        for node in _runtime_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package_parts[: len(package_parts) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                # ``from . import x`` may name a submodule: count it by the name imported.
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                imported = _package_of(target, packages)
                if source and imported and imported != source:
                    edges.setdefault((source, imported), []).append(".".join(module))
    return edges


def test_every_runtime_package_has_a_layer() -> None:
    unplaced = {p for p in _packages() if _level(p) is None}
    known = {package for edge in KNOWN_UPWARD_IMPORTS for package in edge}
    assert unplaced - known == set(), "add the new package to LAYERS in tests/test_layering.py"


def test_no_upward_imports_between_runtime_packages() -> None:
    edges = _edges()
    upward = {
        edge: modules
        for edge, modules in edges.items()
        if edge not in KNOWN_UPWARD_IMPORTS
        and ((lo := _level(edge[0])) is None or (hi := _level(edge[1])) is None or hi > lo)
    }
    assert upward == {}, "an import from a lower runtime package into a higher one"
    stale = set(KNOWN_UPWARD_IMPORTS) - set(edges)
    assert stale == set(), "these imports are gone: delete them from KNOWN_UPWARD_IMPORTS"


def test_no_import_cycles_between_runtime_packages() -> None:
    graph: dict[str, set[str]] = {}
    for source, target in _edges():
        if (source, target) not in KNOWN_UPWARD_IMPORTS:
            graph.setdefault(source, set()).add(target)
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == []


def test_no_runtime_module_over_600_lines() -> None:
    lengths = {
        path.relative_to(RUNTIME).as_posix(): len(path.read_text().splitlines())
        for path in RUNTIME.rglob("*.py")
    }
    long = {
        p: n for p, n in lengths.items() if n > MAX_MODULE_LINES and p not in KNOWN_LONG_MODULES
    }
    assert long == {}, "split these modules by what their code is"
    stale = {p for p in KNOWN_LONG_MODULES if lengths.get(p, 0) <= MAX_MODULE_LINES}
    assert stale == set(), "these modules are short now: delete them from KNOWN_LONG_MODULES"
