"""Ctrl-C and Ctrl-D in the interactive Host shell (issue 31 item 5), in a pseudo-terminal:
Ctrl-C cancels the running call (the server gets ``notifications/cancelled``,
basic/utilities/cancellation.mdx) or clears the line, and the shell goes on; Ctrl-D at an
approval prompt denies that call only; Ctrl-D at the idle prompt leaves, as in a shell."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cancel_race import call_cancelled_at_once

from .helpers import SERVERS
from .pty_helpers import HostTerminal

PROMPT = b"mcpbind>"
CTRL_C = b"\x03"
CTRL_D = b"\x04"


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[HostTerminal]:
    config = tmp_path / "servers.json"
    waiter = {"command": sys.executable, "args": [SERVERS, "waiter"]}
    config.write_text(json.dumps({"mcpServers": {"w": waiter}}))
    term = HostTerminal(config, tmp_path / "history")
    try:
        yield term
    finally:
        term.close()


def _appears(path: Path, timeout: float = 30.0) -> None:
    """Bounded polling for a file the server writes."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_ctrl_c_cancels_the_running_call_on_the_server(shell: HostTerminal, tmp_path: Path) -> None:
    marker = tmp_path / "call"
    shell.expect(PROMPT)
    shell.send(b'call w__wait {"marker": "' + str(marker).encode() + b'"}\r')
    _appears(Path(f"{marker}.started"))
    shell.send(CTRL_C)  # no prompt is up: the terminal sends SIGINT
    shell.expect(b"cancelled (Ctrl-C)")
    shell.expect(PROMPT)
    _appears(Path(f"{marker}.cancelled"))  # the server's handler was stopped
    shell.send(b"servers\r")
    shell.expect(b"server w: running")
    assert shell.quit() == 0


def test_the_waiter_leaves_its_cancelled_marker_when_the_cancel_lands_on_its_first_await(
    tmp_path: Path,
) -> None:
    """The test above cancels as soon as ``MARKER.started`` exists; a worker thread writes it,
    so under load the cancel reached the handler before it resumed from that write, and the
    handler, stopped there, left no ``MARKER.cancelled`` (the wait above then ran 30 s in
    vain). basic/utilities/cancellation.mdx §Timing Considerations: a cancel can land at any
    point; here it lands on the handler's first await, every time."""
    marker = tmp_path / "call"
    call_cancelled_at_once([sys.executable, SERVERS, "waiter"], "wait", {"marker": str(marker)})
    assert Path(f"{marker}.cancelled").exists(), "stopped without leaving MARKER.cancelled"


def test_ctrl_c_at_the_prompt_clears_the_line(shell: HostTerminal) -> None:
    shell.expect(PROMPT)
    shell.send(b"bogus words")
    shell.expect(b"bogus words")
    shell.send(CTRL_C)
    shell.expect(PROMPT)
    shell.send(b"servers\r")  # not "bogus wordsservers"
    shell.expect(b"server w: running")
    assert shell.quit() == 0


def test_ctrl_c_and_ctrl_d_at_an_approval_prompt_deny_and_the_shell_goes_on(
    shell: HostTerminal,
) -> None:
    shell.expect(PROMPT)
    for key in (CTRL_C, CTRL_D):
        shell.send(b'call w__change {"value": "v"}\r')
        shell.expect(b"Allow this call? [y/N]")
        shell.send(key)
        after = shell.expect(PROMPT)
        assert b"changed v" not in after
        assert b"denied" in after or b"cancelled" in after, after
    shell.send(b'call w__change {"value": "yes"}\r')
    shell.expect(b"Allow this call? [y/N]")
    shell.send(b"y\r")
    shell.expect(b"changed yes")
    shell.expect(PROMPT)
    shell.send(CTRL_D)  # at the idle prompt: leave, as a shell does
    assert shell.wait() == 0


def test_ctrl_c_during_a_call_that_runs_as_a_task_cancels_the_task(tmp_path: Path) -> None:
    """The sibling for a tool that requires a task: Ctrl-C stops waiting and cancels the
    task on the server (``tasks/cancel``), which then reports it cancelled."""
    config = tmp_path / "servers.json"
    jobs = {"command": sys.executable, "args": [SERVERS, "jobs"]}
    config.write_text(json.dumps({"mcpServers": {"jobs": jobs}}))
    shell = HostTerminal(config, tmp_path / "history")
    try:
        shell.expect(PROMPT)
        shell.send(b'call jobs__reindex {"path": "/srv"}\r')
        shell.expect(b"indexing /srv")
        shell.send(CTRL_C)
        shell.expect(b"cancelled (Ctrl-C)")
        shell.expect(PROMPT)
        shell.send(b"tasks\r")
        shell.expect(b"1 task (0 running):")
        listing = shell.expect(PROMPT)
        assert b"jobs__reindex  cancelled" in listing, listing
        assert shell.quit() == 0
    finally:
        shell.close()


def test_ctrl_c_in_run_mode_cancels_the_running_command_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    """``--run``/``-r`` runs the shell's commands as if typed, so Ctrl-C (SIGINT, here sent to
    a real process without a terminal, as a script's caller would) does what it does in the
    shell: the running call is cancelled on the server (``notifications/cancelled``,
    basic/utilities/cancellation.mdx §Cancellation Flow), marked, and counted as a failed
    command; the next command runs and the exit status is 1, not 130 (issue 31 item 5)."""
    marker = tmp_path / "call"
    config = tmp_path / "servers.json"
    waiter = {"command": sys.executable, "args": [SERVERS, "waiter"]}
    config.write_text(json.dumps({"mcpServers": {"w": waiter}}))
    call = 'call w__wait {"marker": "' + str(marker) + '"}'
    argv = [sys.executable, "-m", "mcpbind.cli", "host", "-c", str(config)]
    process = subprocess.Popen(
        [*argv, "-r", call, "-r", "servers"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        _appears(Path(f"{marker}.started"))
        os.kill(process.pid, signal.SIGINT)
        out, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    text = out.decode()
    assert process.returncode == 1, text
    cancelled = text.index("cancelled (Ctrl-C)")
    assert text.index("mcpbind> servers") > cancelled
    assert "server w: running" in text[cancelled:], text
    _appears(Path(f"{marker}.cancelled"))  # the server's handler was stopped


def test_ctrl_c_in_run_mode_cancels_a_running_task_and_the_run_goes_on(tmp_path: Path) -> None:
    """The sibling for a tool that requires a task: SIGINT stops waiting and cancels the task
    on the server (``tasks/cancel``, 2025-11-25 tasks.mdx §Cancelling Tasks); the next
    command lists it cancelled."""
    config = tmp_path / "servers.json"
    jobs = {"command": sys.executable, "args": [SERVERS, "jobs"]}
    config.write_text(json.dumps({"mcpServers": {"jobs": jobs}}))
    argv = [sys.executable, "-m", "mcpbind.cli", "host", "-c", str(config)]
    process = subprocess.Popen(
        [*argv, "-r", 'call jobs__reindex {"path": "/srv"}', "-r", "tasks"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdout is not None
    seen = b""
    try:
        deadline = time.monotonic() + 30
        while b"indexing /srv" not in seen:  # the task is running on the server
            left = deadline - time.monotonic()
            assert left > 0, seen
            if select.select([process.stdout], [], [], left)[0]:
                chunk = os.read(process.stdout.fileno(), 4096)
                assert chunk, seen
                seen += chunk
        os.kill(process.pid, signal.SIGINT)
        out, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    text = (seen + out).decode()
    assert process.returncode == 1, text
    listing = text[text.index("cancelled (Ctrl-C)") :]
    assert "mcpbind> tasks" in listing and "jobs__reindex  cancelled" in listing, text
