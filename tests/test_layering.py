"""The layering the architecture promises, checked on the source: generated/ imports only msgspec
and the standard library; runtime/ never imports codegen/; the protocol core imports no transport;
no upward imports and no import cycles between runtime packages, and no import circle between the
modules inside one package. A module's length is no rule: modules are split by purpose.

The package rules are written against the target layers (docs/development.md, "The runtime").
Where today's code still breaks one, the breach is listed with its reason in
``KNOWN_UPWARD_IMPORTS`` or ``KNOWN_CIRCLES`` below. An entry that no longer occurs fails the
suite too, so the lists only shrink; once they are empty the rules hold without exception.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
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

#: Runtime packages whose modules still import each other in a circle -> why. Empty. Counted
#: like the imports between packages: ``if TYPE_CHECKING:`` imports never run and are not
#: counted, imports inside functions are.
KNOWN_CIRCLES: dict[str, str] = {}


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


def _packages(root: Path = RUNTIME) -> set[str]:
    """The top-level packages and root modules of ``mcpbind`` (found in ``root``)."""
    found = {"mcpbind"}
    for path in root.iterdir():
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


# ---------------------------------------------------------------- modules inside a package


def _module_names(root: Path) -> dict[str, Path]:
    """Every runtime module by its dotted name (a package by its ``__init__``)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _module_of(dotted: str, modules: Mapping[str, Path]) -> str | None:
    """The runtime module an imported name lives in: the longest prefix that is a module."""
    parts = dotted.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) or None


def _module_edges(root: Path = RUNTIME) -> dict[str, set[str]]:
    """Runtime module -> the runtime modules of its own package that it imports. An import
    names the submodule when ``from package import submodule`` does, else the module the name
    is defined in; the packages above the named module, which Python imports first, are not
    counted (every package would otherwise import its own ``__init__``)."""
    modules = _module_names(root)
    packages = _packages(root)
    graph: dict[str, set[str]] = {}
    for module, path in sorted(modules.items()):
        package_parts = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in _runtime_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package_parts[: len(package_parts) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                imported = _module_of(target, modules)
                if (
                    imported is not None
                    and imported != module
                    and _package_of(imported, packages) == _package_of(module, packages)
                ):
                    graph.setdefault(module, set()).add(imported)
    return graph


def _circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_circles_are_found() -> None:
    """The circle search on a made-up graph: a loop of three, a pair, and a tree beside them."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert _circles(graph) == [["a", "b", "c"], ["d", "e"]]


def test_circles_count_imports_that_run(tmp_path: Path) -> None:
    """On a made-up ``mcpbind``: an import inside a function closes a circle, one under ``if
    TYPE_CHECKING:`` does not; ``from . import x`` names the submodule; a circle between two
    packages is left to the package check."""
    files = {
        "__init__.py": "",
        "a/__init__.py": "from . import one\n",
        "a/one.py": "def f():\n    from .two import g\n",
        "a/two.py": "from .one import f\n",
        "b/__init__.py": "",
        "b/one.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .two import g\n",
        "b/two.py": "from mcpbind.b import one\nfrom ..a import two\n",
        "c.py": "import mcpbind.b.two\n",
    }
    root = tmp_path / "mcpbind"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    edges = _module_edges(root)
    assert edges == {
        "mcpbind.a": {"mcpbind.a.one"},
        "mcpbind.a.one": {"mcpbind.a.two"},
        "mcpbind.a.two": {"mcpbind.a.one"},
        "mcpbind.b.two": {"mcpbind.b.one"},
    }
    assert _circles(edges) == [["mcpbind.a.one", "mcpbind.a.two"]]


def test_no_import_circles_inside_runtime_packages() -> None:
    packages = _packages()
    circles = _circles(_module_edges())
    by_package: dict[str, list[list[str]]] = {}
    for circle in circles:
        package = _package_of(circle[0], packages)
        assert package is not None
        by_package.setdefault(package, []).append(circle)
    unknown = {p: c for p, c in by_package.items() if p not in KNOWN_CIRCLES}
    assert unknown == {}, "modules of one package that import each other in a circle"
    stale = set(KNOWN_CIRCLES) - set(by_package)
    assert stale == set(), "these circles are gone: delete them from KNOWN_CIRCLES"


def test_no_private_name_imported_across_runtime_modules() -> None:
    """A module's underscore names are its own: what another module needs is a public name of
    the module whose purpose it serves (``from ._lazy import LazyModule``, a public name of a
    private module, is fine). Imports under ``if TYPE_CHECKING:`` count here too."""
    modules = _module_names(RUNTIME)
    found = []
    for module, path in sorted(modules.items()):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").startswith("mcpbind.")
            ):
                private = [a.name for a in node.names if a.name.startswith("_")]
                found += [f"{module}: {node.module or '.'} {name}" for name in private]
    assert found == []


def test_no_two_runtime_classes_share_a_name() -> None:
    """One name per concept (issue 29): a class name, public or private, names one class in
    the whole runtime, so a reader (or a traceback) never has to ask which one is meant."""
    homes: dict[str, list[str]] = {}
    for path in sorted(RUNTIME.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                homes.setdefault(node.name, []).append(str(path.relative_to(RUNTIME)))
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}
