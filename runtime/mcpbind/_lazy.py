"""Modules, loggers and the public names of packages imported at their first use, so that
importing mcpbind does not pay for ``asyncio`` (with ``ssl``, ``socket``, ``subprocess``),
``logging`` or the parts of mcpbind a program does not use (issue 15, cold start).

The stand-in replaces itself with the module at the first use, so a later
``asyncio.get_running_loop`` is a plain module attribute read (a hot path pays no import and
no ``__getattr__``); a package's ``__getattr__`` (:func:`lazy_package`) binds each name it
resolves in the package, for the same reason. A package's public names are written once, as
its imports (:func:`public_names`)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any

from mcpbind_types._lazy import LazyModule

if TYPE_CHECKING:
    import logging

__all__ = ["LazyModule", "lazy_logger", "lazy_package", "public_names"]


def public_names(source: str, package: str) -> dict[str, str]:
    """The public names of the package ``package`` whose ``__init__.py`` is ``source``, each
    with the module it comes from (absolute; ``package`` itself for what the package defines),
    in source order.

    A package declares a public name by importing it as itself (a redundant alias, the PEP 484
    re-export that mypy --strict, pyright and the docs read too), at module level or under
    ``if TYPE_CHECKING:``: ``from .client import Client as Client``, or ``from . import types
    as types`` for a submodule; or by defining a function or a class whose name has no leading
    underscore. Any other import is private.

    A scan of the lines as ruff formats them (one aliased name per import, or one per line
    between parentheses), not ``ast``: it runs at the first use of a package, on the cold-start
    path, at a small fraction of the cost of a parse. ``tests/test_public_api.py`` checks that
    it agrees with a parse of every package of mcpbind."""
    names: dict[str, str] = {}
    wrapped: str | None = None  # the module of an open ``from M import (``
    for line in source.splitlines():
        text = line.partition("#")[0].strip()
        if wrapped is not None:
            if text.startswith(")"):
                wrapped = None
            else:
                _add_alias(names, text, wrapped)
        elif text.startswith("from ") and " import " in text:
            module, _, imported = text[len("from ") :].partition(" import ")
            home = _absolute(module, package)
            if imported == "(":
                wrapped = home
            else:
                for item in imported.split(","):
                    _add_alias(names, item, home)
        elif line.startswith(("def ", "async def ", "class ")):
            defined = line.removeprefix("async ").split(maxsplit=1)[1]  # "run() -> None:"
            names[defined.partition("(")[0].partition(":")[0]] = package
    return {name: home for name, home in names.items() if not name.startswith("_")}


def _add_alias(names: dict[str, str], item: str, home: str) -> None:
    """Records ``item`` (``A as A``, perhaps with a trailing comma) when it re-exports ``A``."""
    name, _, alias = item.strip().rstrip(",").partition(" as ")
    if name and alias.strip() == name:
        names[name] = home


def _absolute(module: str, package: str) -> str:
    """``module`` as written in ``from module import`` in the package ``package``."""
    level = len(module) - len(module.lstrip("."))
    if not level:
        return module
    base = package.rsplit(".", level - 1)[0] if level > 1 else package
    rest = module[level:]
    return f"{base}.{rest}" if rest else base


def lazy_package(
    namespace: dict[str, Any],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562), written from its own source: the
    package's ``globals()`` is ``namespace``, its public names are its :func:`public_names`.

    The imports are the one list of a package's public names. Those at module level
    are imported with the package; those under ``if TYPE_CHECKING:`` are imported at their
    first use and bound in ``namespace`` then, so later reads are plain attribute reads.
    ``__all__`` (read by ``import *``) is the list of them all. The package's source is read
    once, at the first read of a name it does not hold yet; private names never read it, so the
    import system's probes for submodules stay cheap."""
    package: str = namespace["__name__"]
    found: dict[str, str] | None = None

    def exports() -> dict[str, str]:
        nonlocal found
        if found is None:
            # Through the package's loader: a file, or a zip archive (zipimport) alike.
            text = namespace["__loader__"].get_source(package)
            if text is None:  # a sourceless install (.pyc only) keeps no list of names
                raise ImportError(f"{package}: its public names are read from its source")
            found = public_names(text, package)
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
