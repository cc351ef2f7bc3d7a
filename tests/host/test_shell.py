"""The interactive Host shell (issue 14.4) in a pseudo-terminal: line editing and a history
kept across sessions, Tab completion of commands, tool names and form choices, a progress
display for long calls (basic/utilities/progress.mdx), a start-up summary instead of the
whole catalog, and elicitation forms that follow the requested schema (client/elicitation.mdx
§Requested Schema: titles, defaults, enums, numbers, booleans, arrays)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from mcpbind.cli.host_form import OMIT, fields_of, parse_answer
from mcpbind.cli.host_terminal import Terminal

from .helpers import SERVERS
from .pty_helpers import HostTerminal
from .servers import PROFILE

PROFILE_SCHEMA = msgspec.to_builtins(PROFILE)

UP = b"\x1b[A"
TAB = b"\t"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "servers.json"
    servers = {
        "s": {"command": sys.executable, "args": [SERVERS, "normal"]},
        "f": {"command": sys.executable, "args": [SERVERS, "forms"]},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


@pytest.fixture
def shell(config: Path) -> Iterator[HostTerminal]:
    term = HostTerminal(config, config.with_name("history"))
    try:
        yield term
    finally:
        term.close()


def test_summary_history_and_completion(config: Path, shell: HostTerminal) -> None:
    """The start shows a summary, not the catalog; Tab completes a command and a tool name;
    Up recalls the last command, in this session and the next."""
    start = shell.expect(b"mcpbind>")
    assert b"2 of 2 servers running (f, s)" in start
    assert b"12 tools, 1 resource, 1 resource template, 1 prompt " in start
    assert b"s__echo" not in start  # no catalog dump

    shell.send(b"cal")
    shell.expect(b"call")  # the completion menu, shown while typing
    shell.send(TAB + b" s__ec")
    shell.expect(b"s__echo")  # the menu offers the tool
    shell.send(TAB + b' {"text": "tab"}\r')  # runs only if both words were completed
    shell.expect(b"normal: tab")
    shell.send(UP + b"\r")  # the same command again, from the history
    shell.expect(b"normal: tab")
    assert shell.quit() == 0
    history = config.with_name("history").read_text()
    assert '+call s__echo {"text": "tab"}' in history  # kept once: a repeat is not added

    again = HostTerminal(config, config.with_name("history"))
    try:
        again.expect(b"mcpbind>")
        again.send(UP + UP + b"\r")  # the previous session's call (its last entry: quit)
        again.expect(b"normal: tab")
        assert again.quit() == 0
    finally:
        again.close()


def test_a_form_follows_the_requested_schema(shell: HostTerminal) -> None:
    """Every field kind of elicitation.mdx, answered at the keyboard: a title and a length
    rule (a short answer is explained and asked again), a titled choice taking its default, an
    integer with a range, a number, a boolean default, a multi-select by numbers, a legacy
    enum completed with Tab, and an optional field left out."""
    shell.expect(b"mcpbind>")
    shell.send(b"call f__profile\r")
    assert b"asks you: Tell us about you" in shell.expect(b"Answer this form? [Y/n]")
    shell.send(b"\r")
    shell.expect(b"Your name")
    shell.send(b"B\r")
    shell.expect(b"at least 2 characters; try again")
    shell.send(b"Bo\r")
    shell.expect(b"[1) Red  2) Green] (default: Green)")
    shell.send(b"\r")
    shell.expect(b"age (in years) (integer, 0..150)")
    shell.send(b"abc\r")
    shell.expect(b"'abc' is not a whole number; try again")
    shell.send(b"200\r")
    shell.expect(b"must be at most 150; try again")
    shell.send(b"42\r")
    shell.expect(b"ratio (number) (default: 0.5)")
    shell.send(b"0.25\r")
    shell.expect(b"Subscribe? [Y/n]")
    shell.send(b"\r")
    shell.expect(b"tags [1) a  2) b  3) c] (several: 1,3)")
    shell.send(b"1,3\r")
    shell.expect(b"size [1) Small  2) Large]")
    shell.send(b"La")
    shell.expect(b"Large")  # the menu offers the choice
    shell.send(TAB + b"\r")
    shell.expect(b"note (optional)")
    shell.send(b"\r")
    answered = {"age": 42, "colour": "g", "name": "Bo", "ratio": 0.25, "size": "L"}
    answered |= {"subscribe": True, "tags": ["a", "c"]}
    shell.expect(b"accept " + json.dumps(answered, sort_keys=True).encode())
    assert shell.quit() == 0


def test_a_long_call_shows_progress(shell: HostTerminal) -> None:
    """progress.mdx: the call's progress notifications drive a progress bar (the CLI's)."""
    shell.expect(b"mcpbind>")
    shell.send(b'call f__count {"steps": 3}\r')
    before = shell.expect(b"counted 3")
    assert b"f__count [####################----------] 2/3  67% step 2" in before
    assert b"3/3 100% step 3" in before
    assert shell.quit() == 0


def test_form_fields_from_the_schema() -> None:
    """elicitation.mdx §Requested Schema, without a terminal: what each field accepts."""
    fields = {f.key: f for f in fields_of(PROFILE_SCHEMA)}
    assert [f.key for f in fields_of(PROFILE_SCHEMA)] == list(PROFILE_SCHEMA["properties"])
    assert parse_answer(fields["name"], "") == (OMIT, "an answer is required")
    assert parse_answer(fields["colour"], "red") == ("r", None)
    assert parse_answer(fields["colour"], "2") == ("g", None)
    assert parse_answer(fields["colour"], "blue")[1] is not None
    assert parse_answer(fields["age"], "1.5") == (OMIT, "'1.5' is not a whole number")
    assert parse_answer(fields["ratio"], "") == (0.5, None)
    assert parse_answer(fields["ratio"], "2") == (2, None)
    assert parse_answer(fields["subscribe"], "no") == (False, None)
    assert parse_answer(fields["tags"], "b, c") == (["b", "c"], None)
    assert parse_answer(fields["size"], "small") == ("S", None)
    assert parse_answer(fields["note"], "") == (OMIT, None)
    assert fields["size"].words() == ["Small", "Large"]
    dated = fields_of({"properties": {"d": {"type": "string", "format": "date"}}})[0]
    assert parse_answer(dated, "2026-07-28") == ("2026-07-28", None)
    assert parse_answer(dated, "tomorrow")[1] == "not a date (e.g. 2026-07-28)"
    mail = fields_of({"properties": {"m": {"type": "string", "format": "email"}}})[0]
    assert parse_answer(mail, "a@b.example") == ("a@b.example", None)
    assert parse_answer(mail, "nope")[1] == "not an email address"


def test_without_prompt_toolkit_lines_are_read_plainly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """prompt_toolkit is an extra (``mcpbind[shell]``): without it the shell still works,
    reading plain lines (with readline's editing where Python has it)."""
    history = tmp_path / "history"
    for name in [m for m in sys.modules if m.startswith(("prompt_toolkit", "mcpbind.cli.host_e"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "prompt_toolkit", None)
    assert not Terminal(None, editor=True).editing
    monkeypatch.undo()
    monkeypatch.setenv("MCPBIND_HOST_HISTORY", str(history))
    assert Terminal(None, editor=True).editing
    assert history.exists()
    assert not Terminal(None, editor=False).editing
