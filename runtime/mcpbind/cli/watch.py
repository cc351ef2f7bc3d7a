"""Noticing that a server's Python source changed, for ``mcpbind dev``'s reload.

The ``.py`` files under the server's folder are polled (their modification time and size),
as uvicorn's ``StatReload`` does when watchfiles is not installed: a few hundred ``stat``
calls twice a second cost nothing next to a server, and no dependency (nor a native
extension) is added for a development command. Folders that are not the project's own code
are not walked: hidden ones (``.venv``, ``.git``), ``__pycache__``, ``node_modules``,
``site-packages`` and any virtualenv (a folder holding ``pyvenv.cfg``).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["SourceWatcher"]

_SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages"})

Snapshot = dict[str, tuple[int, int]]


class SourceWatcher:
    """The ``.py`` files under ``root``; :meth:`changed` says which were added, removed or
    modified since the previous call (or since construction). At most ``limit`` files are
    watched, so a server started from a huge folder does not walk it twice a second."""

    def __init__(self, root: str | os.PathLike[str], *, limit: int = 5000) -> None:
        self.root = Path(root)
        self.limit = limit
        self._seen = self._snapshot()

    def _snapshot(self) -> Snapshot:
        found: Snapshot = {}
        for folder, dirs, files in os.walk(self.root):
            if "pyvenv.cfg" in files:
                dirs.clear()
                continue
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED]
            for name in files:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                try:
                    stat = os.stat(path)
                except OSError:  # removed meanwhile
                    continue
                found[path] = (stat.st_mtime_ns, stat.st_size)
                if len(found) >= self.limit:
                    return found
        return found

    def changed(self) -> list[str]:
        """The paths added, removed or modified since the last call, sorted."""
        now = self._snapshot()
        before, self._seen = self._seen, now
        return sorted(p for p in before.keys() | now.keys() if before.get(p) != now.get(p))
