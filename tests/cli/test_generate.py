"""``mcpbind generate``: fronts ``python -m mcpbind_codegen`` in a subprocess, arguments passed
through. (Not spec behaviour: the CLI of issue 6.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpbind.cli.errors import EXIT_MISSING_DEPENDENCY

from .conftest import ROOT, run


def test_help_is_the_generators_help() -> None:
    """Not spec behaviour (issue 6, mcpbind generate): ``--help`` goes to the generator, not to the
    ``generate`` front."""
    result = run("generate", "--help", cwd=False)
    assert result.exit_code == 0, result.output
    assert "Generate msgspec bindings from the official MCP JSON schemas." in result.stdout
    assert "generate-all" in result.stdout and "sync-schemas" in result.stdout


def test_generates_one_version_into_a_folder(tmp_path: Path) -> None:
    """Not spec behaviour (issue 6, mcpbind generate): A real run: one pinned schema's bindings
    written under the given folder."""
    schema = ROOT / "schema" / "2024-11-05" / "schema.json"
    if not schema.exists():
        pytest.skip("schemas not synced (make schema)")
    result = run(
        "generate", "generate", schema, "--version", "2024-11-05", "--out", tmp_path, cwd=False
    )
    assert result.exit_code == 0, result.output
    assert f"wrote 5 files for 2024-11-05 under {tmp_path}" in result.stdout
    package = tmp_path / "v2024_11_05"
    assert sorted(p.name for p in package.iterdir()) == [
        "__init__.py",
        "methods.py",
        "stubs.py",
        "types.py",
    ]
    assert "class CallToolRequestParams(" in (package / "types.py").read_text()


def test_generator_exit_code_is_passed_through() -> None:
    """Not spec behaviour (issue 6, mcpbind generate): A generator usage error keeps its exit code
    (2) and message."""
    result = run("generate", "no-such-subcommand", cwd=False)
    assert result.exit_code == 2
    assert "No such command 'no-such-subcommand'" in result.stderr


def test_missing_generator_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not spec behaviour (issue 6, mcpbind generate): Without mcpbind_codegen installed: a clear
    message and exit 5, nothing run."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "mcpbind_codegen" else real(name, *a),
    )
    result = run("generate", "--help", cwd=False)
    assert result.exit_code == EXIT_MISSING_DEPENDENCY
    assert "the schema generator (mcpbind_codegen) is not installed" in result.stderr
