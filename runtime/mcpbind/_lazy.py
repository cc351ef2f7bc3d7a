"""Modules and loggers imported at their first use, so that importing mcpbind does not pay
for ``asyncio`` (with ``ssl``, ``socket``, ``subprocess``) or ``logging`` (issue 15, cold
start): they are needed only once an event loop runs or a message is logged.

The stand-in replaces itself with the module at the first use, so a later
``asyncio.get_running_loop`` is a plain module attribute read (a hot path pays no import and
no ``__getattr__``)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

__all__ = ["LazyModule", "lazy_logger"]


class LazyModule:
    """Stands for the module ``name`` bound as ``name`` in ``namespace`` (the importing
    module's ``globals()``): the first attribute read imports it and binds the module itself
    there, so from then on that module's code reads the real module, at no extra cost."""

    __slots__ = ("_name", "_namespace")

    def __init__(self, name: str, namespace: dict[str, Any]) -> None:
        self._name = name
        self._namespace = namespace

    def __getattr__(self, attr: str) -> Any:
        module = import_module(self._name)
        if self._namespace.get(self._name) is self:
            self._namespace[self._name] = module
        return getattr(module, attr)


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
