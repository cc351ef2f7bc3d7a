"""The gateway (issue 33) as a real server: ``mcpbind host -c servers.json --serve`` over stdio
and ``--serve-http`` over Streamable HTTP, in front of real upstreams: a mcpbind server, one
restricted to 2026-07-28, the official Python SDK's server, the reference server-everything
(TypeScript SDK), and a mcpbind server over HTTP behind OAuth (a JWT from a real
authorization server, oidc-provider, checked by the resource server); a mcpbind client on both
eras downstream. Every byte the client receives is kept: no upstream token is among them.

Spec: 2025-11-25 basic/transports.mdx (§stdio, §Streamable HTTP), server/tools.mdx (§Listing
Tools, §Calling Tools), client/sampling.mdx, basic/utilities/progress.mdx,
basic/authorization.mdx (§Token Handling, "MCP servers MUST NOT pass through the token"; the
gateway holds each upstream's credential, the downstream client never sees one);
2026-07-28 server/discover.mdx (the gateway serves both eras).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.live_server import LiveServer, free_port, stop_process, wait_listening

from mcpbind import Client, ClientHandlers
from mcpbind import types as t
from mcpbind.host import Host
from mcpbind.host.relay import APPROVE_FIELD
from mcpbind.transports import Transport
from mcpbind.transports.stdio.process import StdioClientTransport
from mcpbind.versions import LATEST_HANDSHAKE, LATEST_STATELESS
from mcpbind_types._common import RequestOptions

from .helpers import SERVERS, node_binary, text_of, wait_for

pytest.importorskip("uvicorn")
pytest.importorskip("httpx2")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "auth" / "e2e"))
from oidc_support import INSTALLED, Provider, run_provider, serve_protected

from mcpbind.http import StreamableHTTPApp

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = (
    ROOT
    / "tests/peers/server-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
OFFICIAL = Path(__file__).with_name("peers") / "official_server.py"
ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]
TOKEN_ENV = "MCPBIND_GATEWAY_TEST_TOKEN"


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    if not INSTALLED.is_dir():
        pytest.skip("oidc-provider not installed: make tests/auth/oidc/node_modules/.installed")
    with run_provider() as found:
        yield found


@pytest.fixture(scope="module")
def secured(provider: Provider) -> Iterator[tuple[str, str]]:
    """The protected mcpbind server over HTTP, and a token for it from the provider."""
    with serve_protected(provider.issuer) as live:
        token = provider.client_credentials("mcp-service", live.url, "mcp:read mcp:write")
        yield live.url, token


def servers_json(folder: Path, secured_url: str) -> Path:
    """The gateway's configuration: five upstreams, the HTTP one's token from the env."""
    node = node_binary()
    if node is None or not EVERYTHING.exists():
        pytest.skip(
            "server-everything is not installed: npm ci --prefix tests/peers/server-everything"
        )
    config = {
        "mcpServers": {
            "local": {"command": sys.executable, "args": [SERVERS, "legacy"]},
            "waiter": {"command": sys.executable, "args": [SERVERS, "waiter"]},
            "modern": {"command": sys.executable, "args": [SERVERS, "modern"]},
            "official": {"command": sys.executable, "args": [str(OFFICIAL)]},
            "everything": {
                "command": node,
                "args": [str(EVERYTHING), "stdio"],
                "approval": {"tools": {"trigger-sampling-request": "allow"}},
            },
            "secure": {
                "url": secured_url,
                "headers": {"Authorization": f"Bearer ${{env:{TOKEN_ENV}}}"},
                "approval": "allow",
            },
        }
    }
    path = folder / "servers.json"
    path.write_text(json.dumps(config))
    return path


class Tap:
    """A client transport that keeps every message the client receives."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.received: list[bytes] = []

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)

    async def receive(self) -> bytes:
        message = await self.inner.receive()
        self.received.append(message)
        return message

    async def aclose(self) -> None:
        await self.inner.aclose()


class Model:
    """The downstream client's model (sampling), and the notifications it got."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.notes: list[str] = []

    async def note(self, method: str, params: Any) -> None:
        self.notes.append(method)

    async def __call__(self, params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        content = params.messages[-1].content
        text = content.text if isinstance(content, t.TextContent) else "?"
        self.asked.append(text)
        return t.CreateMessageResult(
            role="assistant", model="gw-model", content=t.TextContent(text=f"ANSWER to {text}")
        )


async def approve(params: Any) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={APPROVE_FIELD: True})


async def exercise(client: Client, model: Model, folder: Path) -> None:
    """What every downstream client does through the gateway: list the five servers' tools
    and call one of each, with progress, a tool that samples (forwarded), one that asks for
    approval (approved by elicitation), and one cancelled while it runs."""
    names = {tool.name async for tool in client.iter_tools()}
    for expected in (
        "local__echo",
        "modern__echo",
        "official__echo",
        "everything__echo",
        "everything__get-sum",
        "secure__whoami",
    ):
        assert expected in names
    assert text_of(await client.call("local__echo", {"text": "a"})) == "legacy: a"
    assert text_of(await client.call("modern__echo", {"text": "b"})) == "modern: b"
    assert text_of(await client.call("official__echo", {"text": "c"})) == "official: c"
    assert text_of(await client.call("everything__echo", {"message": "d"})) == "Echo: d"
    whoami = await client.call("secure__whoami", {})
    assert json.loads(text_of(whoami))["client"] == "mcp-service"
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    options = RequestOptions(on_progress=progress, timeout=60)
    long = await client.call(
        "everything__trigger-long-running-operation", {"duration": 1, "steps": 3}, options=options
    )
    assert "completed" in text_of(long).lower()
    assert seen == [1, 2, 3]
    sampled = await client.call("everything__trigger-sampling-request", {"prompt": "tides"})
    assert "ANSWER to" in text_of(sampled)
    assert any("tides" in asked for asked in model.asked)
    # Approval by elicitation: the legacy server's ``write`` asks.
    assert text_of(await client.call("local__write", {"value": "v"})) == "wrote v"
    # The official SDK's server asks for a sample in an input round (2026-07-28, mrtr.mdx).
    official = await client.call("official__sample", {"prompt": "waves"})
    assert text_of(official) == "gw-model: ANSWER to waves"
    # tools.mdx §List Changed Notification: a tool added upstream is announced downstream
    # (2026-07-28: on the listen stream the client opens, subscriptions.mdx).
    listening = await client.listen(tools_list_changed=True)
    assert text_of(await client.call("official__grow", {})) == "grown"
    await wait_for(lambda: "notifications/tools/list_changed" in model.notes, 30)
    assert "official__extra" in {tool.name async for tool in client.iter_tools()}
    await listening.close()
    # cancellation.mdx: the client gives up on a call; the upstream's handler is cancelled.
    marker = folder / "wait"
    with anyio.move_on_after(30) as waited:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call, "waiter__wait", {"marker": str(marker)})
            await wait_for(lambda: marker.with_suffix(".started").exists(), 30)
            tg.cancel_scope.cancel()
    assert not waited.cancelled_caught
    await wait_for(lambda: marker.with_suffix(".cancelled").exists(), 30)


def gateway_env(token: str) -> dict[str, str]:
    return {**os.environ, TOKEN_ENV: token, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}


@pytest.mark.slow
@pytest.mark.parametrize("version", ERAS)
async def test_the_gateway_over_stdio(
    tmp_path: Path, secured: tuple[str, str], version: str
) -> None:
    url, token = secured
    config = servers_json(tmp_path, url)
    stderr: list[str] = []
    spawning = StdioClientTransport.spawn(
        sys.executable,
        ["-m", "mcpbind.cli", "host", "-c", str(config), "--serve"],
        env=gateway_env(token),
        on_stderr=stderr.append,
    )
    model = Model()
    handlers = ClientHandlers(sampling=model, elicitation=approve, notification=model.note)
    async with spawning as transport:
        tap = Tap(transport)
        async with Client(tap, protocol_version=version, handlers=handlers, timeout=60) as client:
            await exercise(client, model, tmp_path)
    everything = b"\n".join(tap.received).decode()
    assert everything  # the client did receive
    assert token not in everything
    assert token.split(".")[-1] not in everything  # not even the JWT's signature


@contextmanager
def gateway_over_http(config: Path, token: str) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcpbind.cli",
            "host",
            "-c",
            str(config),
            "--serve-http",
            f"127.0.0.1:{port}",
        ],
        env=gateway_env(token),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, process, timeout=60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(process)


@pytest.mark.slow
@pytest.mark.parametrize("version", ERAS)
async def test_the_gateway_over_http(
    tmp_path: Path, secured: tuple[str, str], version: str
) -> None:
    url, token = secured
    config = servers_json(tmp_path, url)
    with gateway_over_http(config, token) as gateway_url:
        model = Model()
        handlers = ClientHandlers(sampling=model, elicitation=approve, notification=model.note)
        async with Client(
            gateway_url, protocol_version=version, handlers=handlers, timeout=60
        ) as client:
            await exercise(client, model, tmp_path)


class Recorder:
    """ASGI middleware keeping every header and body byte the app sends its clients."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.sent: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def recording(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.sent.extend(k + b": " + v for k, v in message.get("headers", []))
            elif message["type"] == "http.response.body":
                self.sent.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, recording)


@pytest.mark.parametrize("version", ERAS)
async def test_no_upstream_token_reaches_an_http_client(
    secured: tuple[str, str], version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """authorization.mdx §Token Handling: the upstream's bearer token (sent to it on every
    request, which it checks) appears in nothing the gateway sends its HTTP client, headers
    and bodies, on either era; the call that needs it works."""
    url, token = secured
    monkeypatch.setenv(TOKEN_ENV, token)
    host = Host(
        {
            "secure": {
                "url": url,
                "headers": {"Authorization": f"Bearer ${{env:{TOKEN_ENV}}}"},
                "approval": "allow",
            }
        }
    )
    recorder = Recorder(StreamableHTTPApp(host.as_server(run_host=True), path="/mcp"))
    live = LiveServer(recorder).start()
    try:
        async with Client(live.url, protocol_version=version) as client:
            names = [tool.name async for tool in client.iter_tools()]
            assert "secure__whoami" in names
            whoami = json.loads(text_of(await client.call("secure__whoami", {})))
            assert whoami["client"] == "mcp-service"
            assert text_of(await client.call("secure__write_note", {"text": "n"})) == "wrote n"
    finally:
        live.stop()
    sent = b"".join(recorder.sent)
    assert b"secure__whoami" in sent
    assert token.encode() not in sent
    assert token.split(".")[-1].encode() not in sent
