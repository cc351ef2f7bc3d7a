"""What both interop servers offer, the protocol versions under test, and process bookkeeping.

``mcpbind_server.py`` and ``official_server.py`` serve the same surface; the constants here
are what either client must see. Every spawned server gets a unique tag as an extra
(ignored) argument, so a ``/proc`` scan can tell whether that very process is still alive
after its transport has shut it down (2025-11-25 basic/lifecycle.mdx §Shutdown).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASK_APP = str(HERE.parents[1] / "tests" / "tasks" / "task_app.py")
MCPBIND_SERVER = str(HERE / "mcpbind_server.py")
OFFICIAL_SERVER = str(HERE / "official_server.py")

LATEST = "2025-11-25"
UNKNOWN_VERSION = "2099-01-01"
"""A version neither SDK knows: the server must counter-offer one it supports."""


@dataclass(frozen=True)
class Negotiation:
    """The version a client offers in ``initialize`` and the one the server must answer."""

    offer: str
    expected: str

    @property
    def id(self) -> str:
        return self.offer if self.offer == self.expected else f"{self.offer}-to-{self.expected}"


LATEST_OFFER = Negotiation(LATEST, LATEST)
OLDER_OFFERS = (Negotiation("2025-03-26", "2025-03-26"), Negotiation("2024-11-05", "2024-11-05"))
"""Supported older versions: the server MUST answer with the same version."""
UNKNOWN_OFFER = Negotiation(UNKNOWN_VERSION, LATEST)
"""Unsupported: the server MUST answer with another version, SHOULD be its latest."""

TOOLS = {"add", "echo", "stats", "fail"}
GREETING_URI = "mem://greeting"
GREETING_TEXT = "Hello from interop!"
USER_TEMPLATE = "mem://users/{user_id}"
USER_URI = "mem://users/42"
USER_TEXT = "user 42"
MISSING_URI = "mem://missing"


def has_structured_content(version: str) -> bool:
    """``outputSchema`` and ``structuredContent`` exist from 2025-06-18 on (server/tools.mdx)."""
    return version >= "2025-06-18"


def new_tag() -> str:
    return f"interop-{uuid.uuid4().hex}"


def running_with(tag: str) -> list[int]:
    """Live processes whose command line contains ``tag`` (zombies have no command line)."""
    needle = tag.encode()
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
        except OSError:  # the process exited while we looked
            continue
        if needle in argv:
            pids.append(int(entry.name))
    return pids


def assert_stopped(tag: str) -> None:
    leftovers = running_with(tag)
    assert not leftovers, f"server processes still running after shutdown: {leftovers}"


def run_node_with_task_app(script: Path) -> dict[str, object]:
    """``node SCRIPT PYTHON TASK_APP`` (a TypeScript SDK peer driving tests/tasks/task_app.py
    over stdio): the JSON object it prints last."""
    done = subprocess.run(
        ["node", str(script), sys.executable, TASK_APP],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return out
