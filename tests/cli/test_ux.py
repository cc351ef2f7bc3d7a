"""What a user of the command line meets: server files instead of command lines, argument
types in ``ls``, results and log messages shown once, the client capabilities a server looks
for (elicitation with a terminal form, roots), ``--header``, and every failure as one line on
stderr with a documented exit code (a traceback only with ``--debug``)."""

from __future__ import annotations

import http.server
import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import click
import pytest
from support.live_server import HandlerServer

from mcpbind.cli import EXIT_CODES
from mcpbind.cli.client_handlers import file_uri
from mcpbind.cli.errors import EXIT_CONNECTION, EXIT_PROTOCOL, EXIT_USAGE
from mcpbind.cli.forms import convert_reply
from mcpbind.cli.serve_cmd import load_server

from .conftest import ROOT, run

UX = str(Path(__file__).resolve().parent / "ux_server.py")
CLI = [sys.executable, "-m", "mcpbind.cli"]
# Spawned servers see only a few inherited variables; this checkout's code must win in them.
PYTHONPATH = (
    ("--env", f"PYTHONPATH={os.environ['PYTHONPATH']}") if "PYTHONPATH" in os.environ else ()
)


def _cli(
    *args: str, cwd: Path = ROOT, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# ------------------------------------------------------------------------- server files
def test_ls_runs_a_py_file_with_this_interpreter_and_shows_argument_types() -> None:
    """server/tools.mdx §Listing Tools: a ``.py`` SERVER runs with sys.executable (no PATH
    lookup); each tool shows its arguments with their JSON Schema types."""
    result = run("ls", UX)
    assert result.exit_code == 0, result.output
    assert "  shout(text: string)  Upper-case the text." in result.stdout.splitlines()


def test_serve_takes_a_file_and_finds_its_server(tmp_path: Path) -> None:
    """``mcpbind serve FILE.py`` (as the official and FastMCP CLIs): the one Server at top
    level, ``create_server()`` when there is none, a clear error when ambiguous."""
    assert load_server(UX).name == "ux"
    assert load_server(f"{UX}:server").name == "ux"
    assert load_server(str(ROOT / "examples" / "files_server.py")).name == "mcpbind-files"
    two = tmp_path / "two.py"
    two.write_text("from mcpbind import Server\na = Server('a')\nb = Server('b')\n")
    with pytest.raises(click.BadParameter, match=r"several Servers \(a, b\): add :NAME"):
        load_server(str(two))
    assert load_server(f"{two}:b").name == "b"
    served = run("ls", f"{sys.executable} -m mcpbind.cli serve {UX}", *PYTHONPATH)
    assert served.exit_code == 0, served.output
    assert served.stdout.startswith("ux 1.0.0")


# ------------------------------------------------------------------------------ results
def test_a_str_tool_result_is_printed_once() -> None:
    """server/tools.mdx §Structured Content: the text block and the ``{"result": ...}``
    structured copy of a ``str`` output are one result, printed once."""
    result = run("call", UX, "shout", "--args", '{"text": "done"}')
    assert result.exit_code == 0, result.output
    assert result.stdout == "DONE\n"


# ----------------------------------------------------------------- what the server sends
def test_log_messages_warnings_always_every_level_with_verbose() -> None:
    """server/utilities/logging.mdx: the CLI sets the level (warning, or debug with -v) and
    shows notifications/message on stderr."""
    quiet = run("call", UX, "noisy")
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout == "logged\n"
    assert "[server warning store] disk almost full" in quiet.stderr
    assert "details for -v" not in quiet.stderr
    loud = run("call", UX, "noisy", "-v")
    assert "[server info] details for -v" in loud.stderr
    assert "[server warning store] disk almost full" in loud.stderr


def test_the_cli_declares_elicitation_and_roots_with_the_cwd() -> None:
    """client/roots.mdx, client/elicitation.mdx §Capabilities: servers that offer tools only
    to capable clients see both; the root is the current directory."""
    result = run("call", UX, "declared")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"elicitation=True roots=True root={Path.cwd().as_uri()}"


@pytest.mark.parametrize(
    "path", ["/", "/srv/mcp", "/home/a b/c%d#e?f", "/tmp/caf\u00e9/\u65e5\u672c", "/x/~._-y"]
)
def test_the_root_uri_is_the_one_pathlib_gives(path: str) -> None:
    """The CLI's root URI is built without pathlib (cold start): the same URI as
    ``Path.as_uri``, percent-encoded byte by byte (RFC 8089, RFC 3986 §2.1)."""
    assert file_uri(path) == Path(path).as_uri()


def test_elicitation_is_declined_without_a_terminal() -> None:
    """client/elicitation.mdx §User Interaction Model: no terminal, no question: declined."""
    result = _cli("call", UX, "ask", *PYTHONPATH)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "decline\n"
    assert "[server asks] Who? (declined: not a terminal)" in result.stderr


def test_elicitation_form_on_a_terminal_follows_the_schema() -> None:
    """client/elicitation.mdx §Form Mode: on a terminal each property is asked with its title
    and default; a required one is asked again when left empty; types are converted."""
    main, child = pty.openpty()
    process = subprocess.Popen(
        [*CLI, "call", UX, "ask", *PYTHONPATH],
        cwd=ROOT,
        stdin=child,
        stdout=subprocess.PIPE,
        stderr=child,
        text=True,
    )
    os.close(child)
    seen = ""
    try:
        for expected, reply in (("Your name", "\n"), ("required", "Ada\n"), ("Enter for 2", "\n")):
            seen = _read_until(main, expected, seen)
            os.write(main, reply.encode())
        out, _ = process.communicate(timeout=60)
    finally:
        process.kill()
        os.close(main)
    assert process.returncode == 0, seen
    assert out == "accept {'name': 'Ada', 'count': 2}\n"


def _read_until(fd: int, text: str, seen: str) -> str:
    deadline = time.monotonic() + 60
    while text not in seen:
        assert time.monotonic() < deadline, f"never saw {text!r} in {seen!r}"
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            seen += os.read(fd, 4096).decode(errors="replace")
    return seen.split(text, 1)[1]


def test_form_replies_follow_the_property_types() -> None:
    """client/elicitation.mdx §Supported Schema Types: numbers, booleans, enums (by value or
    number) and multi-select arrays."""
    assert convert_reply({"type": "integer"}, "7") == 7
    assert convert_reply({"type": "number"}, "1.5") == 1.5
    assert convert_reply({"type": "boolean"}, "y") is True
    assert convert_reply({"type": "string", "enum": ["red", "blue"]}, "2") == "blue"
    titled = {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]}
    assert convert_reply(titled, "s") == "s"
    many = {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
    assert convert_reply(many, "a, b") == ["a", "b"]
    with pytest.raises(ValueError, match="choose one of: red, blue"):
        convert_reply({"type": "string", "enum": ["red", "blue"]}, "green")
    with pytest.raises(ValueError):
        convert_reply({"type": "integer"}, "seven")


# -------------------------------------------------------------------------------- HTTP
class _HtmlNotFound(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.seen.append(self.headers.get("X-Team", ""))
        body = b"<!DOCTYPE html>\n<html><body><h1>404 Not Found</h1>\n<p>nginx</p></body></html>\n"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def html_server() -> Iterator[str]:
    server = HandlerServer(_HtmlNotFound).start()
    try:
        yield f"http://127.0.0.1:{server.port}/wrong"
    finally:
        server.stop()


def test_header_is_sent_and_a_wrong_path_is_one_line(html_server: str) -> None:
    """basic/transports.mdx §Streamable HTTP: ``--header`` goes on every request; an HTML
    error page becomes its status line, one line on stderr."""
    _HtmlNotFound.seen.clear()
    result = run("ls", html_server, "--header", "X-Team: blue", cwd=False)
    assert result.exit_code == EXIT_PROTOCOL
    assert result.stderr.splitlines() == ["Error: server error -32603: HTTP 404 Not Found"]
    assert "blue" in _HtmlNotFound.seen
    bad = run("ls", html_server, "--header", "no colon", cwd=False)
    assert bad.exit_code == EXIT_USAGE
    assert "expected 'Name: value'" in bad.stderr
    stdio = run("ls", UX, "--header", "X-Team: blue")
    assert stdio.exit_code == EXIT_USAGE
    assert stdio.stderr == "Error: --header applies to http(s) URLs only, not to stdio servers\n"


# ------------------------------------------------------------------------------ failures
def test_failures_are_one_line_with_a_documented_code_and_debug_adds_the_traceback() -> None:
    """Every failure: one line on stderr, a code listed in --help; --debug: the traceback."""
    missing = _cli("ls", "no-such-command-xyz")
    assert missing.returncode == EXIT_CONNECTION and missing.returncode in EXIT_CODES
    assert missing.stderr.splitlines() == [
        "Error: connection failed: [Errno 2] No such file or directory: 'no-such-command-xyz'"
    ]
    usage = _cli("ls")
    assert usage.returncode == EXIT_USAGE
    assert usage.stderr == "Error: Missing argument 'SERVER'. (try 'mcpbind ls --help')\n"
    debug = _cli("--debug", "call", UX, "nope", *PYTHONPATH)
    assert debug.returncode == EXIT_PROTOCOL
    assert debug.stderr.startswith("Traceback (most recent call last):")
    assert debug.stderr.splitlines()[-1] == "Error: server error -32602: Unknown tool: nope"
    assert "70" in _cli("--help").stdout  # the internal-error code is documented


def test_a_closed_pipe_exits_zero_quietly() -> None:
    """``mcpbind ls SERVER | head -1``: a reader that stops early is not a failure."""
    process = subprocess.Popen(
        [*CLI, "ls", UX],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.close()  # the reader is gone before the first line
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert err == b""


def test_generate_outside_a_checkout_is_one_line(tmp_path: Path) -> None:
    """``mcpbind generate check`` where there is no schema/ folder: one line that says why."""
    result = _cli("generate", "check", cwd=tmp_path)
    assert result.returncode != 0
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: the generator failed: ")
    assert "'schema/manifest.json'" in line and "mcpbind source checkout" in line


JOBS = f"{sys.executable} {ROOT / 'tests' / 'host' / 'servers.py'} jobs"


def test_ls_shows_the_task_support_a_tool_declares() -> None:
    """Issue 31 item 7: ``execution.taskSupport`` is shown for the tools that declare it."""
    result = run("ls", JOBS)
    assert result.exit_code == 0, result.output
    rows = {line.split("(")[0].strip(): line for line in result.stdout.splitlines()}
    assert rows["build"].endswith("[tasks: required]"), rows["build"]
    assert rows["reindex"].endswith("[tasks: required]"), rows["reindex"]
    assert "tasks:" not in rows["hello"], rows["hello"]


def test_counts_agree_with_their_nouns(tmp_path: Path) -> None:
    """Issue 31 item 7: "1 server", not "1 servers"; no "(-)" when none is running."""
    from click.testing import CliRunner

    from mcpbind.cli.host_cmd import host

    config = tmp_path / "servers.json"
    missing = str(tmp_path / "no-such-server")
    config.write_text(f'{{"mcpServers": {{"gone": {{"command": "{missing}"}}}}}}')
    result = CliRunner().invoke(
        host, ["-c", str(config), "-r", "servers", "--startup-timeout", "20"]
    )
    assert result.exit_code == EXIT_CONNECTION, result.output
    assert "0 of 1 server running" in result.stdout, result.stdout
    assert "(-)" not in result.stdout and "1 servers" not in result.stdout, result.stdout


NORMAL = f"{sys.executable} {ROOT / 'tests' / 'host' / 'servers.py'} normal"


@pytest.mark.parametrize(
    ("pinned", "shown"),
    [("2025-06-18", "2025-06-18"), ("handshake", "2025-11-25"), ("stateless", "2026-07-28")],
)
def test_protocol_version_pins_the_version(pinned: str, shown: str) -> None:
    """Issue 31 item 7: ``--protocol-version`` pins a version or an era on the client
    commands; ``auto`` (the default) negotiates."""
    result = run("ls", NORMAL, "--protocol-version", pinned)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].endswith(f"protocol {shown}"), result.stdout


def test_an_unknown_protocol_version_is_a_usage_error() -> None:
    result = run("call", NORMAL, "echo", "--protocol-version", "1999-01-01")
    assert result.exit_code == EXIT_USAGE, result.output
    assert "unknown protocol version '1999-01-01'" in result.stderr, result.stderr
    assert "2025-06-18" in result.stderr


def test_host_protocol_version_pins_servers_without_their_own(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from mcpbind.cli.host_cmd import host

    command = [sys.executable, str(ROOT / "tests" / "host" / "servers.py"), "normal"]
    own = {"command": command[0], "args": command[1:], "protocolVersion": "2025-03-26"}
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps({"mcpServers": {"a": {"command": command[0], "args": command[1:]}, "b": own}})
    )
    result = CliRunner().invoke(
        host, ["-c", str(config), "--protocol-version", "2025-06-18", "-r", "servers"]
    )
    assert result.exit_code == 0, result.output
    assert "server a: running" in result.stdout and "protocol 2025-06-18" in result.stdout
    assert "protocol 2025-03-26" in result.stdout, result.stdout
