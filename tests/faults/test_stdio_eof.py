"""Issue 28 (EOF): a stdio server answers every request it read before stdin closed, as
long as the handler finishes within the grace (``THREAD_GRACE``, 2 s): the client closed
its input, not its output (``printf '<init>\\n<initialized>\\n<call>\\n' | server``). A
handler that outlasts the grace is cancelled and the server exits."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support.live_server import stop_process
from support.pipes import LineReader

from mcpbind import LATEST_HANDSHAKE

SERVER = Path(__file__).with_name("eof_server.py")

REQUESTS: dict[int, tuple[str, dict[str, Any]]] = {
    1: ("tools/call", {"name": "def_tool", "arguments": {"x": 1}}),
    2: ("tools/call", {"name": "async_tool", "arguments": {"x": 2}}),
    3: ("tools/call", {"name": "task_tool", "arguments": {}, "task": {"ttl": 60000}}),
    4: ("resources/read", {"uri": "eof://def"}),
    5: ("resources/read", {"uri": "eof://async"}),
    6: ("prompts/get", {"name": "def_prompt"}),
    7: ("prompts/get", {"name": "async_prompt"}),
}


def _run(ids: list[int], extra: list[dict[str, Any]] | None = None) -> tuple[dict[Any, Any], float]:
    init = {
        "protocolVersion": LATEST_HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for rid in ids:
        method, params = REQUESTS[rid]
        messages.append({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    messages += extra or []
    data = b"".join(json.dumps(m).encode() + b"\n" for m in messages)
    process = subprocess.Popen(
        [sys.executable, str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(data)
        process.stdin.close()  # EOF right behind the requests
        started = time.monotonic()
        lines = LineReader(process.stdout.fileno(), timeout=30).rest()
        assert process.wait(timeout=30) == 0
        took = time.monotonic() - started
    finally:
        stop_process(process)
    answers = {a["id"]: a for a in map(json.loads, lines) if "id" in a}
    return answers, took


def test_every_handler_kind_is_answered_at_eof() -> None:
    answers, _ = _run(list(REQUESTS))
    assert sorted(answers) == [0, *REQUESTS], answers
    for rid in REQUESTS:
        assert "result" in answers[rid], answers[rid]
    assert answers[1]["result"]["structuredContent"] == {"result": 1}
    assert answers[2]["result"]["structuredContent"] == {"result": 2}
    assert answers[3]["result"]["task"]["taskId"]


def test_a_handler_past_the_grace_is_cut_off_and_the_server_exits() -> None:
    """The grace bounds the wait: ``forever`` gets no answer, the server ends (2 s of grace,
    then up to 2 s for tool threads; the margin is for a loaded machine)."""
    forever = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "forever"}}
    answers, took = _run([1], [forever])
    assert 1 in answers and 9 not in answers, answers
    assert took < 20
