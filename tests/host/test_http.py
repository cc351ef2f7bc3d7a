"""The Host over Streamable HTTP (basic/transports.mdx §Streamable HTTP) next to stdio, and the
README's main job (examples/host_demo.py): one stdio server and one HTTP server in one catalog."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.live_server import free_port, wait_listening

from mcpbind import McpError
from mcpbind import types as t
from mcpbind.host import Backoff, Host, ServerConfig

from .helpers import stdio, text_of, wait_for

pytest.importorskip("uvicorn")
pytest.importorskip("httpx2")

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

_SERVE = """\
import sys
sys.path.insert(0, sys.argv[1])
from servers import normal
from mcpbind.http import serve_http
serve_http(normal("web"), "127.0.0.1", int(sys.argv[2]))
"""


class HttpServer:
    """servers.py's normal server over Streamable HTTP in a child process, restartable."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = [sys.executable, "-c", _SERVE, str(HERE), str(self.port)]
        self.process = subprocess.Popen(args)
        wait_listening(self.port, self.process)

    def kill(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def http_server() -> Iterator[HttpServer]:
    server = HttpServer()
    try:
        server.start()
        yield server
    finally:
        server.kill()


@pytest.mark.anyio
async def test_http_and_stdio_servers_in_one_host(http_server: HttpServer) -> None:
    """basic/transports.mdx: the same Host API over Streamable HTTP and stdio; roots and calls
    stay per server; when the HTTP server dies its calls fail with an McpError while the stdio
    server keeps answering, and the host reconnects once the HTTP server is back."""
    config = {
        "web": ServerConfig(url=http_server.url, roots=["/srv/web"], approval="allow"),
        "local": stdio("normal", roots=["/srv/local"], approval="allow"),
    }
    async with Host(config, backoff=Backoff(initial=0.05, maximum=0.2)) as host:
        states = {s.name: (s.status, s.transport) for s in host.servers()}
        assert states == {"web": ("running", "http"), "local": ("running", "stdio")}
        assert text_of(await host.call_tool("web__echo", {"text": "hi"})) == "web: hi"
        assert text_of(await host.call_tool("web__roots")) == '["file:///srv/web"]'
        assert text_of(await host.call_tool("local__roots")) == '["file:///srv/local"]'
        read = await host.read_resource("mem://web/items/1")
        assert isinstance(read.contents[0], t.TextResourceContents)
        http_server.kill()
        with pytest.raises(McpError):
            await host.call_tool("web__echo", {"text": "gone"})
        assert text_of(await host.call_tool("local__echo", {"text": "still"})) == "normal: still"
        http_server.start()
        await wait_for(lambda: any(s.connects == 2 for s in host.servers() if s.name == "web"))
        assert text_of(await host.call_tool("web__echo", {"text": "back"})) == "web: back"


def test_host_demo_runs() -> None:
    """The README main job: examples/host_demo.py lists the aggregated catalog of a stdio and an
    HTTP server, makes calls through the approval policy (server/tools.mdx §User Interaction
    Model), shows progress (basic/utilities/progress.mdx), follows resources/list_changed
    (server/resources.mdx §List Changed Notification) and stops the HTTP server it started."""
    done = subprocess.run(
        [sys.executable, "-m", "examples.host_demo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert done.stderr == "", done.stderr
    assert "files: running over http (mcpbind-files 1.0.0)" in out
    assert "notes: running over stdio (mcpbind-notes 1.0.0)" in out
    assert "== one aggregated catalog: 7 tools, 3 resources, 2 resource templates, 1 prompt" in out
    assert "notes__delete_note       [deny]" in out
    assert '"name": "notes__delete_note", "description": "Delete a note for good."' in out
    assert (
        "refused, error -32010: Tool call notes__delete_note was denied: per-tool policy: deny"
        in out
    )
    assert "the user is asked; this demo answers yes" in out and '"id": "host-demo"' in out
    assert "tool error: Path '../README.md' is refused" in out
    assert "progress 3/3: counted 3 of 3" in out
    assert re.search(r"resource  notes://host-demo +from notes", out)
    assert "(5 allowed, 1 denied)" in out
    found = re.search(r"the demo stopped the files server \(pid (\d+)\)", out)
    assert found is not None
    assert all(len(line) <= 100 for line in out.splitlines() if '"parameters"' not in line)
    with pytest.raises(ProcessLookupError):
        os.kill(int(found.group(1)), 0)
