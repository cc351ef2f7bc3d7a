"""The CLI against a protected server (issue 10, "What it must show" point 4):
``mcpbind ls URL --auth``, ``--header "Authorization: Bearer …"``, and a 401 without
either: one line naming ``--auth``, exit code 6."""

from __future__ import annotations

import os
import stat

import pytest
from auth_client_support import AuthWorld
from click.testing import CliRunner

from mcpbind.cli import main
from mcpbind.cli.errors import EXIT_AUTH


@pytest.fixture(autouse=True)
def config_home(tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch) -> str:
    home = os.path.join(tmp_path, "config")
    monkeypatch.setenv("XDG_CONFIG_HOME", home)  # platformdirs: the token file lives here
    return home


def run(*argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(argv), prog_name="mcpbind")
    return result.exit_code, result.stdout, result.stderr


def test_401_without_auth_is_one_line_naming_auth(world: AuthWorld) -> None:
    code, _, err = run("ls", world.url)
    assert code == EXIT_AUTH == 6
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--auth" in lines[0] and "401" in lines[0]
    assert "Traceback" not in err


def test_ls_with_auth_goes_through_oauth_and_keeps_the_token(
    world: AuthWorld, config_home: str
) -> None:
    code, out, err = run("ls", world.url, "--auth", "--auth-headless")
    assert code == 0, err
    assert "echo" in out
    token_file = os.path.join(config_home, "mcpbind", "tokens.json")
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    authorizations = world.paths().count("/as/authorize")
    code, out, _ = run("ls", world.url, "--auth", "--auth-headless")
    assert code == 0 and "echo" in out
    assert world.paths().count("/as/authorize") == authorizations  # the stored token served


def test_header_with_a_bearer_token(world: AuthWorld) -> None:
    world.valid.add("static-token-for-cli")
    code, out, err = run("ls", world.url, "--header", "Authorization: Bearer static-token-for-cli")
    assert code == 0, err
    assert "echo" in out


def test_failed_authorization_is_one_line_with_exit_6(world: AuthWorld) -> None:
    world.knobs.metadata = {"code_challenge_methods_supported": ["plain"]}
    code, _, err = run("ls", world.url, "--auth", "--auth-headless")
    assert code == EXIT_AUTH
    assert len(err.strip().splitlines()) == 1 and "S256" in err
