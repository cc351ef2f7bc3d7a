"""``mcpbind install CLIENT APP`` (issue 33): the entry lands in each client's own file, where
its documentation puts it, in its shape; the Host, reading that file back with the same
reader it uses for those clients' configurations (mcpbind.host.config_file), starts the
server and lists its tools. Home folders (HOME, APPDATA, XDG_CONFIG_HOME) are temporary."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mcpbind import json_value
from mcpbind.cli import main
from mcpbind.cli.install_clients import CLIENTS
from mcpbind.host import Host, ToolCallRequest, load_config

from .conftest import ROOT

pytestmark = pytest.mark.anyio

HELLO = ROOT / "examples" / "hello_server.py"

#: Each client's user file under a home folder at ``home`` (platform, client -> path), as the
#: clients' documentation gives it (install_clients.CLIENTS names the pages).
USER_FILES = {
    ("linux", "claude-desktop"): ".config/Claude/claude_desktop_config.json",
    ("darwin", "claude-desktop"): "Library/Application Support/Claude/claude_desktop_config.json",
    ("win32", "claude-desktop"): "AppData/Roaming/Claude/claude_desktop_config.json",
    ("linux", "vscode"): ".config/Code/User/mcp.json",
    ("darwin", "vscode"): "Library/Application Support/Code/User/mcp.json",
    ("win32", "vscode"): "AppData/Roaming/Code/User/mcp.json",
    **{(p, "claude-code"): ".claude.json" for p in ("linux", "darwin", "win32")},
    **{(p, "cursor"): ".cursor/mcp.json" for p in ("linux", "darwin", "win32")},
    **{(p, "gemini-cli"): ".gemini/settings.json" for p in ("linux", "darwin", "win32")},
}
PROJECT_FILES = {
    "claude-code": ".mcp.json",
    "cursor": ".cursor/mcp.json",
    "vscode": ".vscode/mcp.json",
    "gemini-cli": ".gemini/settings.json",
    "mcp-json": "mcp.json",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary home folder (HOME; APPDATA and XDG_CONFIG_HOME inside it, where Windows and
    Linux keep them) and a project folder as the current directory."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return home


def install(*args: str | Path) -> Result:
    """``mcpbind install ARGS`` through click's runner."""
    result = CliRunner().invoke(main, ["install", *map(str, args)], prog_name="mcpbind")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


async def _always(request: ToolCallRequest) -> bool:
    return True


async def tools_started_from(path: Path) -> dict[str, str]:
    """Start every server of the configuration file at ``path`` with the Host; each server's
    tool names, joined."""
    async with Host(load_config(path), approve=_always) as host:
        found: dict[str, list[str]] = {}
        for entry in host.catalog.tools.values():
            found.setdefault(entry.server, []).append(entry.tool.name)
        return {server: ",".join(sorted(names)) for server, names in found.items()}


@pytest.mark.parametrize(("platform", "client"), sorted(USER_FILES))
def test_user_files_per_platform(home: Path, platform: str, client: str) -> None:
    """Each client's user configuration on each platform: Claude Desktop and VS Code in the
    application settings folder (%APPDATA%, ~/Library/Application Support, XDG_CONFIG_HOME),
    the others in a dot-folder or dot-file of the home folder."""
    found = CLIENTS[client].file("user", platform, os.environ)
    assert found == home / USER_FILES[platform, client]


def test_xdg_config_home_moves_the_linux_files(home: Path, tmp_path: Path) -> None:
    """XDG_CONFIG_HOME, when set, is where Claude Desktop and VS Code keep theirs on Linux."""
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert CLIENTS["vscode"].file("user", "linux", environ) == tmp_path / "xdg/Code/User/mcp.json"
    assert (
        CLIENTS["claude-desktop"].file("user", "linux", {})
        == home / USER_FILES["linux", "claude-desktop"]
    )


@pytest.mark.parametrize("client", sorted(CLIENTS))
async def test_the_host_starts_what_install_wrote(home: Path, client: str) -> None:
    """Issue 33: the file written for each client (its default scope: the user file, or the
    project's mcp.json) is read back by the Host, which starts the server and lists its tools;
    the entry runs this Python on the file's absolute path."""
    result = install(client, HELLO)
    assert result.exit_code == 0, result.output
    relative = USER_FILES.get((sys.platform, client))
    path = home / relative if relative is not None else Path.cwd() / PROJECT_FILES[client]
    assert str(path) in result.stdout
    written = json.loads(path.read_text())
    entry = written[CLIENTS[client].section]["hello"]
    assert entry["command"] == sys.executable
    assert entry["args"] == ["-m", "mcpbind.cli", "serve", str(HELLO)]
    assert (entry.get("type") == "stdio") == CLIENTS[client].typed
    assert await tools_started_from(path) == {"hello": "greet"}


@pytest.mark.parametrize("client", sorted(PROJECT_FILES))
async def test_project_scope(home: Path, client: str) -> None:
    """--scope project writes the project's file (Claude Code's .mcp.json, .cursor/mcp.json,
    .vscode/mcp.json, .gemini/settings.json), which the Host starts too."""
    result = install(client, HELLO, "--scope", "project", "--name", "greeter")
    assert result.exit_code == 0, result.output
    path = Path.cwd() / PROJECT_FILES[client]
    assert await tools_started_from(path) == {"greeter": "greet"}


async def test_env_and_env_file_reach_the_server(home: Path, tmp_path: Path) -> None:
    """--env-file's KEY=VALUE lines (comments, ``export`` and quotes as .env files have them)
    and --env (which wins) are the started server's environment."""
    server = tmp_path / "env_server.py"
    server.write_text(
        "import os\n"
        "from mcpbind import Server\n"
        "server = Server('env')\n\n"
        "@server.tool()\n"
        "def read(name: str) -> str:\n"
        "    return os.environ.get(name, '<unset>')\n"
    )
    dotenv = tmp_path / ".env"
    dotenv.write_text("# settings\nexport TOKEN='from file'\n\nMODE=file\n")
    result = install("cursor", server, "--env-file", dotenv, "--env", "MODE=flag")
    assert result.exit_code == 0, result.output
    path = home / ".cursor" / "mcp.json"
    assert json.loads(path.read_text())["mcpServers"]["env"]["env"] == {
        "TOKEN": "from file",
        "MODE": "flag",
    }
    async with Host(load_config(path), approve=_always) as host:
        (read,) = host.catalog.tools  # the one tool, by its host name
        token = await host.call_tool(read, {"name": "TOKEN"})
        mode = await host.call_tool(read, {"name": "MODE"})
    assert json_value(token.structured_content) == {"result": "from file"}
    assert json_value(mode.structured_content) == {"result": "flag"}


async def test_a_module_runs_from_this_folder(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module name (package.module:attr) is run with the current folder on PYTHONPATH, as
    ``python -m`` would import it here; the Host, started elsewhere, finds it."""
    monkeypatch.chdir(ROOT)
    result = install("gemini-cli", "examples.hello_server:server")
    assert result.exit_code == 0, result.output
    path = home / ".gemini" / "settings.json"
    entry = json.loads(path.read_text())["mcpServers"]["hello"]
    assert entry["args"][-1] == "examples.hello_server:server"
    assert entry["env"] == {"PYTHONPATH": str(ROOT)}
    assert entry["cwd"] == str(ROOT)
    monkeypatch.chdir(home)
    assert await tools_started_from(path) == {"hello": "greet"}


def test_installing_again_changes_nothing_and_keeps_the_rest(home: Path) -> None:
    """Idempotent: the same entry again leaves the file byte for byte; the file's other keys
    and servers are kept as they were."""
    path = home / ".claude.json"
    path.parent.mkdir(parents=True)
    others = {"numStartups": 3, "mcpServers": {"other": {"command": "npx", "args": ["srv"]}}}
    path.write_text(json.dumps(others))
    assert install("claude-code", HELLO).exit_code == 0
    first = path.read_bytes()
    again = install("claude-code", HELLO)
    assert again.exit_code == 0
    assert "already installed" in again.stdout
    assert path.read_bytes() == first
    data = json.loads(first)
    assert data["numStartups"] == 3
    assert sorted(data["mcpServers"]) == ["hello", "other"]
    assert data["mcpServers"]["other"] == others["mcpServers"]["other"]


def test_a_name_taken_by_another_entry_is_refused_without_force(home: Path) -> None:
    """A different entry under the same name is refused in one line (exit 2) and the file is
    left alone; --force replaces it."""
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"hello": {"command": "node", "args": ["x.js"]}}}))
    before = path.read_bytes()
    refused = install("cursor", HELLO)
    assert refused.exit_code == 2
    assert refused.stderr.count("\n") == 1
    assert "already has a different server named 'hello'" in refused.stderr
    assert "--force" in refused.stderr
    assert path.read_bytes() == before
    forced = install("cursor", HELLO, "--force")
    assert forced.exit_code == 0, forced.output
    assert json.loads(path.read_text())["mcpServers"]["hello"]["command"] == sys.executable


def test_dry_run_prints_the_entry_and_writes_nothing(home: Path) -> None:
    """--dry-run prints the entry in the client's shape as JSON (stdout) and the file it would
    go to (stderr); no file is created."""
    result = install("vscode", HELLO, "--dry-run", "--scope", "project")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed == {
        "servers": {
            "hello": {
                "type": "stdio",
                "command": sys.executable,
                "args": ["-m", "mcpbind.cli", "serve", str(HELLO)],
                "cwd": str(Path.cwd()),
            }
        }
    }
    assert str(Path.cwd() / ".vscode" / "mcp.json") in result.stderr
    assert not (Path.cwd() / ".vscode").exists()


def test_a_file_that_is_not_json_is_left_alone(home: Path) -> None:
    """A configuration that is not plain JSON (VS Code allows comments) is refused in one
    line, never overwritten."""
    path = Path.cwd() / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  // mine\n  "servers": {}\n}\n')
    result = install("vscode", HELLO, "--scope", "project")
    assert result.exit_code == 2
    assert "is not plain JSON (line 2" in result.stderr
    assert path.read_text() == '{\n  // mine\n  "servers": {}\n}\n'


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("claude-desktop", HELLO, "--scope", "project"), "Claude Desktop has no project"),
        (("cursor", "missing.py"), "no such file: missing.py"),
        (("cursor", HELLO, "--env", "NOEQUALS"), "expected KEY=VALUE, got 'NOEQUALS'"),
        (("zed", HELLO), "'zed' is not one of"),
    ],
)
def test_mistakes_are_one_line(home: Path, args: tuple[str | Path, ...], message: str) -> None:
    """Usage mistakes: one line on stderr, exit 2, nothing written."""
    result = install(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (home / ".cursor").exists()


def test_a_bad_env_file_line_names_the_line(home: Path, tmp_path: Path) -> None:
    """A line of --env-file that is not KEY=VALUE is named by file and line number."""
    dotenv = tmp_path / "bad.env"
    dotenv.write_text("A=1\nnot a pair\n")
    result = install("cursor", HELLO, "--env-file", dotenv)
    assert result.exit_code == 2
    assert f"{dotenv}:2: expected KEY=VALUE" in result.stderr
