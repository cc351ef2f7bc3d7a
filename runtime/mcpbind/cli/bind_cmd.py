"""``mcpbind bind SERVER --out FILE``: typed Python bindings for one server's tools.

The module is generated from the server's ``tools/list`` (see :mod:`.bindgen`); application
code that calls the server through it is checked by mypy. Running it again against an
unchanged server leaves FILE untouched (not even its modification time changes), so it can
run in a build step; ``--check`` turns it into a CI guard.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import click

from .errors import EXIT_TOOL_ERROR, CliFailure, missing_dependency
from .output import echo
from .render import counted, wire
from .target import ServerTarget, connect, run_async, server_options

__all__ = ["bind", "write_if_changed"]


def write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` atomically unless it already holds exactly that."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


@click.command()
@server_options
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The Python module to write.",
)
@click.option(
    "--class-name",
    default=None,
    help="Name of the wrapper class (default: from the server's name, e.g. McpbindNotesTools).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 if FILE is missing or differs from what would be generated.",
)
def bind(target: ServerTarget, out: Path, class_name: str | None, check: bool) -> None:
    """Generate typed bindings for SERVER's tools into FILE (needs mcpbind[codegen]).

    Each tool's input and output JSON schemas become msgspec Structs, and a wrapper class has
    one async method per tool: typed params in, the typed structured result out (or the
    CallToolResult for tools without an output schema).

    \b
    mcpbind bind "python -m examples.notes_server" --out notes_tools.py
    """
    try:
        import datamodel_code_generator  # noqa: F401

        from .bindgen import BindError, generate_bindings
    except ImportError as exc:
        raise missing_dependency("mcpbind bind", exc, "codegen") from None

    async def main() -> tuple[list[Any], str, str]:
        async with connect(target) as client:
            info = client.server_info
            if not client.peer_has_capability(("tools",)):
                raise CliFailure("the server declares no tools capability", EXIT_TOOL_ERROR)
            tools = [wire(tool) async for tool in client.iter_tools()]
            return tools, info.name if info else "server", info.version if info else ""

    tools, name, version = run_async(main, target)
    try:
        text = generate_bindings(
            tools, server_name=name, server_version=version, class_name=class_name
        )
    except BindError as exc:
        raise CliFailure(f"cannot bind {name}: {exc}", EXIT_TOOL_ERROR) from None
    if check:
        current = out.read_bytes() if out.exists() else None
        if current != text.encode("utf-8"):
            raise CliFailure(
                f"{out} is out of date; run mcpbind bind without --check", EXIT_TOOL_ERROR
            )
        echo(f"{out} is up to date ({counted(len(tools), 'tool')})", err=True)
        return
    changed = write_if_changed(out, text)
    state = "wrote" if changed else "unchanged:"
    echo(f"{state} {out} ({counted(len(tools), 'tool')} of {name})", err=True)
