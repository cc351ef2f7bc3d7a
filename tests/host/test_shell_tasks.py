"""Tasks in the interactive Host shell, in a pseudo-terminal (2025-11-25 basic/utilities/
tasks.mdx; the 2026-07-28 tasks extension): a tool started as a task is listed with its
status and status message, cancelled by id (Tab completes it), and seen cancelled; a tool
whose ``execution.taskSupport`` is ``required`` runs as a task from ``call``, its status
shown until it ends (§Tool-Level Negotiation, §Getting Tasks, §Cancelling Tasks)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import SERVERS
from .pty_helpers import HostTerminal

TAB = b"\t"
PROMPT = b"mcpbind>"


@pytest.fixture(params=["handshake", "stateless"])
def shell(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[HostTerminal]:
    """The host with the ``jobs`` server, pinned to each era in turn."""
    config = tmp_path / "servers.json"
    jobs = {"command": sys.executable, "args": [SERVERS, "jobs"], "protocolVersion": request.param}
    servers = {"jobs": jobs}
    config.write_text(json.dumps({"mcpServers": servers}))
    term = HostTerminal(config, tmp_path / "history")
    term.era = request.param  # type: ignore[attr-defined]
    try:
        yield term
    finally:
        term.close()


def _listing(shell: HostTerminal, wanted: bytes) -> bytes:
    """``tasks`` until ``wanted`` shows (a task sets its status message as it starts). The
    rows are what comes between the header and the next prompt."""
    for _ in range(50):
        shell.send(b"tasks\r")
        shell.expect(b"running):")
        listing = shell.expect(PROMPT)
        if wanted in listing:
            return listing
    raise AssertionError(f"{wanted!r} never listed; last:\n{listing.decode(errors='replace')}")


def test_start_list_cancel_a_task(shell: HostTerminal) -> None:
    shell.expect(PROMPT)
    shell.send(b'start jobs__reindex {"path": "/srv"}\r')
    started = shell.expect(b"(jobs, jobs__reindex); see tasks")
    match = re.search(rb"task (\S+) started", started)
    assert match is not None
    task_id = match.group(1)

    listing = _listing(shell, b"indexing /srv")
    assert task_id + b"  jobs  jobs__reindex  working: indexing /srv" in listing

    shell.send(b"cancel ")
    shell.expect(task_id)  # the menu offers the running task's id
    shell.send(TAB + b"\r")  # runs only if the id was completed
    shell.expect(b"task " + task_id + b" cancelled")

    listing = _listing(shell, b"cancelled")
    assert task_id + b"  jobs  jobs__reindex  cancelled" in listing
    shell.send(b"cancel " + task_id + b"\r")  # no longer running: refused at once
    shell.expect(b"is already cancelled")
    assert shell.quit() == 0


def test_a_tool_that_requires_a_task_runs_as_one_from_call(shell: HostTerminal) -> None:
    shell.expect(PROMPT)
    shell.send(b'call jobs__build {"steps": 3}\r')
    shown = shell.expect(b"built in 3 steps")
    assert re.search(rb"task \S+ completed", shown), shown
    shell.send(b"tasks\r")
    shell.expect(b"1 task (0 running):")
    assert b"jobs__build  completed" in shell.expect(PROMPT)
    assert shell.quit() == 0


def test_start_of_a_plain_tool(shell: HostTerminal) -> None:
    """§Tool-Level Negotiation: a tool without task support is not run as a task — refused
    with -32601 on 2025-11-25; on 2026-07-28 the server decides and answers at once."""
    shell.expect(PROMPT)
    shell.send(b"start jobs__hello\r")
    if shell.era == "handshake":  # type: ignore[attr-defined]
        shell.expect(b"error [-32601]: Tool hello does not support task-augmented calls")
    else:
        shell.expect(b"jobs__hello ran without a task:")
        shell.expect(b"hello")
    assert shell.quit() == 0
