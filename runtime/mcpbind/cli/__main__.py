"""``python -m mcpbind.cli``: the same CLI as the ``mcpbind`` console script."""

from __future__ import annotations

from . import main

if __name__ == "__main__":
    main(prog_name="mcpbind")
