"""Modules imported at their first use (issue 15, cold start): a package's types, and the
method table its stubs read, so that importing a package, or a runtime built on it, creates
no Struct class until one is needed.

Hand-written, not generated (like ``_common``), and standard library only: the runtime's
command line uses it before it imports msgspec.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

__all__ = ["LazyModule", "reexport_lazily"]


class LazyModule:
    """Stands for the module ``name`` bound as ``bound_as`` (default ``name``) in ``namespace``
    (the importing module's ``globals()``): the first attribute read imports it and binds the
    module itself there, so from then on that module's code reads the real module, at no extra
    cost."""

    __slots__ = ("_bound_as", "_name", "_namespace")

    def __init__(self, name: str, namespace: dict[str, Any], bound_as: str | None = None) -> None:
        self._name = name
        self._namespace = namespace
        self._bound_as = name if bound_as is None else bound_as

    def __getattr__(self, attr: str) -> Any:
        module = import_module(self._name)
        if self._namespace.get(self._bound_as) is self:
            self._namespace[self._bound_as] = module
        return getattr(module, attr)


def reexport_lazily(
    package: str, module: str, namespace: dict[str, Any], submodules: frozenset[str]
) -> Callable[[str], Any]:
    """A package's ``__getattr__`` (PEP 562) re-exporting its submodule ``module``'s
    ``__all__``: the first read of any of those names (or of ``__all__``, as ``import *`` does)
    imports ``module`` and binds all of them in the package's ``namespace``, so that later reads
    are plain attribute reads. Private names and the package's ``submodules`` (which the import
    system probes for with ``hasattr``) are left to the import system."""

    def __getattr__(name: str) -> Any:
        if name in submodules or (name.startswith("_") and name != "__all__"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        source = import_module(f"{package}.{module}")
        namespace.update((n, getattr(source, n)) for n in source.__all__)
        namespace["__all__"] = source.__all__
        if name not in namespace:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return namespace[name]

    return __getattr__
