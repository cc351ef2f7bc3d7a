"""Issue 28 (F12): a server's strings must not act on the user's terminal. ``mcpbind ls``,
``call``, ``read`` and ``prompt`` printed names, descriptions, results, log messages, errors
and the server's stderr as they came, so a server could clear the screen, retitle the window,
plant a hidden link, write the clipboard (OSC 52) or repaint a line with CR/BS. Every line
now goes through one helper (mcpbind.cli.output) that shows control characters visibly
(``^[``, ``\\u009b``); ``--json`` stays the exact wire form."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from click.testing import Result
from support.hostile_terminal_server import EVIL, FORBIDDEN, PAYLOADS, SHOWN
from support.live_server import LiveServer, answer_lifespan

from mcpbind.cli.output import visible

from .conftest import PYTHON, run

SERVER = f"{PYTHON} tests/support/hostile_terminal_server.py"


def _check(result: Result) -> str:
    """Everything printed (stdout and stderr): no payload acts, each is shown."""
    printed = result.stdout_bytes + result.stderr_bytes
    for payload in FORBIDDEN:
        assert payload not in printed
    assert b"\x1b" not in printed and b"\x07" not in printed and b"\x08" not in printed
    text = printed.decode()
    assert "\x9b" not in text and "\u202e" not in text
    assert SHOWN in text
    return text


def test_ls_shows_a_servers_control_characters() -> None:
    """Server name and version, tool description, resource name, prompt description: all
    listed, none acting on the terminal."""
    result = run("ls", SERVER)
    assert result.exit_code == 0, result.output
    text = _check(result)
    assert "Harmless." + SHOWN.partition("<link>")[0] in text  # (ls shortens descriptions)
    assert text.count(SHOWN) >= 2  # name and version; descriptions end at the first CR


def test_ls_json_stays_exact() -> None:
    """``--json`` is the wire form for scripts: the strings are the server's, unchanged (JSON
    escapes the controls itself)."""
    result = run("ls", SERVER, "--json")
    assert result.exit_code == 0, result.output
    catalog = json.loads(result.stdout)
    assert catalog["serverInfo"]["name"] == "evil" + EVIL
    assert {tool["description"] for tool in catalog["tools"]} >= {"Harmless." + EVIL}


def test_call_shows_result_log_and_stderr_visibly() -> None:
    """A result (its CRLF stays a line break), a log message with its logger, and the
    server's stderr (``-v``)."""
    result = run("call", SERVER, "clip", "--args", '{"text": "x"}', "-v")
    assert result.exit_code == 0, result.output
    text = _check(result)
    assert f"result{SHOWN}\nnext line\n" in result.stdout
    assert f"[server warning lg{SHOWN}] log{SHOWN}" in text
    assert f"stderr{SHOWN}" in text


@pytest.mark.parametrize(("tool", "expected"), [("boom", "protocol error"), ("oops", "tool error")])
def test_errors_show_control_characters_visibly(tool: str, expected: str) -> None:
    """A JSON-RPC error's message and a tool error's text, on the error line."""
    result = run("call", SERVER, tool)
    assert result.exit_code != 0
    assert f"{expected}{SHOWN}" in _check(result)


def test_debug_traceback_shows_control_characters_visibly() -> None:
    """``--debug`` prints the traceback of the failure, whose messages quote the server."""
    result = run("--debug", "call", SERVER, "boom")
    assert result.exit_code != 0
    assert "Traceback" in _check(result)


def test_read_and_prompt_show_control_characters_visibly() -> None:
    for args in (("read", SERVER, "mem://evil"), ("prompt", SERVER, "greet")):
        result = run(*args)
        assert result.exit_code == 0, result.output
        _check(result)


def test_visible_covers_c0_del_c1_and_bidi() -> None:
    """The mapping itself: caret notation for C0 and DEL, ``\\uXXXX`` for C1 and the bidi
    controls; newline and tab kept (newline not on one line); CRLF is a line break."""
    for raw, shown in PAYLOADS.values():
        assert visible(raw) == shown
    assert visible("a\tb\nc\r\nd\x00\x7f") == "a\tb\nc\nd^@^?"
    assert visible("a\nb\r\n", one_line=True) == "a^Jb^M^J"
    assert visible("\u2066\u2069\u202a") == "\\u2066\\u2069\\u202a"
    assert visible("plain: é, 日本, emoji 🙂") == "plain: é, 日本, emoji 🙂"


async def rejecting(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A 2025-11-25 HTTP server that answers requests and rejects every notification with
    HTTP 400 and a body of :data:`EVIL` (the client logs a warning quoting it)."""
    if scope["type"] == "lifespan":
        await answer_lifespan(receive, send)
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    msg = json.loads(body)
    if "id" not in msg:
        headers = [(b"content-type", b"text/plain")]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        await send({"type": "http.response.body", "body": ("rejected" + EVIL).encode()})
        return
    if msg["method"] == "initialize":
        info = {"name": "rejecting", "version": "1"}
        result: dict[str, Any] = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}
        result["serverInfo"] = info
    elif msg["method"] == "tools/call":
        result = {"content": [{"type": "text", "text": "done"}]}
    elif msg["method"] == "tools/list":
        result = {"tools": [{"name": "x", "inputSchema": {"type": "object"}}]}
    else:  # server/discover: not a 2026-07-28 server
        result = {}
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
    if not result:
        reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}
    out = json.dumps(reply).encode()
    headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s-1")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": out})


def test_library_warnings_quoting_a_server_are_shown_visibly() -> None:
    """The client's own warnings may quote a server (here the body of an HTTP 400 to a
    notification); the real CLI process prints them like every other line."""
    live = LiveServer(rejecting).start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "mcpbind.cli", "call", live.url, "x"],
            capture_output=True,
            timeout=60,
            check=False,
        )
    finally:
        live.stop()
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"done\n"
    for payload in FORBIDDEN:
        assert payload not in done.stderr
    assert f"rejected{SHOWN}".encode() in done.stderr
