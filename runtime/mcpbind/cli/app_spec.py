"""An APP argument (``FILE.py[:ATTR]`` or ``MODULE[:ATTR]``, as ``mcpbind serve`` takes it)
written for another process that starts elsewhere: an MCP client's configuration
(``mcpbind install``) or the MCP Inspector (``mcpbind dev``)."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["PortableApp", "portable_app"]


@dataclass(frozen=True, slots=True)
class PortableApp:
    #: The APP argument with a file's absolute path (and its ``:ATTR``), or the module name.
    spec: str
    #: The folder the server's code lives in: the file's, or for a module the current
    #: folder, which must be importable (on ``PYTHONPATH`` or the working directory).
    folder: str
    #: APP names a module, importable from :attr:`folder` only.
    is_module: bool


def portable_app(app: str) -> PortableApp:
    """``app`` as a process started in another folder must be given it."""
    source, sep, attr = app.rpartition(":")
    if not sep or not all(p.isidentifier() for p in attr.split(".")) or os.path.exists(app):
        source, attr = app, ""
    if not source.endswith(".py"):
        return PortableApp(app, os.getcwd(), is_module=True)
    path = os.path.abspath(source)
    return PortableApp(f"{path}:{attr}" if attr else path, os.path.dirname(path), False)
