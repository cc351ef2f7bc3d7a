"""Type checkers see exactly the public API that runs: every name of each public module's
``__all__`` (built at run time from the package's imports, ``mcpbind._lazy``) is an explicit
export for mypy --strict, and a name that is not there is an error, not ``Any`` (the packages'
``__getattr__`` is hidden from type checkers). ``make typecheck-installed`` checks the same
through pyright against the built wheel. (Not spec behaviour.)"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from mypy import api

from mcpbind._api import PUBLIC_MODULES

ROOT = Path(__file__).resolve().parents[2]

USER_CODE = """
import mcpbind
{imports}

reveal_type(mcpbind.Client)
reveal_type(mcpbind.types.Tool)
mcpbind.NoSuchName  # error
from mcpbind import lazy_package  # error
from mcpbind.server import NoSuchName  # error
"""


def test_mypy_sees_every_public_name_and_nothing_else(tmp_path: Path) -> None:
    imports = []
    for module in PUBLIC_MODULES:
        names = importlib.import_module(module).__all__
        imports.append(f"from {module} import {', '.join(names)}")
    code = USER_CODE.format(imports="\n".join(imports))
    target = tmp_path / "user.py"
    target.write_text(code)
    errors = {i + 1 for i, line in enumerate(code.splitlines()) if line.endswith("# error")}
    stdout, stderr, _ = api.run(
        [
            "--strict",
            "--no-error-summary",
            "--hide-error-context",
            "--disable-error-code=unused-ignore",
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            str(target),
        ]
    )
    failed: set[int] = set()
    revealed: list[str] = []
    for line in stdout.splitlines():
        m = re.match(r".*user\.py:(\d+): (\w+): (.*)$", line)
        if m and m.group(2) == "error":
            failed.add(int(m.group(1)))
        elif m and m.group(3).startswith("Revealed type is"):
            revealed.append(m.group(3).split('"')[1])
    assert failed == errors, stdout + stderr
    # lazily resolved names have their real types, not Any: the classes' constructors
    assert [r.rpartition(" -> ")[2].rpartition(".")[2] for r in revealed] == ["Client", "Tool"]
