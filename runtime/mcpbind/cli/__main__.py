"""``python -m mcpbind.cli``: the same CLI as the ``mcpbind`` console script."""

from __future__ import annotations

from . import run

if __name__ == "__main__":
    run()
