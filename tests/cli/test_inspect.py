"""``mcpbind ls``, ``call``, ``read`` and ``prompt`` against the bundled example servers over
stdio (2025-11-25 basic/transports.mdx §stdio), through click's test runner."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

from mcpbind import types as t
from mcpbind.cli.errors import (
    EXIT_CONNECTION,
    EXIT_PROTOCOL,
    EXIT_TIMEOUT,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
)
from mcpbind.cli.render import call_result_lines

from .conftest import FILES, NOTES, PYTHON, run


# ---------------------------------------------------------------------------------------- ls
def test_ls_lists_tools_resources_templates_and_prompts() -> None:
    """server/tools.mdx §Listing Tools, server/resources.mdx §Listing Resources and §Resource
    Templates, server/prompts.mdx §Listing Prompts: every list, readably, with arguments. The
    CLI negotiates the era (``Client``'s "auto"), so the notes server, which speaks both, is
    reached on 2026-07-28 (basic/versioning.mdx)."""
    result = run("ls", NOTES)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("Notes (mcpbind-notes) 1.0.0, protocol 2026-07-28\n")
    assert "Tools (4):" in out
    assert "add_note(title: string, body: string, tags?: string[]|null)  Add a note" in out
    assert "slow_count(to: integer, delay?: number)" in out
    assert "Resources (2):" in out and "notes://index" in out and "notes://welcome" in out
    assert "Resource templates (1):\n  notes://{id}  A note [text/markdown]" in out
    assert "Prompts (1):\n  summarize_notes(tag?)  Ask the model" in out


def test_ls_json_is_the_wire_form() -> None:
    """server/tools.mdx §Tool: ``--json`` gives the tools as the server sent them
    (``inputSchema``, ``outputSchema``, ``annotations`` with their wire names)."""
    result = run("ls", NOTES, "--json")
    assert result.exit_code == 0, result.output
    catalog = json.loads(result.stdout)
    assert catalog["serverInfo"]["name"] == "mcpbind-notes"
    assert catalog["protocolVersion"] == "2026-07-28"  # negotiated
    tools = {tool["name"]: tool for tool in catalog["tools"]}
    assert set(tools) == {"add_note", "search_notes", "delete_note", "slow_count"}
    assert tools["add_note"]["inputSchema"]["required"] == ["title", "body"]
    assert tools["delete_note"]["annotations"]["destructiveHint"] is True
    assert "outputSchema" not in tools["delete_note"]
    assert [r["uriTemplate"] for r in catalog["resourceTemplates"]] == ["notes://{id}"]
    assert [p["name"] for p in catalog["prompts"]] == ["summarize_notes"]


def test_env_reaches_the_stdio_server(tmp_path: Path) -> None:
    """basic/transports.mdx §stdio: ``--env`` sets the spawned server's environment (the files
    server takes its root from ``MCPBIND_FILES_ROOT``)."""
    (tmp_path / "hello.txt").write_text("hi")
    result = run("call", FILES, "list_dir", "--env", f"MCPBIND_FILES_ROOT={tmp_path}")
    assert result.exit_code == 0, result.output
    listing = json.loads(result.stdout)
    assert [entry["name"] for entry in listing["entries"]] == ["hello.txt"]


def test_bad_env_is_a_usage_error() -> None:
    """Not a spec behaviour: ``--env`` needs NAME=VALUE (click usage error, exit 2)."""
    result = run("ls", NOTES, "--env", "NOVALUE")
    assert result.exit_code == EXIT_USAGE
    assert "expected NAME=VALUE" in result.stderr


# -------------------------------------------------------------------------------------- call
def test_call_shows_structured_content_as_json() -> None:
    """server/tools.mdx §Structured Content: the structured result is shown once, as JSON."""
    args = json.dumps({"title": "Shopping", "body": "milk", "tags": ["Home"]})
    result = run("call", NOTES, "add_note", "--args", args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "id": "shopping",
        "title": "Shopping",
        "body": "milk",
        "tags": ["home"],
    }


def test_call_json_prints_the_call_tool_result() -> None:
    """server/tools.mdx §Tool Result: ``--json`` prints content, structuredContent, isError."""
    result = run("call", NOTES, "slow_count", "-a", '{"to": 2, "delay": 0}', "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["structuredContent"] == {"result": 2}
    assert body["content"][0]["type"] == "text"


def test_call_arguments_from_a_file(tmp_path: Path) -> None:
    """Not a spec behaviour: ``--args @FILE`` reads the arguments object from a file."""
    path = tmp_path / "args.json"
    path.write_text('{"query": "welcome"}')
    result = run("call", NOTES, "search_notes", "--args", f"@{path}")
    assert result.exit_code == 0, result.output
    assert [note["id"] for note in json.loads(result.stdout)] == ["welcome"]


def test_tool_error_exits_1_with_its_text_on_stderr() -> None:
    """server/tools.mdx §Error Handling: a tool execution error (``isError: true``) is a
    result, not a protocol error: exit 1, the tool's message on stderr."""
    result = run("call", NOTES, "delete_note", "--args", '{"id": "missing"}')
    assert result.exit_code == EXIT_TOOL_ERROR
    assert result.stdout == ""
    assert "No note with id 'missing'" in result.stderr
    assert "tool 'delete_note' reported an error" in result.stderr


def test_unknown_tool_is_a_protocol_error() -> None:
    """server/tools.mdx §Error Handling: an unknown tool is a JSON-RPC error (-32602): exit 2."""
    result = run("call", NOTES, "no_such_tool")
    assert result.exit_code == EXIT_PROTOCOL
    assert "server error -32602: Unknown tool: no_such_tool" in result.stderr


def test_invalid_arguments_are_rejected_by_the_server() -> None:
    """server/tools.mdx §Error Handling: arguments that fail the input schema never reach the
    tool; the CLI reports what the server said and exits non-zero."""
    result = run("call", NOTES, "slow_count", "--args", '{"to": "many"}')
    assert result.exit_code in (EXIT_TOOL_ERROR, EXIT_PROTOCOL)
    assert "to" in result.stderr


def test_bad_json_args_are_a_usage_error() -> None:
    """Not a spec behaviour: ``--args`` must be a JSON object (click usage error, exit 2)."""
    broken = run("call", NOTES, "add_note", "--args", "{title: x}")
    assert broken.exit_code == EXIT_USAGE
    assert "Invalid value for --args: not valid JSON" in broken.stderr
    listed = run("call", NOTES, "add_note", "--args", "[1, 2]")
    assert listed.exit_code == EXIT_USAGE
    assert "expected a JSON object" in listed.stderr


def test_progress_bar_for_a_long_call() -> None:
    """basic/utilities/progress.mdx: each ``notifications/progress`` redraws the bar on
    stderr (progress/total, percentage, message); stdout keeps only the result."""
    result = run("call", NOTES, "slow_count", "--args", '{"to": 5, "delay": 0.02}', "--progress")
    assert result.exit_code == 0, result.output
    assert result.stdout == "5\n"
    frames = [frame for frame in result.stderr.split("\r") if frame.strip()]
    assert len(frames) == 5
    assert frames[0].startswith("slow_count [######------------------------] 1/5  20%")
    assert frames[-1].rstrip() == (
        "slow_count [##############################] 5/5 100% counted 5 of 5"
    )
    quiet = run("call", NOTES, "slow_count", "--args", '{"to": 2, "delay": 0}', "--no-progress")
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_command_not_found_is_a_connection_failure() -> None:
    """basic/transports.mdx §stdio: a server that cannot be started: exit 3."""
    result = run("ls", "mcpbind-no-such-command-xyz")
    assert result.exit_code == EXIT_CONNECTION
    assert "No such file or directory" in result.stderr


def test_server_that_exits_is_a_connection_failure_with_its_stderr() -> None:
    """basic/lifecycle.mdx §Initialization: the server died before answering initialize;
    the message carries its exit status and the tail of its stderr (basic/transports.mdx
    §stdio: the server MAY write logs to stderr)."""
    crash = f"""{PYTHON} -c 'import sys; print("config missing", file=sys.stderr); sys.exit(7)'"""
    result = run("ls", crash, "--verbose")
    assert result.exit_code == EXIT_CONNECTION
    assert "exited with code 7" in result.stderr
    assert "stderr tail:\nconfig missing" in result.stderr
    assert "[server] config missing\n" in result.stderr  # --verbose echoes it as it comes


def test_silent_server_times_out() -> None:
    """basic/lifecycle.mdx §Timeouts: no answer within ``--timeout``: exit 4."""
    silent = f"{PYTHON} -c 'import sys; sys.stdin.read()'"
    result = run("ls", silent, "--timeout", "0.3")
    assert result.exit_code == EXIT_TIMEOUT
    assert "Request initialize timed out" in result.stderr


def test_timeout_bounds_the_discover_probe() -> None:
    """basic/transports.mdx §stdio, Backward Compatibility, and basic/lifecycle.mdx §Timeouts:
    the ``server/discover`` probe is a request like any other, so ``--timeout`` bounds it too
    (it used to wait a fixed 10 s before falling back to ``initialize``)."""
    silent = f"{PYTHON} -c 'import time; time.sleep(100)'"
    started = time.monotonic()
    result = run("ls", silent, "--timeout", "1")
    elapsed = time.monotonic() - started
    assert result.exit_code == EXIT_TIMEOUT
    assert "Request initialize timed out" in result.stderr
    assert elapsed < 9.0, f"probe not bounded by --timeout: {elapsed:.1f} s"


# -------------------------------------------------------------------------------------- read
def test_read_prints_text_contents() -> None:
    """server/resources.mdx §Reading Resources: text contents are printed as they are."""
    result = run("read", NOTES, "notes://index")
    assert result.exit_code == 0, result.output
    assert result.stdout == "# Notes\n\n- [Welcome](notes://welcome) (example, mcpbind)\n\n"


def test_read_unknown_resource_is_a_protocol_error() -> None:
    """2026-07-28 server/resources.mdx §Error Handling (the era the CLI negotiates with this
    server): resource not found is -32602 Invalid Params (-32002 before): exit 2."""
    result = run("read", NOTES, "notes://nope")
    assert result.exit_code == EXIT_PROTOCOL
    assert "-32602" in result.stderr and "No note with id 'nope'" in result.stderr


def test_read_blob_is_summarised_or_written_with_out(tmp_path: Path) -> None:
    """server/resources.mdx §Binary Content: a blob is summarised on the terminal, and
    ``--out`` writes its decoded bytes."""
    data = bytes(range(256)) * 4
    (tmp_path / "data.bin").write_bytes(data)
    server = f"{FILES} --root {tmp_path}"
    uri = (tmp_path / "data.bin").resolve().as_uri()
    shown = run("read", server, uri)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == f"[blob: {uri}, application/octet-stream, 1.0 KiB]\n"
    out = tmp_path / "copy.bin"
    written = run("read", server, uri, "--out", out)
    assert written.exit_code == 0, written.output
    assert out.read_bytes() == data
    assert base64.b64encode(out.read_bytes())  # the file is the bytes, not base64 text
    assert out.read_bytes()[:4] == b"\x00\x01\x02\x03"


# ------------------------------------------------------------------------------------ prompt
def test_prompt_renders_messages_with_embedded_resources() -> None:
    """server/prompts.mdx §Getting a Prompt, §Embedded Resources: messages by role; an
    embedded resource shows its URI and text."""
    result = run("prompt", NOTES, "summarize_notes", "--args", '{"tag": "example"}')
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == "user: Summarize these 1 note(s) tagged 'example' in a few bullet points."
    assert lines[2] == "user: [resource: notes://welcome, text/markdown]"
    assert lines[3] == "# Welcome"


def test_prompt_arguments_must_be_strings() -> None:
    """server/prompts.mdx §Getting a Prompt: arguments are strings; others are refused
    before anything is sent (exit 2)."""
    result = run("prompt", NOTES, "summarize_notes", "--args", '{"tag": 3}')
    assert result.exit_code == EXIT_USAGE
    assert "not a string: tag" in result.stderr


def test_unknown_prompt_is_a_protocol_error() -> None:
    """server/prompts.mdx §Error Handling: an unknown prompt is a JSON-RPC error: exit 2."""
    result = run("prompt", NOTES, "nope")
    assert result.exit_code == EXIT_PROTOCOL
    assert "server error -32602" in result.stderr


# ---------------------------------------------------------------------------- rendering
def test_media_and_links_are_summarised_not_dumped() -> None:
    """server/tools.mdx §Image Content, §Audio Content, §Resource Links, §Embedded Resources:
    binary content is summarised by type and decoded size."""
    png = base64.b64encode(b"\x89PNG" + bytes(2044)).decode()
    result = t.CallToolResult(
        content=[
            t.TextContent(text="here you go"),
            t.ImageContent(data=png, mime_type="image/png"),
            t.AudioContent(data=base64.b64encode(bytes(10)).decode(), mime_type="audio/wav"),
            t.ResourceLink(uri="file:///a.txt", name="a.txt", mime_type="text/plain"),
            t.EmbeddedResource(
                resource=t.BlobResourceContents(
                    uri="file:///b", blob=base64.b64encode(b"xyz").decode()
                )
            ),
        ]
    )
    assert list(call_result_lines(result)) == [
        "here you go",
        "[image: image/png, 2.0 KiB]",
        "[audio: audio/wav, 10 B]",
        "[resource link: file:///a.txt (a.txt, text/plain)]",
        "[blob: file:///b, application/octet-stream, 3 B]",
    ]
