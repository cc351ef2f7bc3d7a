"""The public API is declared in one place (``mcpbind._api.PUBLIC_MODULES``) and holds: each
public module's ``__all__`` resolves, has its page in the API reference, and is what the
README, the documentation and the examples import from; the rest is said to be internal. Each
package's public names are written once, as its imports (``mcpbind._lazy``). (Not spec
behaviour.)

That the reference documents every name of each ``__all__`` is checked on the built site, by
``tests/docs/test_site.py::test_every_public_name_is_in_the_api_reference``."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import mcpbind
from mcpbind._api import PUBLIC_MODULES
from mcpbind._lazy import public_names
from tests.examples.test_docs import BLOCKS

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "runtime" / "mcpbind"
REFERENCE = ROOT / "docs" / "reference" / "api"
INTERNAL = "modules not listed here are internal and may change"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_name_resolves_and_import_star_binds_exactly_all(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert isinstance(exported, list), name
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
    for attr in exported:
        value = getattr(module, attr)
        assert module.__dict__[attr] is value, f"{name}.{attr} is not bound in its module"
    space: dict[str, object] = {}
    exec(f"from {name} import *", space)
    assert sorted(k for k in space if k != "__builtins__") == sorted(exported)
    assert set(dir(module)) >= set(exported)


def _reference_directives() -> set[str]:
    """The modules that the API reference pages render (``::: module``)."""
    found = set()
    for page in REFERENCE.glob("*.md"):
        found.update(re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), re.M))
    return found


def test_every_public_module_has_its_place_in_the_api_reference() -> None:
    missing = [name for name in PUBLIC_MODULES if name not in _reference_directives()]
    assert missing == []


def test_the_package_docstring_and_the_reference_index_name_exactly_the_public_modules() -> None:
    """Both say, in the same words, that the rest is internal."""
    index = (REFERENCE / "index.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| \[`(mcpbind[\w.]*)`\]", index, re.M)
    assert listed == list(PUBLIC_MODULES)
    assert INTERNAL in " ".join(index.split()).lower()
    doc = mcpbind.__doc__ or ""
    paragraph = next(p for p in doc.split("\n\n") if "public API" in p)
    named = re.findall(r"``(mcpbind[\w.]*)``", paragraph)
    assert [m for m in named if m != "mcpbind._api"] == list(PUBLIC_MODULES)
    assert INTERNAL in " ".join(paragraph.split()).lower()


def _imports(tree: ast.AST) -> list[tuple[str, list[str]]]:
    """Each import of ``mcpbind`` in ``tree``: the module, and the names taken from it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
    return [(module, names) for module, names in found if module.split(".")[0] == "mcpbind"]


def _sources() -> list[tuple[str, ast.AST]]:
    """The README's and the documentation's Python blocks, and the examples."""
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    found: list[tuple[str, ast.AST]] = [
        (block.where, compile(block.code, block.where, "exec", flags=flags)) for block in BLOCKS
    ]
    for path in sorted((ROOT / "examples").rglob("*.py")):
        found.append((str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8"))))
    return found


def test_the_docs_and_the_examples_import_only_the_public_api() -> None:
    """``import M`` needs a public M (or a package of one, ``mcpbind.auth``); ``from M import
    names`` needs each name in M's ``__all__``."""
    packages = {name.rpartition(".")[0] for name in PUBLIC_MODULES}
    outside = []
    seen = 0
    for where, tree in _sources():
        for module, names in _imports(tree):
            seen += 1
            if module not in PUBLIC_MODULES:
                if names or module not in packages:
                    outside.append(f"{where}: {module}")
                continue
            public = importlib.import_module(module).__all__
            outside += [f"{where}: {module}.{name}" for name in names if name not in public]
    assert outside == []
    assert seen > 30  # the pages and the examples were read


def _parsed_public_names(init: Path, package: str) -> dict[str, str]:
    """The rule of ``mcpbind._lazy.public_names``, by a parse: redundant-alias imports at module
    level or under ``if TYPE_CHECKING:``, and functions and classes defined at module level."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    body: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            body += node.body
        else:
            body.append(node)
    names: dict[str, str] = {}
    for node in body:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                home = f"{base}.{node.module}" if node.module else base
            else:
                home = node.module or ""
            names.update((a.name, home) for a in node.names if a.asname == a.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = package
    return {name: home for name, home in names.items() if not name.startswith("_")}


PACKAGES = sorted(RUNTIME.rglob("__init__.py"))


def _package(init: Path) -> str:
    return ".".join(init.parent.relative_to(RUNTIME.parent).parts)


@pytest.mark.parametrize("init", PACKAGES, ids=_package)
def test_the_scan_of_a_package_agrees_with_its_parse(init: Path) -> None:
    package = _package(init)
    text = init.read_text(encoding="utf-8")
    assert public_names(text, package) == _parsed_public_names(init, package)


@pytest.mark.parametrize("init", PACKAGES, ids=_package)
def test_a_package_lists_its_names_once_and_type_checkers_see_them_all(init: Path) -> None:
    """A package's ``__all__`` is its public imports and definitions; one written out beside
    them would be a second list. Under ``if TYPE_CHECKING:`` every import is a public name
    (a plain import there would be a name type checkers see and the package does not give),
    and each of them resolves to the object its import names."""
    package = _package(init)
    module = importlib.import_module(package)
    tree = ast.parse(init.read_text(encoding="utf-8"))
    assigned = [
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    ]
    assert "__all__" not in assigned, f"{package} writes its names out a second time"
    expected = _parsed_public_names(init, package)
    assert getattr(module, "__all__", []) == list(expected)
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                assert all(a.asname == a.name for a in statement.names), ast.unparse(statement)
    for name, home in expected.items():
        value = getattr(module, name)
        if home != package:  # not defined here, nor a submodule (``from . import types``)
            assert value is getattr(importlib.import_module(home), name), f"{package}.{name}"
