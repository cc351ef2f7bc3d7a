"""Issue 28 (F12): the Host shell, in a pseudo-terminal, with a server whose every string
carries terminal control sequences (tests/support/hostile_terminal_server.py). Before, the shell
printed them raw: the server could clear the screen, retitle the window, write the clipboard
(OSC 52) or repaint the approval question with CR/BS. Now server name and version, tool
descriptions, resources, prompts, the progress line, results, errors and the approval
question's context are shown with their control characters visible (``^[``, ``\\u009b``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.hostile_terminal_server import FORBIDDEN, PAYLOADS

from .pty_helpers import HostTerminal, read_until, screen_text

SERVER = Path(__file__).resolve().parents[1] / "support" / "hostile_terminal_server.py"


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[HostTerminal]:
    config = tmp_path / "servers.json"
    servers = {"e": {"command": sys.executable, "args": [str(SERVER)]}}
    config.write_text(json.dumps({"mcpServers": servers}))
    term = HostTerminal(config, tmp_path / "history")
    try:
        yield term
    finally:
        term.close()


def test_the_shell_shows_a_servers_control_characters(shell: HostTerminal) -> None:
    raw = bytearray()

    def step(keys: bytes, needle: bytes) -> None:
        """Type ``keys``, read the terminal until ``needle`` is on it; keep every byte."""
        shell.send(keys)
        chunk = bytearray()
        read_until(shell.fd, needle, chunk)
        raw.extend(chunk)

    step(b"", b"mcpbind>")
    step(b"servers\r", b", pid ")
    step(b"tools\r", b"3 tools:")
    step(b"resources\r", b"mem://evil")
    step(b"prompts\r", b"e__greet(")
    step(b'call e__clip {"text": "x"}\r', b"Allow this call?")
    step(b"y\r", b"next line")
    step(b"call e__boom\r", b"Allow this call?")
    step(b"y\r", b"error [-32000]")
    step(b"call e__oops\r", b"Allow this call?")
    step(b"y\r", b"tool error")
    step(b"read mem://evil\r", b"contents")
    step(b"prompt e__greet\r", b"hello")
    assert shell.quit() == 0

    for payload in FORBIDDEN:
        assert payload not in raw, payload
    assert b"\xc2\x9b" not in raw and "\u202e".encode() not in raw
    screen = screen_text(raw).decode()
    for name in ("clear", "title", "clip", "csi"):
        assert f"{PAYLOADS[name][1]}<{name}>" in screen, name
    for where in ("evil", "6.6", "progress", "result", "protocol error", "tool error"):
        assert f"{where}{PAYLOADS['clear'][1]}<clear>" in screen, where
    assert "contents" + PAYLOADS["clear"][1] in screen and "hello" + PAYLOADS["clear"][1] in screen
