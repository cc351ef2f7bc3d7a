"""mypy --strict types what a handler reads of the server's lifespan and of its request
(tests/typing/reveal_lifespan.py): ``ctx.lifespan_state_as(Pool)`` is a ``Pool``."""

from __future__ import annotations

import re
from pathlib import Path

from mypy import api

HERE = Path(__file__).resolve().parent
TARGET = HERE / "reveal_lifespan.py"


def test_the_lifespan_state_is_typed_in_handlers() -> None:
    lines = TARGET.read_text().splitlines()
    expected = {
        i + 1: m.group(1).strip()
        for i, line in enumerate(lines)
        if (m := re.search(r"# expect: (.+)$", line))
    }
    stdout, stderr, _ = api.run(
        ["--strict", "--no-error-summary", "--no-incremental", "--cache-dir=/dev/null", str(TARGET)]
    )
    revealed = {
        int(m.group(1)): m.group(2)
        for line in stdout.splitlines()
        if (m := re.match(r'.*reveal_lifespan\.py:(\d+): note: Revealed type is "(.*)"$', line))
    }
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert not errors, stdout + stderr
    assert revealed == expected, stdout + stderr
