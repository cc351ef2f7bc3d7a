"""The ``mcpbind`` group: lazy subcommands, entry points, exit-code documentation.
(Not spec behaviour: the CLI of issue 6.)"""

from __future__ import annotations

import subprocess
import sys

import click
from click.testing import CliRunner

from mcpbind.cli import COMMANDS, main
from mcpbind.cli.errors import EXIT_CODES, EXIT_MISSING_DEPENDENCY
from mcpbind.cli.lazy import LazyCommand, LazyGroup

from .conftest import ROOT


def test_help_lists_every_command_without_importing_any() -> None:
    """Not spec behaviour (issue 6, the mcpbind group): ``mcpbind --help`` comes from the static
    table: no subcommand module, no HTTP stack and no generator is imported (checked in a fresh
    interpreter)."""
    probe = (
        "import sys\n"
        "from mcpbind.cli import main\n"
        "try:\n"
        "    main(['--help'], prog_name='mcpbind')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ['mcpbind.cli.inspect_cmds', 'mcpbind.cli.bind_cmd', 'mcpbind.cli.serve_cmd',\n"
        "         'mcpbind.cli.host_cmd', 'mcpbind.http', 'httpx2', 'uvicorn',\n"
        "         'datamodel_code_generator', 'mcpbind_codegen']\n"
        "print('LOADED', [m for m in heavy if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stdout
    for name in ("ls", "call", "read", "prompt", "serve", "bind", "generate", "host"):
        assert f"  {name} " in done.stdout
    for code in EXIT_CODES:
        assert f"  {code}  " in done.stdout


def test_missing_module_fails_only_that_command() -> None:
    """Not spec behaviour (issue 6, the mcpbind group): A command whose module cannot be imported
    explains why and exits 5; the others work."""

    @click.command()
    def hello() -> None:
        click.echo("hello")

    group = LazyGroup(
        name="demo",
        lazy_commands={
            "broken": LazyCommand("mcpbind_no_such_module:cmd", "Needs an extra.", extra="http")
        },
    )
    group.add_command(hello)
    runner = CliRunner()
    broken = runner.invoke(group, ["broken", "--anything", "x"])
    assert broken.exit_code == EXIT_MISSING_DEPENDENCY
    assert "demo broken" not in broken.stderr  # the message names the mcpbind command
    assert "mcpbind broken is unavailable: No module named 'mcpbind_no_such_module'" in (
        broken.stderr
    )
    assert "pip install 'mcpbind[http]'" in broken.stderr
    assert runner.invoke(group, ["hello"]).stdout == "hello\n"
    listing = runner.invoke(group, ["--help"]).stdout
    assert "broken  Needs an extra." in listing and "hello" in listing


def test_every_registered_command_loads() -> None:
    """Not spec behaviour (issue 6, the mcpbind group): Each table entry points at a click command
    (host is another module's; skipped if absent)."""
    ctx = click.Context(main)
    assert isinstance(main, LazyGroup)
    for name, lazy in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command is not None
        if name != "host":
            assert command.callback is not None
            assert command.callback.__module__ == lazy.target.partition(":")[0]


def test_python_m_mcpbind_cli() -> None:
    """Not spec behaviour (issue 6, the mcpbind group): ``python -m mcpbind.cli`` is the same CLI as
    the console script."""
    done = subprocess.run(
        [sys.executable, "-m", "mcpbind.cli", "--version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("mcpbind, version ")


def test_exit_codes_of_exceptions() -> None:
    """Not spec behaviour (issue 6, the mcpbind group): Each failure class maps to its documented
    code, inside task-group wrappers too."""
    from mcpbind import McpError
    from mcpbind.cli.errors import (
        EXIT_CONNECTION,
        EXIT_PROTOCOL,
        EXIT_TIMEOUT,
        exit_code_for,
    )
    from mcpbind.connection import ConnectionClosed, RequestTimeout
    from mcpbind.transports import TransportClosed

    assert exit_code_for(McpError(-32601, "Method not found")) == (
        EXIT_PROTOCOL,
        "server error -32601: Method not found",
    )
    assert exit_code_for(RequestTimeout("tools/call", 2.0)) == (
        EXIT_TIMEOUT,
        "timed out: Request tools/call timed out after 2s",
    )
    assert exit_code_for(ConnectionClosed("gone")) == (EXIT_CONNECTION, "Connection closed: gone")
    wrapped = ExceptionGroup("tg", [ExceptionGroup("inner", [TransportClosed("eof")])])
    assert exit_code_for(wrapped) == (EXIT_CONNECTION, "connection failed: eof")
    several = ExceptionGroup("tg", [ValueError("bug"), ConnectionRefusedError(111, "refused")])
    assert exit_code_for(several) == (EXIT_CONNECTION, "connection failed: [Errno 111] refused")
    assert exit_code_for(ValueError("a bug keeps its traceback")) is None


def test_a_server_started_before_the_loop_is_not_left_running() -> None:
    """Not spec behaviour (issue 15, cold start): ``run_async`` starts a stdio server before
    importing asyncio; when ``main`` fails before taking it over, the process is killed and
    reaped, not left behind."""
    import pytest

    from mcpbind.cli.target import ServerTarget, run_async

    target = ServerTarget.parse(f"{sys.executable} -c 'import time; time.sleep(60)'")

    async def main() -> None:
        raise RuntimeError("failed before connecting")

    with pytest.raises(RuntimeError, match="failed before connecting"):
        run_async(main, target)
    assert target.started == []


def test_a_started_server_is_taken_over_by_connect() -> None:
    """Not spec behaviour (issue 15): the server ``run_async`` started is the one ``connect``
    talks to (no second process)."""
    from mcpbind.cli.target import ServerTarget, connect, run_async

    target = ServerTarget.parse(f"{sys.executable} -m examples.notes_server", cwd=str(ROOT))
    spawned: list[int] = []
    original = subprocess.Popen.__init__

    def record(self: subprocess.Popen[bytes], *args: object, **kwargs: object) -> None:
        spawned.append(1)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    async def main() -> str:
        async with connect(target) as client:
            assert target.started == []
            return (await client.list_tools()).tools[0].name

    subprocess.Popen.__init__ = record  # type: ignore[method-assign]
    try:
        name = run_async(main, target)
    finally:
        subprocess.Popen.__init__ = original  # type: ignore[method-assign]
    assert name and spawned == [1]
