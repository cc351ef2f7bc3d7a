"""The suite's last line: what it skipped, and the one command that installs what is missing
(the hook ``pytest_terminal_summary`` below, imported by tests/conftest.py)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

import pytest

__all__ = ["SETUP_ALL", "pytest_terminal_summary", "skip_reason", "skip_summary"]

# The one command that installs everything the suite needs (the Makefile's setup-all target).
SETUP_ALL = "make setup-all"
# A skip whose reason names an install step is a missing prerequisite; any other skip is a test
# that does not apply here (another Python, another platform).
_MISSING = re.compile(r"not installed|not synced|npm ci|pip install|apt-get|\bmake \S")


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The reason a skipped test (or module) gave, without pytest's ``Skipped:`` prefix."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def _listing(counts: Counter[str]) -> str:
    return "; ".join(f"{n} x {reason}" for reason, n in counts.most_common())


def skip_summary(reasons: list[str]) -> str:
    """One line: how many tests were skipped, those missing a prerequisite first (with the
    command that installs it), then those that do not apply here."""
    if not reasons:
        return "skipped: nothing"
    missing = Counter(r for r in reasons if _MISSING.search(r))
    other = Counter(r for r in reasons if not _MISSING.search(r))
    parts = []
    if missing:
        parts.append(
            f"{missing.total()} for want of a prerequisite ({_listing(missing)}): "
            f"`{SETUP_ALL}` installs it"
        )
    if other:
        parts.append(f"{other.total()} not applicable here ({_listing(other)})")
    return f"skipped {len(reasons)}: " + "; and ".join(parts)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> Iterator[None]:
    """The line, after pytest's own summary (as the outermost wrapper), above the totals line."""
    try:
        return (yield)
    finally:
        skipped = terminalreporter.stats.get("skipped", [])
        terminalreporter.write_line(skip_summary([skip_reason(r) for r in skipped]))
