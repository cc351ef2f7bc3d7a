"""Lifecycle: architecture §Host ("Controls client connection permissions and lifecycle") and
basic/lifecycle.mdx (initialization, shutdown): concurrent start, failures reported and retried
with backoff, add/remove/restart at runtime, every child process shut down."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from mcpbind import ConnectionClosed
from mcpbind.host import (
    Backoff,
    Connector,
    Host,
    HostEvent,
    ServerConfig,
    ServerUnavailable,
    UnknownName,
)
from mcpbind.transports import Transport

from .helpers import SERVERS, recorded, stdio, text_of, wait_for
from .servers import normal

pytestmark = pytest.mark.anyio


FAST = Backoff(initial=0.02, factor=2.0, maximum=0.2)


def alive(pid: int) -> bool:
    """Whether ``pid`` exists; an exited child nobody reaped (a zombie) still counts."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def running(pid: int) -> bool:
    """Whether ``pid`` runs; a dead grandchild waiting for init to reap it (a zombie) does not."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc here
        return alive(pid)


async def test_crash_flood_and_normal_servers_together() -> None:
    """lifecycle.mdx §Shutdown (stdio: the server exits) and architecture §Design Principles 3:
    one server dies mid-call and another floods notifications while a third answers normally;
    every normal call succeeds, the crashed call fails with ConnectionClosed, the crashed server
    is restarted, and the flood is absorbed by its own connection."""
    events: list[HostEvent] = []
    config = {"normal": stdio("normal"), "crashy": stdio("crashy"), "flood": stdio("flood")}
    async with Host(config, backoff=FAST, on_event=events.append) as host:
        first_pid = {s.name: s.pid for s in host.servers()}["crashy"]
        assert first_pid is not None
        answers: list[str] = []
        outcome: dict[str, object] = {}

        async def normal_calls() -> None:
            for i in range(40):
                answers.append(text_of(await host.call_tool("normal__echo", {"text": str(i)})))
                await anyio.sleep(0.01)

        async def crash() -> None:
            try:
                await host.call_tool("crashy__crash")
            except ConnectionClosed as exc:
                outcome["crash"] = exc

        async def flood() -> None:
            outcome["flood"] = text_of(await host.call_tool("flood__flood", {"count": 3000}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(normal_calls)
            tg.start_soon(crash)
            tg.start_soon(flood)
        assert answers == [f"normal: {i}" for i in range(40)]
        assert "exited with code 3" in str(outcome["crash"])
        assert outcome["flood"] == "3000"
        await wait_for(lambda: any(s.connects == 2 for s in host.servers() if s.name == "crashy"))
        crashy = {s.name: s for s in host.servers()}["crashy"]
        assert crashy.status == "running" and crashy.pid not in (None, first_pid)
        assert not alive(first_pid)
        assert "crashy__echo" in host.catalog.tools
        assert f"pid {crashy.pid}" in text_of(await host.call_tool("crashy__echo", {"text": "x"}))
        flood_state = {s.name: s for s in host.servers()}["flood"]
        assert flood_state.notifications >= 3300 and flood_state.connects == 1
        flood_logs = host.logs("flood")  # bounded: the most recent ones are kept
        assert len(flood_logs) == 200 and flood_logs[-1].data == 2999
        assert host.logs("normal") == []
        assert text_of(await host.call_tool("flood__ping_me")) == "flood alive"
        assert host.catalog.tools["flood__flood"].server == "flood"
        pids = [s.pid for s in host.servers()]
    assert None not in pids and not any(alive(pid) for pid in [*pids, first_pid] if pid)
    kinds = [(e.server, e.kind) for e in events if e.server == "crashy"]
    assert kinds[:2] == [("crashy", "starting"), ("crashy", "connected")]
    assert ("crashy", "disconnected") in kinds and ("crashy", "retrying") in kinds
    assert kinds[-1] == ("crashy", "stopped")


async def test_servers_connect_concurrently() -> None:
    """basic/lifecycle.mdx §Initialization, one handshake per server: the host opens every
    server's connection at once -- each connector here waits until all three have been
    entered, which can only happen when the host starts them concurrently."""
    entered: list[str] = []
    everyone_in = anyio.Event()
    saw_everyone: dict[str, bool] = {}

    def gated(name: str) -> Connector:
        inner, _ = recorded(normal(name))

        @asynccontextmanager
        async def connect() -> AsyncIterator[Transport]:
            entered.append(name)
            if len(entered) == 3:
                everyone_in.set()
            with anyio.move_on_after(5):
                await everyone_in.wait()
            saw_everyone[name] = everyone_in.is_set()
            async with inner() as transport:
                yield transport

        return connect

    async with Host({n: gated(n) for n in ("a", "b", "c")}) as host:
        assert saw_everyone == {"a": True, "b": True, "c": True}
        assert [s.status for s in host.servers()] == ["running"] * 3
        assert text_of(await host.call_tool("c__echo", {"text": "x"})) == "c: x"


async def test_failed_start_is_retried_with_backoff() -> None:
    """lifecycle.mdx §Initialization: a server that cannot start is reported (event and reason)
    and retried with growing delays, while the others work; a command that does not exist is
    reported once and not retried (see test_failures.py)."""
    events: list[HostEvent] = []
    config = {
        "missing": ServerConfig(command="/nonexistent/mcp-server"),
        "exits": ServerConfig(command=sys.executable, args=["-c", "import sys; sys.exit(2)"]),
        "ok": normal("ok"),
    }
    async with Host(config, backoff=FAST, on_event=events.append) as host:
        assert text_of(await host.call_tool("ok__echo", {"text": "hi"})) == "ok: hi"
        await wait_for(
            lambda: sum(e.kind == "retrying" and e.server == "exits" for e in events) >= 3
        )
        states = {s.name: s for s in host.servers()}
        assert states["missing"].status == "failed"
        assert (
            states["missing"].error == "command not found: '/nonexistent/mcp-server' (not retried)"
        )
        assert "exited with code 2" in (states["exits"].error or "")
        with pytest.raises(ServerUnavailable, match="not connected"):
            host.client("exits")
        assert sorted(host.catalog.tools)[0].startswith("ok__")
    delays = [e.message for e in events if e.kind == "retrying" and e.server == "exits"]
    assert delays[:3] == [
        "retrying in 0.02s (attempt 1)",
        "retrying in 0.04s (attempt 2, same error)",
        "retrying in 0.08s (attempt 3, same error)",
    ]
    assert not any(e.kind == "retrying" and e.server == "missing" for e in events)


async def test_a_crash_loop_keeps_backing_off() -> None:
    """lifecycle.mdx §Operation: a server that dies right after each handshake is reconnected
    with growing delays (the count starts over only after a server stayed up a while)."""
    events: list[HostEvent] = []
    async with Host({"brief": stdio("brief")}, backoff=FAST, on_event=events.append) as host:
        await wait_for(lambda: sum(e.kind == "retrying" for e in events) >= 3)
        assert {s.name: s for s in host.servers()}["brief"].connects >= 2
    delays = [e.message for e in events if e.kind == "retrying"]
    assert delays[:3] == [
        "retrying in 0.02s (attempt 1)",
        "retrying in 0.04s (attempt 2, same error)",
        "retrying in 0.08s (attempt 3, same error)",
    ]
    assert any(e.kind == "disconnected" and "exited with code 4" in e.message for e in events)


async def test_a_silent_server_times_out_and_does_not_hold_the_others() -> None:
    """lifecycle.mdx §Timeouts: a server that never answers initialize fails after its
    configured timeout and is retried; the host starts and serves the others meanwhile."""
    silent = ServerConfig(
        command=sys.executable, args=["-c", "import sys; sys.stdin.read()"], timeout=0.3
    )
    events: list[HostEvent] = []
    async with Host(
        {"silent": silent, "ok": normal("ok")}, backoff=FAST, on_event=events.append
    ) as host:
        assert text_of(await host.call_tool("ok__echo", {"text": "hi"})) == "ok: hi"
        await wait_for(lambda: any(e.kind == "failed" and e.server == "silent" for e in events))
        failure = next(e for e in events if e.kind == "failed")
        assert "initialize timed out" in failure.message
        pid = {s.name: s for s in host.servers()}["silent"].pid
    assert pid is None or not alive(pid)


async def test_add_restart_remove_at_runtime_and_clean_shutdown() -> None:
    """lifecycle.mdx §Shutdown (stdio: close stdin, then SIGTERM, then SIGKILL): servers are
    added, restarted and removed while the host runs; each old process is gone, and on exit
    every child process is gone."""
    async with Host(backoff=FAST) as host:
        await host.add_server("one", stdio("normal"))
        await host.add_server(
            "two", {"command": sys.executable, "args": [stdio("crashy").args[0], "crashy"]}
        )
        await host.add_server("off", {"command": "never-run", "enabled": False})
        states = {s.name: s for s in host.servers()}
        assert states["off"].status == "stopped" and states["off"].pid is None
        pid = states["one"].pid
        assert pid is not None and alive(pid)
        await host.restart_server("one")
        new_pid = {s.name: s for s in host.servers()}["one"].pid
        assert new_pid not in (None, pid) and not alive(pid)
        assert text_of(await host.call_tool("one__echo", {"text": "x"})) == "normal: x"
        two_pid = {s.name: s for s in host.servers()}["two"].pid
        await host.remove_server("two")
        assert two_pid is not None and not alive(two_pid)
        assert not any(name.startswith("two__") for name in host.catalog.tools)
        assert [s.name for s in host.servers()] == ["off", "one"]
        with pytest.raises(UnknownName):
            await host.remove_server("two")
        await host.restart_server("off")  # a disabled server is started on request
        off = {s.name: s for s in host.servers()}["off"]
        assert off.status == "failed" and "never-run" in (off.error or "")
    assert new_pid is not None and not alive(new_pid)


async def test_processes_a_server_started_are_stopped_with_it(tmp_path: Path) -> None:
    """lifecycle.mdx §Shutdown (stdio): a server started through a wrapper (as ``npx`` or a
    shell script does) leaves no process behind -- its background child is stopped too, on
    removal and on the host's exit."""
    shell = shutil.which("sh")
    if shell is None:
        pytest.skip("no POSIX shell")

    def wrapped(name: str) -> ServerConfig:
        script = f"sleep 300 & echo $! > {tmp_path / name}; exec {sys.executable} {SERVERS} normal"
        return ServerConfig(command=shell, args=["-c", script])

    async with Host({"kept": wrapped("kept"), "removed": wrapped("removed")}) as host:
        pids = {s.name: s.pid for s in host.servers()}
        helpers = {name: int((tmp_path / name).read_text()) for name in pids}
        assert all(running(pid) for pid in [*pids.values(), *helpers.values()] if pid)
        await host.remove_server("removed")
        await wait_for(lambda: not running(helpers["removed"]), timeout=5)
        assert running(helpers["kept"])
    assert not any(alive(pid) for pid in pids.values() if pid)  # our children: reaped
    await wait_for(lambda: not running(helpers["kept"]), timeout=5)
