"""``mcpbind generate ...``: the protocol schema generator, run as ``python -m mcpbind_codegen``.

The runtime never imports the generator (tests/test_layering.py): it runs in a subprocess of
the same interpreter, with every argument passed through unchanged (``--help`` included). A
generator crash is one line (its exception) unless ``mcpbind --debug generate ...``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import click

from .errors import DEBUG_KEY, EXIT_MISSING_DEPENDENCY, CliFailure

__all__ = ["generate"]

GENERATOR = "mcpbind_codegen"


@click.command(
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def generate(args: tuple[str, ...]) -> None:
    """Run the schema generator with ARGS (try: mcpbind generate --help).

    \b
    mcpbind generate generate schema/2025-11-25/schema.json --version 2025-11-25 --out build/
    """
    if importlib.util.find_spec(GENERATOR) is None:
        raise CliFailure(
            f"the schema generator ({GENERATOR}) is not installed; it ships with an "
            "mcpbind source checkout: pip install -e '.[codegen]' from the repository",
            EXIT_MISSING_DEPENDENCY,
        )
    completed = subprocess.run(
        [sys.executable, "-m", GENERATOR, *args],
        capture_output=True,
        text=True,
        check=False,
    )
    # Re-emitted through click so that callers capturing our output (tests, pipes) see it.
    if completed.stdout:
        click.echo(completed.stdout, nl=False)
    if completed.returncode and not click.get_current_context().meta.get(DEBUG_KEY):
        lines = completed.stderr.strip().splitlines()
        last = lines[-1].removeprefix("Error: ") if lines else ""
        outside = "No such file" in last and "schema" in last
        if outside or "Traceback (most recent call last)" in completed.stderr:
            hint = " (this command runs in an mcpbind source checkout, which has schema/)"
            raise CliFailure(
                f"the generator failed: {last}{hint if outside else ''}", completed.returncode
            )
    if completed.stderr:
        click.echo(completed.stderr, nl=False, err=True)
    if completed.returncode:
        raise click.exceptions.Exit(completed.returncode)
