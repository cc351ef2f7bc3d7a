"""Real downstream clients of the Host as a gateway (issue 33, "What it must show" 1).

The TypeScript SDK's client (``gateway_ts_client.mjs``, bench/rt/peers/ts), the official
Python SDK's client (``gateway_official_client.py``) and mcpbind's own ``Client``
(``gateway_mcpbind_client.py``) run one plan each, over stdio and over
Streamable HTTP: list the tools (every page), call tools, receive progress
(2025-11-25 basic/utilities/progress.mdx §Progress Flow), answer a sampling request a server
sends while its tool runs (client/sampling.mdx §Creating Messages), cancel a call
(basic/utilities/cancellation.mdx §Cancellation Flow: the server that runs the tool sees the
cancel), accept the elicitation that approves one call and decline the one that would approve
another (client/elicitation.mdx §Response Actions), and show that no upstream token reaches
them (basic/authorization.mdx §Access Token Privilege Restriction: a server MUST NOT pass a
token it received on). The MCP Inspector's CLI mode lists and calls tools over both.

The targets: ``standin`` is a plain mcpbind server with the same surface (gateway_peers.py),
the reference point for what each client does without a gateway in between; ``gateway`` is
``mcpbind host -c servers.json --serve`` / ``--serve-http`` over five upstreams: a 2026-07-28-only mcpbind server
(stdio), one behind OAuth (HTTP; the gateway gets its token with the client-credentials grant
from the authorization server the same process serves), the official Python SDK's interop
server (stdio), and the reference server-everything and server-filesystem (stdio; tests/peers,
pinned).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.cancel_race import call_cancelled_at_once
from support.live_server import free_port, listening_process, spawn_server

from mcpbind import LATEST_HANDSHAKE
from mcpbind.versions import STATELESS_VERSIONS

from ._support import OFFICIAL_SERVER

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PEERS = str(HERE / "gateway_peers.py")
TS_CLIENT = HERE / "gateway_ts_client.mjs"
OFFICIAL_CLIENT = HERE / "gateway_official_client.py"
MCPBIND_CLIENT = HERE / "gateway_mcpbind_client.py"
TS_SDK = ROOT / "bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk"
EVERYTHING = (
    ROOT
    / "tests/peers/server-everything/node_modules/@modelcontextprotocol/server-everything"
    / "dist/index.js"
)
FILESYSTEM = (
    ROOT
    / "tests/peers/server-filesystem/node_modules/@modelcontextprotocol/server-filesystem"
    / "dist/index.js"
)
INSPECTOR_BIN = ROOT / "tests/peers/inspector/node_modules/.bin"
TOKEN = "upstream-token-7f3a9c0e5b1d"
"""The access token the protected upstream's authorization server issues to the gateway."""
SECRET = "client-secret-2c81e4d07a6f"
"""The gateway's client secret at that authorization server. Neither may reach a downstream
client."""

pytestmark = pytest.mark.interop

has_node = shutil.which("node") is not None


def environment(**extra: str) -> dict[str, str]:
    """This checkout's code first for every process started (stdio servers get a small
    inherited environment otherwise)."""
    path = os.environ.get("PYTHONPATH")  # unset where the package is installed (CI)
    return {**({"PYTHONPATH": path} if path else {}), **extra}


@dataclass(frozen=True)
class Target:
    """Where a downstream client connects, and the host names of what it calls."""

    name: str
    transport: dict[str, Any]
    tools: dict[str, str]
    """Role -> tool name: echo (one per upstream: echo, echo-official, ...), count, sample,
    wait, write, wipe."""
    echoes: dict[str, tuple[dict[str, str], str]]
    """One plain tool per upstream (an echo, or reading a file): name -> its arguments, and
    the text its answer must contain."""


def standin_tools() -> dict[str, str]:
    return {role: role for role in ("count", "sample", "wait", "write", "wipe")}


GATEWAY_TOOLS = {
    "count": "modern__count",
    "sample": "modern__sample",
    "wait": "modern__wait",
    "write": "modern__write",
    "wipe": "modern__wipe",
}
THROUGH = {"text": "through"}
GATEWAY_ECHOES = {
    "modern__echo": (THROUGH, "modern: through"),
    "protected__echo": (THROUGH, "protected: through"),
    "official__echo": (THROUGH, "through"),
    "everything__echo": ({"message": "through"}, "Echo: through"),
}


def gateway_config(tmp_path: Path, protected_url: str) -> Path:
    """Five upstreams (server-filesystem when installed) and the tools each one's plain call."""
    env = environment()
    # modern: the default policy (auto: read-only tools run, write and wipe ask); the others'
    # echo tools carry no read-only annotation, so they are allowed outright.
    allow = {"approval": "allow"}
    servers: dict[str, Any] = {
        "modern": {"command": "python", "args": [PEERS, "modern"], "env": env},
        "protected": {
            "url": protected_url,
            "oauth": {
                "grant": "client_credentials",
                "clientId": "gateway",
                "clientSecret": "${env:GATEWAY_CLIENT_SECRET}",
            },
        },
        "official": {"command": "python", "args": [OFFICIAL_SERVER], "env": env, **allow},
        "everything": {"command": "node", "args": [str(EVERYTHING), "stdio"], **allow},
    }
    if FILESYSTEM.exists():  # its read_text_file is read-only: the default policy runs it
        servers["files"] = {
            "command": "node",
            "args": [str(FILESYSTEM), str(shared_folder(tmp_path))],
        }
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def shared_folder(tmp_path: Path) -> Path:
    """The folder server-filesystem may read, with the file the clients read through it."""
    folder = tmp_path / "shared"
    folder.mkdir(exist_ok=True)
    (folder / "note.txt").write_text("files: through")
    return folder


def gateway_echoes(tmp_path: Path) -> dict[str, tuple[dict[str, str], str]]:
    echoes = dict(GATEWAY_ECHOES)
    if FILESYSTEM.exists():
        note = str(shared_folder(tmp_path) / "note.txt")
        echoes["files__read_text_file"] = ({"path": note}, "files: through")
    return echoes


@contextmanager
def protected_upstream() -> Iterator[str]:
    """The protected upstream (its own authorization server too): its MCP endpoint's URL."""
    os.environ["GATEWAY_UPSTREAM_TOKEN"] = TOKEN  # spawn_server's child inherits them
    os.environ["GATEWAY_CLIENT_SECRET"] = SECRET
    try:
        with spawn_server(PEERS, "protected") as (_, base):
            yield f"{base}/mcp"
    finally:
        del os.environ["GATEWAY_UPSTREAM_TOKEN"], os.environ["GATEWAY_CLIENT_SECRET"]


@contextmanager
def target(kind: str, transport: str, tmp_path: Path) -> Iterator[Target]:
    if kind == "standin":
        echoes = {"echo": (THROUGH, "standin: through")}
        if transport == "stdio":
            command = {"command": sys.executable, "args": [PEERS, "standin", "stdio"]}
            yield Target(kind, {**command, "env": environment()}, standin_tools(), echoes)
            return
        with spawn_server(PEERS, "standin", "http") as (_, base):
            yield Target(kind, {"url": f"{base}/mcp"}, standin_tools(), echoes)
        return
    with protected_upstream() as protected_url:
        config = str(gateway_config(tmp_path, protected_url))
        host = [sys.executable, "-m", "mcpbind.cli", "host", "-c", config]
        # The gateway gets the client secret, and keeps the token it obtains in a token file
        # of its own (platformdirs: $XDG_CONFIG_HOME/mcpbind/tokens.json).
        config_home = str(tmp_path / "config")
        env = environment(GATEWAY_CLIENT_SECRET=SECRET, XDG_CONFIG_HOME=config_home)
        if transport == "stdio":
            yield Target(
                kind,
                {"command": host[0], "args": [*host[1:], "--serve"], "env": env},
                GATEWAY_TOOLS,
                gateway_echoes(tmp_path),
            )
            return
        port = free_port()
        serve = [*host, "--serve-http", f"127.0.0.1:{port}"]
        with listening_process(serve, port, env={**os.environ, **env}):
            url = f"http://127.0.0.1:{port}/mcp"
            yield Target(kind, {"url": url}, GATEWAY_TOOLS, gateway_echoes(tmp_path))


def plan(where: Target, marker: Path) -> dict[str, Any]:
    tools = where.tools
    return {
        "target": where.transport,
        "calls": [[name, arguments] for name, (arguments, _) in where.echoes.items()],
        "progress": [tools["count"], {"steps": 3}],
        "sample": [tools["sample"], {"prompt": "hello"}],
        "cancel": [tools["wait"], {"marker": str(marker)}],
        "approve": [tools["write"], {"value": "v"}],
        "refuse": [tools["wipe"], {}],
    }


def run_client(command: list[str], the_plan: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [*command, json.dumps(the_plan)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={**os.environ, **environment()},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def wait_for_file(path: Path, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


STEPS = [[1, 3], [2, 3], [3, 3]]
"""The progress of ``count`` (steps 3): ``[progress, total]`` of each notification."""

CLIENTS = {
    "typescript": (["node", str(TS_CLIENT)], "ts-model: sampled by ts"),
    "official-python": ([sys.executable, str(OFFICIAL_CLIENT)], "python-model: sampled by python"),
    "mcpbind": ([sys.executable, str(MCPBIND_CLIENT)], "mcpbind-model: sampled by mcpbind"),
}
#: The era each client negotiates with a server of both eras: the SDKs' handshakes offer the
#: latest handshake version; mcpbind's Client (auto) probes server/discover and takes
#: 2026-07-28, where sampling and elicitation are input rounds (basic/patterns/mrtr.mdx).
ERAS = {
    "typescript": {LATEST_HANDSHAKE},
    "official-python": {LATEST_HANDSHAKE},
    "mcpbind": set(STATELESS_VERSIONS),
}
TARGETS = [
    pytest.param("standin", id="standin"),
    pytest.param(
        "gateway",
        id="gateway",
        marks=pytest.mark.skipif(
            not EVERYTHING.exists() or not has_node,
            reason="server-everything is not installed (make setup-all)",
        ),
    ),
]


@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("kind", TARGETS)
def test_a_downstream_client_uses_every_feature(
    kind: str, transport: str, client: str, tmp_path: Path
) -> None:
    if client == "typescript" and not (TS_SDK.exists() and has_node):
        pytest.skip("the TypeScript SDK peer is not installed: make bench/rt/peers/ts/node_modules")
    if client == "official-python":
        pytest.importorskip("mcp", reason="the official MCP SDK (the `peers` extra) is missing")
    command, sampled = CLIENTS[client]
    marker = tmp_path / "wait"
    with target(kind, transport, tmp_path) as where:
        out = run_client(command, plan(where, marker))
        # Cancellation reached the server that ran the tool (its handler was cancelled).
        assert wait_for_file(Path(f"{marker}.cancelled")), out["cancel"]

    assert out["version"] in ERAS[client]
    # Every page of tools/list, with every tool of every upstream under its name.
    assert set(where.echoes) | set(where.tools.values()) <= set(out["tools"])
    assert len(out["tools"]) == len(set(out["tools"]))
    for call in out["calls"]:
        assert call.get("isError") is False, call
        assert where.echoes[call["name"]][1] in call["text"], call
    # Progress (progress.mdx §Progress Flow; §Behavior Requirements: progress notifications
    # only while the request is active): one notification per step, in order, then the result.
    progress = out["progress"]
    assert progress["text"] == "counted 3"
    if client == "typescript":
        # Written by the server (the gateway) before the result, none after it: what the
        # client read, in the order it read it.
        assert progress["wire"] == STEPS and progress["late"] == [], progress
        # The SDK passes on every one of them, except what it read in the same chunk as the
        # result: it runs a notification's handler a microtask later but settles a response
        # at once, dropping the call's progress handler (gateway_ts_client.mjs,
        # progressOnTheWire). On a loaded machine the last step and the result can arrive
        # together even when written 20 ms apart.
        kept = [step for step in STEPS if step not in progress["readWithResult"]]
        assert progress["updates"] in (STEPS, kept), (progress, out["sdkErrors"])
    else:
        assert progress["updates"] == STEPS
    # Sampling: the server's request reached this client, whose answer reached the tool.
    assert out["sample"]["requests"] == ["hello"]
    assert out["sample"]["text"] == sampled
    # The cancelled call got no result.
    assert "text" not in out["cancel"], out["cancel"]
    # Approval: accepted for write (it ran), declined for wipe (it did not).
    assert out["approve"] == {"text": "wrote v", "isError": False}
    assert [e["answer"] for e in out["elicitations"]] == ["accept", "decline"]
    refused = out["refuse"]
    assert refused.get("isError") is True or "error" in refused, refused
    assert "wiped" not in json.dumps(refused)
    # The session goes on after the cancel and the refusal.
    assert out["after"]["isError"] is False
    # No upstream token in anything received: messages, and response headers over HTTP.
    seen = json.dumps([out["received"], out["headers"]])
    assert out["received"] and TOKEN not in seen and SECRET not in seen
    if transport == "http" and client != "mcpbind":  # mcpbind's is recorded above HTTP
        assert out["headers"]


def test_the_wait_tool_leaves_its_cancelled_marker_when_the_cancel_lands_on_its_first_await(
    tmp_path: Path,
) -> None:
    """The clients cancel ``wait`` as soon as ``MARKER.started`` exists; a worker thread
    writes it, so the cancel can reach the upstream handler before it resumed from that
    write. Stopped there, the handler left no ``MARKER.cancelled`` and the test above failed
    although the cancel had arrived. basic/utilities/cancellation.mdx §Timing
    Considerations: a cancel can land at any point; here it lands on the handler's first
    await, every time (``standin``: the same tool as ``modern``, on the handshake era)."""
    marker = tmp_path / "wait"
    argv = [sys.executable, PEERS, "standin", "stdio"]
    call_cancelled_at_once(argv, "wait", {"marker": str(marker)})
    assert Path(f"{marker}.cancelled").exists(), "stopped without leaving MARKER.cancelled"


def run_inspector(
    options: list[str], where: Target, home: Path
) -> subprocess.CompletedProcess[str]:
    """The MCP Inspector's CLI mode (tests/peers/inspector, pinned) with ``options``, on the
    target's URL or command, with ``--format json``."""
    env = {
        **os.environ,
        **environment(),
        "PATH": f"{INSPECTOR_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "npm_config_update_notifier": "false",
    }
    if "url" in where.transport:
        server = ["--transport", "http", where.transport["url"]]
    else:
        variables = [f"{k}={v}" for k, v in where.transport["env"].items()]
        server = [*(x for pair in variables for x in ("-e", pair)), "--"]
        server += [where.transport["command"], *where.transport["args"]]
    return subprocess.run(
        [str(INSPECTOR_BIN / "mcp-inspector"), "--cli", "--format", "json", *options, *server],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def inspector(options: list[str], where: Target, home: Path) -> dict[str, Any]:
    """:func:`run_inspector`, which must succeed: its JSON output."""
    done = run_inspector(options, where, home)
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout)
    return out


@pytest.mark.skipif(
    not (INSPECTOR_BIN / "mcp-inspector").exists(),
    reason="the MCP Inspector is not installed: make setup-all",
)
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("kind", TARGETS)
def test_the_inspector_cli_lists_and_calls(kind: str, transport: str, tmp_path: Path) -> None:
    """The Inspector's CLI lists every tool and calls each upstream's echo (its CLI mode
    cannot answer sampling or elicitation, nor cancel)."""
    home = tmp_path / "home"
    home.mkdir()
    with target(kind, transport, tmp_path) as where:
        listed = inspector(["--method", "tools/list"], where, home)
        names = {tool["name"] for tool in listed["result"]["tools"]}
        assert set(where.echoes) <= names
        for name, (arguments, expected) in where.echoes.items():
            pairs = [f"{key}={value}" for key, value in arguments.items()]
            call = ["--method", "tools/call", "--tool-name", name, "--tool-arg", *pairs]
            called = inspector(call, where, home)
            assert expected in json.dumps(called["result"]["content"]), called
            assert TOKEN not in json.dumps(called) and SECRET not in json.dumps(called)


@pytest.mark.skipif(
    not (INSPECTOR_BIN / "mcp-inspector").exists() or not EVERYTHING.exists() or not has_node,
    reason="the MCP Inspector is not installed: make setup-all",
)
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_approval_without_elicitation_is_refused(transport: str, tmp_path: Path) -> None:
    """The Inspector's CLI declares no elicitation: a call the policy asks about is refused
    with one clear error (issue 33: "refused with a clear error where it does not"), and the
    tool does not run."""
    home = tmp_path / "home"
    home.mkdir()
    with target("gateway", transport, tmp_path) as where:
        call = ["--method", "tools/call", "--tool-name", "modern__write", "--tool-arg", "value=v"]
        done = run_inspector(call, where, home)
    said = done.stdout + done.stderr
    assert "did not declare elicitation" in said, said[-2000:]
    assert "wrote v" not in said
