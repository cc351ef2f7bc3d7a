"""The Host shell's history file (issue 28, sibling of F9): what was typed may hold secrets
(tool arguments), so a new history file is its owner's alone (0600), like a shell's."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mcpbind.cli.host_editor import LineEditor


def test_a_new_history_file_is_private(tmp_path: Path) -> None:
    history = tmp_path / "state" / "history"
    previous = os.umask(0o022)
    try:
        LineEditor(lambda _: [], history)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert stat.S_IMODE(history.parent.stat().st_mode) == 0o700
