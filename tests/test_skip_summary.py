"""The suite's last line (support/skips.py): what was skipped, and for a missing prerequisite the
one command that installs it."""

from __future__ import annotations

import textwrap

import pytest
from support.skips import SETUP_ALL, skip_summary

pytest_plugins = ["pytester"]


def test_nothing_skipped() -> None:
    assert skip_summary([]) == "skipped: nothing"


def test_missing_prerequisites_name_the_install_command() -> None:
    line = skip_summary(
        [
            "redis-server is not installed (apt-get install redis-server); Redis store not tested",
            "load generator not installed: run `npm ci --prefix bench/http/loadgen`",
            "load generator not installed: run `npm ci --prefix bench/http/loadgen`",
            "schemas not synced (make schema)",
        ]
    )
    assert line.startswith("skipped 4: 4 for want of a prerequisite (2 x load generator")
    assert "1 x redis-server is not installed" in line and "1 x schemas not synced" in line
    assert line.endswith(f"`{SETUP_ALL}` installs it")
    assert "\n" not in line


def test_inapplicable_skips_are_told_apart() -> None:
    line = skip_summary(
        ["3.12 and later: handlers start as eager tasks", "no POSIX shell", "node is not installed"]
    )
    assert line == (
        "skipped 3: 1 for want of a prerequisite (1 x node is not installed): "
        f"`{SETUP_ALL}` installs it; and 2 not applicable here "
        "(1 x 3.12 and later: handlers start as eager tasks; 1 x no POSIX shell)"
    )


def test_the_line_ends_the_run(pytester: pytest.Pytester) -> None:
    """Module-level and in-test skips both count, and the line comes after pytest's summary."""
    pytester.makeconftest("from support.skips import pytest_terminal_summary\n")
    pytester.makepyfile(
        test_a=textwrap.dedent(
            """
            import pytest
            pytest.importorskip("no_such_module_here", reason="nothing is not installed")
            def test_never(): pass
            """
        ),
        test_b=textwrap.dedent(
            """
            import pytest
            def test_ok(): pass
            def test_other(): pytest.skip("not on this platform")
            """
        ),
    )
    result = pytester.runpytest("-ra", "-p", "no:cacheprovider")
    lines = result.outlines
    ours = next(i for i, text in enumerate(lines) if text.startswith("skipped 2:"))
    assert ours > next(i for i, text in enumerate(lines) if "short test summary" in text)
    assert lines[ours] == (
        "skipped 2: 1 for want of a prerequisite (1 x nothing is not installed): "
        f"`{SETUP_ALL}` installs it; and 1 not applicable here (1 x not on this platform)"
    )
    result.assert_outcomes(passed=1, skipped=2)
