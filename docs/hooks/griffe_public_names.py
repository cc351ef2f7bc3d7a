"""Griffe extension of the API reference (mkdocs.yml, mkdocstrings' python handler).

A package of mcpbind declares its public names once, as redundant-alias imports
(``from .client import Client as Client``, under ``if TYPE_CHECKING:`` when they are imported at
first use); its ``__all__`` is built from them at run time (``mcpbind._lazy``). Griffe's static
analysis sees no ``__all__`` there, and takes imported names for private: this extension gives
each such package the exports the runtime gives it, by the runtime's own rule
(``mcpbind._lazy.public_names``), so the reference documents exactly ``__all__``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import griffe

from mcpbind._lazy import public_names


class PublicNames(griffe.Extension):
    """Sets the exports of each package of mcpbind whose ``__init__.py`` has no ``__all__``."""

    def on_module_members(self, *, node: object, mod: griffe.Module, **kwargs: Any) -> None:
        runtime = mod.path == "mcpbind" or mod.path.startswith("mcpbind.")
        if runtime and mod.is_init_module and mod.exports is None and mod.filepath:
            names = public_names(Path(str(mod.filepath)).read_text(encoding="utf-8"), mod.path)
            if names:
                mod.exports = list(names)
