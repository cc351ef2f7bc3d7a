"""The README's main job: one Host over the two bundled example servers, one over stdio and
one over Streamable HTTP: one aggregated catalog (also in the shape LLM APIs take), calls by
host name through the approval policy (allow, ask, deny), progress, and the catalog following
a server's ``list_changed``.

    python -m examples.host_demo

The servers come from ``examples/mcp_servers.json`` (the ``mcpServers`` format desktop hosts
use). The files server is then started here over HTTP on 127.0.0.1 and a free port, and the
host reaches it by URL; without the ``http`` extra both servers stay on stdio. Everything runs
locally: no network beyond the loopback interface.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec

from mcpbind import McpError, RequestOptions, json_value
from mcpbind import types as t
from mcpbind.host import Host, HostConfig, ServerConfig, ToolCallRequest, decide, load_config

ROOT = Path(__file__).resolve().parent.parent
CONFIG = Path(__file__).with_name("mcp_servers.json")

_HTTP_SERVER = """\
import sys
from examples.files_server import create_server
from mcpbind.http import serve_http
serve_http(create_server(sys.argv[1]), "127.0.0.1", int(sys.argv[2]))
"""


@contextmanager
def files_over_http() -> Iterator[str | None]:
    """Run the files server over HTTP in a child process; yield its URL (None: no http extra)."""
    if importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("httpx2") is None:
        print("(the http extra is not installed: both servers run over stdio)")
        yield None
        return
    args = [sys.executable, "-c", _HTTP_SERVER, str(ROOT / "examples"), "0"]
    process = subprocess.Popen(args, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        # serve_http prints "serving NAME on URL" once listening (port 0: the one it got);
        # end of file instead: it failed, its error already read.
        line = process.stderr.readline()
        if not line.startswith("serving "):
            raise RuntimeError(f"the HTTP files server did not start: {line.strip()}")
        url = line.rsplit(" on ", 1)[1].strip()
        # What it writes later (a traceback) still reaches our stderr.
        threading.Thread(
            target=shutil.copyfileobj, args=(process.stderr, sys.stderr), daemon=True
        ).start()
        print(f"   (started the files server over Streamable HTTP: pid {process.pid})")
        yield url
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
        print(
            "== done: the host stopped the notes process; "
            f"the demo stopped the files server (pid {process.pid})"
        )


WIDTH = 100  # the transcript stays readable in a normal terminal


def _fit(text: str, width: int = WIDTH) -> str:
    """On one line, cut with an ellipsis where a terminal would wrap it."""
    line = text.replace("\n", " ")
    return line if len(line) <= width else line[: width - 3] + "..."


async def approve(request: ToolCallRequest) -> bool:
    """A stand-in for the user: approves additive calls, refuses anything destructive."""
    annotations = request.annotations
    answer = annotations is not None and annotations.destructive_hint is False
    kind = "an additive call" if answer else "it may destroy"
    print(f"   the user is asked; this demo answers {'yes' if answer else 'no'} ({kind})")
    return answer


def _result_text(result: t.CallToolResult) -> str:
    if not isinstance(result.structured_content, msgspec.UnsetType):
        return json.dumps(json_value(result.structured_content))
    return " ".join(c.text for c in result.content if isinstance(c, t.TextContent))


async def call(host: Host, name: str, arguments: dict[str, Any], **options: Any) -> None:
    """Call one tool through the host: the policy's verdict, then the result or the error."""
    print(f"> {name} {json.dumps(arguments)}")
    entry = host.catalog.tools[name]
    verdict, reason = decide(host.policy(entry.server), entry.tool)
    print(f"   policy: {verdict} ({reason})")
    try:
        result = await host.call_tool(name, arguments, **options)
    except McpError as exc:
        print(f"   refused, error {exc.code}: {exc.message}")
        return
    prefix = "tool error: " if result.is_error else "-> "
    print(_fit(f"   {prefix}{_result_text(result)}"))


async def show_progress(progress: float, total: float | None, message: str | None) -> None:
    print(
        f"   progress {progress:g}/{total:g}: {message}" if total else f"   progress {progress:g}"
    )


def _llm_json(function: dict[str, Any]) -> str:
    """One ``tools_for_llm()`` entry as JSON on three lines (name, then schema)."""
    head = {k: v for k, v in function.items() if k != "parameters"}
    return (
        '{"type": "function", "function": {\n'
        f"     {json.dumps(head)[1:-1]},\n"
        f'     "parameters": {json.dumps(function["parameters"])}}}}}'
    )


def _lists(host: Host, uri: str) -> bool:
    return any(entry.resource.uri == uri for entry in host.catalog.resources)


def show_catalog(host: Host) -> None:
    catalog = host.catalog
    counts = [
        f"{len(catalog.tools)} tools",
        f"{len(catalog.resources)} resources",
        f"{len(catalog.templates)} resource templates",
        f"{len(catalog.prompts)} prompt" + ("s" if len(catalog.prompts) != 1 else ""),
    ]
    print(f"== one aggregated catalog: {', '.join(counts)}")
    print("   (tool and prompt names are <server>__<name>; [policy] is what a call will meet)")
    for name, entry in sorted(catalog.tools.items()):
        verdict, _ = decide(host.policy(entry.server), entry.tool)
        print(_fit(f"   tool      {name:<24} {'[' + verdict + ']':<7} {entry.description}"))
    for resource in catalog.resources:
        print(f"   resource  {resource.resource.uri:<32} from {resource.server}")
    for template in catalog.templates:
        print(f"   template  {template.template.uri_template:<32} from {template.server}")
    for name, prompt in sorted(catalog.prompts.items()):
        print(f"   prompt    {name:<32} from {prompt.server}")


async def run(config: HostConfig) -> None:
    async with Host(config, approve=approve) as host:
        print("== servers (connected concurrently, each with its own session)")
        for state in host.servers():
            info = state.server_info
            label = f"{info.name} {info.version}" if info else "?"
            print(
                f"   {state.name}: {state.status} over {state.transport} ({label}), "
                f"protocol {state.protocol_version}"
            )
        show_catalog(host)
        tools = host.tools_for_llm("openai")
        print(
            f"== host.tools_for_llm(): {len(tools)} tools as LLM tool-calling APIs take them, e.g."
        )
        function = next(x for x in tools if x["function"]["name"] == "notes__delete_note")
        print("   " + _llm_json(function["function"]))
        print("== calls by host name, each through the approval policy")
        await call(host, "notes__search_notes", {"query": "welcome"})
        added = {"title": "Host demo", "body": "Added through the Host."}
        await call(host, "notes__add_note", added)
        await call(host, "notes__delete_note", {"id": "welcome"})
        await call(host, "files__list_dir", {"path": "."})
        await call(host, "files__read_file", {"path": "../README.md"})
        options = RequestOptions(on_progress=show_progress)
        await call(host, "notes__slow_count", {"to": 3, "delay": 0.05}, options=options)

        # add_note made the notes server send resources/list_changed: the host refetches.
        with anyio.move_on_after(5):
            while not _lists(host, "notes://host-demo"):  # noqa: ASYNC110 - polling the catalog
                await anyio.sleep(0.02)
        print("== after notifications/resources/list_changed from notes, the catalog has:")
        for resource in host.catalog.resources:
            print(f"   resource  {resource.resource.uri:<32} from {resource.server}")
        index = await host.read_resource("notes://index")
        body = index.contents[0]
        if isinstance(body, t.TextResourceContents):
            print("> read notes://index")
            print("   " + body.text.strip().replace("\n", "\n   "))
        verdicts = [entry.verdict for entry in host.audit]
        print(
            f"== host.audit: {len(verdicts)} decisions recorded with their reasons "
            f"({verdicts.count('allow')} allowed, {verdicts.count('deny')} denied)"
        )


def main() -> None:
    config = load_config(CONFIG)
    print("mcpbind Host demo: one Host over the two bundled example servers")
    print(f"== configuration: {CONFIG.relative_to(ROOT)} (the mcpServers format of desktop hosts)")
    with files_over_http() as url:
        if url is not None:
            files = config.mcp_servers["files"]
            roots: list[Any] = [root.uri for root in files.root_list() or []]
            config.mcp_servers["files"] = ServerConfig(
                url=url, roots=roots, approval=files.approval
            )
        for name, entry in sorted(config.mcp_servers.items()):
            where = entry.url or " ".join([entry.command or "", *entry.args])
            print(f"   {name}: {where}")
        anyio.run(run, config)


if __name__ == "__main__":
    main()
