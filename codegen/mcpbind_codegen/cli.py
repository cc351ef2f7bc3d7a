"""The click front of the generator: thin on purpose; the work is in pipeline.py."""

from __future__ import annotations

import keyword
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from .methods import UNMAPPED
from .overrides import OverrideError, OverrideTracker
from .pipeline import diff_files, generate_all, generate_version, stray_files, write_files
from .schemas import sync_schemas

_MANIFEST = click.option(
    "--manifest",
    type=click.Path(path_type=Path),
    default=Path("schema/manifest.json"),
    show_default=True,
    help="The manifest of pinned schema versions.",
)
_SCHEMAS = click.option(
    "--schemas",
    type=click.Path(path_type=Path),
    default=Path("schema"),
    show_default=True,
    help="Folder holding <version>/schema.json.",
)
_OUT = click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("generated/mcpbind_types"),
    show_default=True,
    help="The mcpbind_types package folder.",
)


@click.group()
def main() -> None:
    """Generate msgspec bindings from the official MCP JSON schemas."""


def _report_unmapped() -> None:
    for version, method in sorted(UNMAPPED):
        click.echo(
            f"warning: {version}: method {method!r} has no capability mapping "
            "(codegen/mcpbind_codegen/methods.py): generated ungated",
            err=True,
        )


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """A schema or override the generator cannot handle is one clear message, not a traceback."""
    try:
        yield
    except (OverrideError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@click.argument("schema", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--version",
    "version",
    required=True,
    help="Version label, e.g. 2025-11-25, or draft-2026-03-31 for an unpinned draft.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="The package folder that receives v<version>/ and __init__.py.",
)
def generate(schema: Path, version: str, out: Path) -> None:
    """Generate the bindings of one schema file (for a new or unpinned version)."""
    package = out.resolve().name
    if not package.isidentifier() or keyword.iskeyword(package):
        raise click.BadParameter(f"{package!r} is not a Python package name", param_hint="--out")
    tracker = OverrideTracker(version)
    with _one_line_errors():
        files = generate_version(schema, version, out, tracker=tracker)
    write_files(files)
    _report_unmapped()
    if not tracker.strict:
        click.echo(
            f"note: {version} is not a pinned version: {len(tracker.applied)} overrides applied, "
            f"{len(tracker.skipped)} in range matched nothing and were skipped",
            err=True,
        )
    click.echo(f"wrote {len(files)} files for {version} under {out} (import {package})")


@main.command("generate-all")
@_MANIFEST
@_SCHEMAS
@_OUT
def generate_all_cmd(manifest: Path, schemas: Path, out: Path) -> None:
    """Regenerate every pinned version and the unified superset."""
    with _one_line_errors():
        files = generate_all(manifest, schemas, out)
    stale = stray_files(files, out)
    for p in stale:
        p.unlink()
    write_files(files)
    _report_unmapped()
    click.echo(f"wrote {len(files)} files under {out} ({len(stale)} stale removed)")


@main.command()
@_MANIFEST
@_SCHEMAS
@_OUT
def check(manifest: Path, schemas: Path, out: Path) -> None:
    """Fail if the committed bindings differ from what the generator emits."""
    with _one_line_errors():
        problems = diff_files(generate_all(manifest, schemas, out), out)
    if problems:
        click.echo("generated/ is out of date (run `make gen`):", err=True)
        for p in problems:
            click.echo(f"  {p}", err=True)
        sys.exit(1)
    click.echo("generated/ matches the generator output")


@main.command("sync-schemas")
@_MANIFEST
@_SCHEMAS
@click.option(
    "--shared",
    type=click.Path(path_type=Path),
    default=Path("../shared/schema"),
    show_default=True,
    help="Local copy to use when present (else download).",
)
@click.option("--offline", is_flag=True, help="Never download; fail if a file is missing.")
def sync_schemas_cmd(manifest: Path, schemas: Path, shared: Path, offline: bool) -> None:
    """Copy (or download) the pinned schemas and examples, checking every sha256."""
    for line in sync_schemas(manifest, schemas, shared, offline=offline):
        click.echo(line)
