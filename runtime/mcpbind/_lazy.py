"""Modules and loggers imported at their first use, so that importing mcpbind does not pay
for ``asyncio`` (with ``ssl``, ``socket``, ``subprocess``) or ``logging`` (issue 15, cold
start): they are needed only once an event loop runs or a message is logged.

Each attribute is looked up once and then kept in the stand-in's ``__dict__``, so a later
``asyncio.get_running_loop`` costs what it costs on the module itself (a hot path pays no
import and no ``__getattr__``)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

__all__ = ["LazyModule", "lazy_logger"]


class LazyModule:
    """Stands for the module ``name``; imports it at the first attribute read."""

    def __init__(self, name: str) -> None:
        self.__dict__["_lazy_name"] = name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(import_module(self.__dict__["_lazy_name"]), attr)
        self.__dict__[attr] = value  # later reads are plain dict hits
        return value


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
