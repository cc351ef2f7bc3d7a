"""Modules, loggers and the public names of packages imported at their first use, so that
importing mcpbind does not pay for ``asyncio`` (with ``ssl``, ``socket``, ``subprocess``),
``logging`` or the parts of mcpbind a program does not use (issue 15, cold start).

The stand-in replaces itself with the module at the first use, so a later
``asyncio.get_running_loop`` is a plain module attribute read (a hot path pays no import and
no ``__getattr__``); a package's ``__getattr__`` (:func:`lazy_package`) binds each name it
resolves in the package, for the same reason. A package's public names are written once, as
its imports (:func:`public_names`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib import import_module
from typing import TYPE_CHECKING, Any

from mcpbind_types._lazy import LazyModule

if TYPE_CHECKING:
    import ast
    import logging
else:  # parsed only when a package's public names are first read (lazy_package)
    ast = LazyModule("ast", globals())

__all__ = ["LazyModule", "lazy_logger", "lazy_package", "public_names"]


def public_names(tree: ast.Module, package: str) -> dict[str, str]:
    """The public names of the package ``package`` whose ``__init__.py`` is ``tree``, each with
    the module it comes from (absolute; ``package`` itself for what the package defines), in
    source order.

    A package declares a public name by importing it as itself (a redundant alias, the PEP 484
    re-export that mypy --strict, pyright and the docs read too), at module level or under
    ``if TYPE_CHECKING:``: ``from .client import Client as Client``, or ``from . import types
    as types`` for a submodule; or by defining it (a function, a class or a constant) at module
    level under a name without a leading underscore. Any other import is private."""
    names: dict[str, str] = {}
    for node in _module_level(tree.body):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                home = f"{base}.{node.module}" if node.module else base
            else:
                home = node.module or ""
            names.update((a.name, home) for a in node.names if a.asname == a.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = package
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update((t.id, package) for t in targets if isinstance(t, ast.Name))
    return {name: home for name, home in names.items() if not name.startswith("_")}


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of ``body`` and of its ``if TYPE_CHECKING:`` blocks."""
    for node in body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from node.body
        else:
            yield node


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def lazy_package(
    namespace: dict[str, Any],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562), written from its own source: the
    package's ``globals()`` is ``namespace``, its public names are its :func:`public_names`.

    The import statements are the one list of a package's public names. Those at module level
    are imported with the package; those under ``if TYPE_CHECKING:`` are imported at their
    first use and bound in ``namespace`` then, so later reads are plain attribute reads.
    ``__all__`` (read by ``import *``) is the list of them all. The package's source is parsed
    once, at the first read of a name it does not hold yet (``ast`` is imported then; a client
    or a server imports it anyway); private names never parse it, so the import system's probes
    for submodules stay cheap."""
    package: str = namespace["__name__"]
    found: dict[str, str] = {}

    def exports() -> dict[str, str]:
        if not found:
            with open(namespace["__file__"], "rb") as source:
                found.update(public_names(ast.parse(source.read()), package))
        return found

    def __getattr__(name: str) -> Any:
        if name.startswith("_") and name != "__all__":
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        homes = exports()
        if name == "__all__":
            value: Any = list(homes)
        elif (home := homes.get(name)) is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        elif home == package:  # ``from . import types as types``: a submodule
            value = import_module(f"{package}.{name}")
        else:
            value = getattr(import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports()})

    return __getattr__, __dir__


class _LazyLogger:
    """Stands for ``logging.getLogger(name)``; imports logging at the first use."""

    def __init__(self, name: str) -> None:
        self.__dict__["_lazy_name"] = name

    def __getattr__(self, attr: str) -> Any:
        logger = import_module("logging").getLogger(self.__dict__["_lazy_name"])
        value = getattr(logger, attr)
        if callable(value):  # methods are kept; state (``level``, ``disabled``) is read live
            self.__dict__[attr] = value
        return value


def lazy_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)``, with logging imported when the first message is logged."""
    logger: Any = _LazyLogger(name)
    return logger  # type: ignore[no-any-return]
