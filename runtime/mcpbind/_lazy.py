"""Modules and loggers imported at their first use, so that importing mcpbind does not pay
for ``asyncio`` (with ``ssl``, ``socket``, ``subprocess``) or ``logging`` (issue 15, cold
start): they are needed only once an event loop runs or a message is logged.

The stand-in replaces itself with the module at the first use, so a later
``asyncio.get_running_loop`` is a plain module attribute read (a hot path pays no import and
no ``__getattr__``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any

from mcpbind_types._lazy import LazyModule

if TYPE_CHECKING:
    import logging

__all__ = ["LazyModule", "lazy_attributes", "lazy_logger"]


def lazy_attributes(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any] | None = None
) -> Callable[[str], Any]:
    """A package's ``__getattr__`` (PEP 562): each name of ``homes`` is read from its module
    (relative to ``package`` when it starts with a dot), imported at the first use; with
    ``namespace`` (the package's ``globals()``) bound there once found, so later reads of it
    are plain attribute reads."""

    def __getattr__(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        if namespace is not None:
            namespace[name] = value
        return value

    return __getattr__


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
