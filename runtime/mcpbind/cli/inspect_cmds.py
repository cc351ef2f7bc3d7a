"""``ls``, ``call``, ``read`` and ``prompt``: one request (or one catalog) against one server.

Each connects (see :mod:`.target`), runs the handshake, does its one job and shuts the server
down. Errors leave with the exit codes of :mod:`.errors`.

Only what parsing the command line and starting the server need is imported with this module:
the types, the renderers and the client come after the server process is spawned, so they are
imported while the server starts (issue 15, cold start of ``mcpbind ls``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import click

from .errors import EXIT_TOOL_ERROR, CliFailure
from .output import echo, echo_json
from .progress import ProgressBar
from .target import ServerTarget, connect, run_async, server_options

if TYPE_CHECKING:
    from mcpbind_types import unified as t

__all__ = ["call", "ls", "parse_json_object", "prompt", "read"]


def parse_json_object(text: str | None, option: str = "--args") -> dict[str, Any]:
    """``--args``: a JSON object given inline or as ``@FILE``; anything else is a usage error."""
    if text is None:
        return {}
    import json  # here, not at import: ls never needs it (issue 15, cold start)
    from pathlib import Path

    source = text
    if text.startswith("@"):
        try:
            source = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise click.BadParameter(
                f"cannot read {text[1:]!r}: {exc}", param_hint=option
            ) from None
    try:
        value = json.loads(source)
    except ValueError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}", param_hint=option) from None
    if not isinstance(value, dict):
        raise click.BadParameter(
            f'expected a JSON object like \'{{"name": "value"}}\', got {type(value).__name__}',
            param_hint=option,
        )
    return value


def _show(value: Any, as_json: bool, lines: Iterable[str], *, err: bool = False) -> None:
    """Print a result as JSON (its wire form) or as ``lines``, its human-readable form (a
    generator, so the form not printed is never rendered)."""
    if as_json:
        from .render import pretty_json, wire

        echo_json(pretty_json(wire(value)))
        return
    for line in lines:
        echo(line, err=err)


_json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print the result as JSON (the wire form)."
)


# ---------------------------------------------------------------------------------------- ls
@click.command()
@server_options
@_json_option
def ls(target: ServerTarget, as_json: bool) -> None:
    """List SERVER's tools, resources, resource templates and prompts.

    \b
    mcpbind ls "python -m examples.notes_server"
    mcpbind ls http://127.0.0.1:8000/mcp --json
    """

    async def main() -> dict[str, Any]:
        catalog: dict[str, Any] = {}
        async with connect(target) as client:
            from .render import wire

            info = client.server_info
            catalog["serverInfo"] = wire(info) if info is not None else None
            catalog["protocolVersion"] = client.protocol_version
            if client.instructions:
                catalog["instructions"] = client.instructions
            if client.peer_has_capability(("tools",)):
                catalog["tools"] = [tool async for tool in client.iter_tools()]
            if client.peer_has_capability(("resources",)):
                catalog["resources"] = [r async for r in client.iter_resources()]
                catalog["resourceTemplates"] = [r async for r in client.iter_resource_templates()]
            if client.peer_has_capability(("prompts",)):
                catalog["prompts"] = [p async for p in client.iter_prompts()]
        return catalog

    catalog = run_async(main, target)
    _show(catalog, as_json, _catalog_lines(catalog))


def _described(name: str, description: object, width: int) -> str:
    text = description if isinstance(description, str) else ""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return f"  {name:<{width}}  {first}".rstrip()


def _catalog_lines(catalog: dict[str, Any]) -> Any:
    from .render import tool_signature

    info = catalog.get("serverInfo") or {}
    name = str(info.get("name", "?"))
    title = info.get("title")
    shown = f"{title} ({name})" if isinstance(title, str) and title != name else name
    yield f"{shown} {info.get('version', '?')}, protocol {catalog['protocolVersion']}"
    sections: list[tuple[str, list[tuple[str, object]]]] = []
    if "tools" in catalog:
        tools: list[t.Tool] = catalog["tools"]
        sections.append(("Tools", [(tool_signature(x, types=True), _tool_note(x)) for x in tools]))
    if "resources" in catalog:
        resources: list[t.Resource] = catalog["resources"]
        sections.append(("Resources", [(r.uri, _resource_note(r)) for r in resources]))
        templates: list[t.ResourceTemplate] = catalog["resourceTemplates"]
        sections.append(
            ("Resource templates", [(r.uri_template, _resource_note(r)) for r in templates])
        )
    if "prompts" in catalog:
        prompts: list[t.Prompt] = catalog["prompts"]
        sections.append(("Prompts", [(_prompt_signature(p), p.description) for p in prompts]))
    for title, rows in sections:
        yield ""
        yield f"{title} ({len(rows)}):"
        width = min(max((len(n) for n, _ in rows), default=0), 40)
        for row_name, description in rows:
            yield _described(row_name, description, width)


def _tool_note(tool: t.Tool) -> str:
    from .render import task_support

    description = tool.description if isinstance(tool.description, str) else ""
    first = description.strip().splitlines()[0] if description.strip() else ""
    support = task_support(tool)
    tasks = f"[tasks: {support}]" if support is not None else ""
    return f"{first} {tasks}".strip()


def _resource_note(resource: t.Resource | t.ResourceTemplate) -> str:
    title = resource.title if isinstance(resource.title, str) else resource.name
    description = resource.description if isinstance(resource.description, str) else ""
    mime = f" [{resource.mime_type}]" if isinstance(resource.mime_type, str) else ""
    first = description.strip().splitlines()[0] if description.strip() else ""
    return f"{title}{mime}" + (f": {first}" if first and first != title else "")


def _prompt_signature(prompt: t.Prompt) -> str:
    arguments = prompt.arguments if isinstance(prompt.arguments, list) else []
    names = ", ".join(a.name if a.required is True else f"{a.name}?" for a in arguments)
    return f"{prompt.name}({names})"


# -------------------------------------------------------------------------------------- call
@click.command()
@server_options
@click.argument("tool")
@click.option(
    "--args",
    "-a",
    "arguments",
    metavar="JSON",
    default=None,
    help="The tool's arguments as a JSON object, or @FILE to read them from a file.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a progress bar on stderr (default: when stderr is a terminal).",
)
@click.option(
    "--task",
    "as_task",
    is_flag=True,
    help="Run the tool as a task (a tool that requires one always runs as a task).",
)
@_json_option
def call(
    target: ServerTarget,
    tool: str,
    arguments: str | None,
    progress: bool | None,
    as_task: bool,
    as_json: bool,
) -> None:
    """Call TOOL on SERVER and print its result.

    Long calls that report progress show a progress bar; each progress notification also
    resets the --timeout clock. A tool run as a task shows its status changes; Ctrl-C
    cancels the task. A result with isError exits 1.

    \b
    mcpbind call "python -m examples.notes_server" slow_count --args '{"to": 20}'
    """
    args = parse_json_object(arguments)
    show = sys.stderr.isatty() if progress is None else progress
    bar = ProgressBar(tool, enabled=show)

    async def main() -> t.CallToolResult:
        async with connect(target) as client:
            from mcpbind_types._common import RequestOptions

            from .task_call import needs_task, run_as_task

            options = RequestOptions(on_progress=bar.update, reset_timeout_on_progress=True)
            if as_task or await needs_task(client, tool):
                return await run_as_task(client, tool, args, show=progress is not False)
            try:
                result: t.CallToolResult = await client.call(tool, args, options=options)
            finally:
                bar.close()
            return result

    result = run_async(main, target)
    from .render import call_result_lines

    is_error = result.is_error is True
    _show(result, as_json, call_result_lines(result), err=is_error)
    if is_error:
        raise CliFailure(f"tool {tool!r} reported an error", EXIT_TOOL_ERROR)


# -------------------------------------------------------------------------------------- read
@click.command()
@server_options
@click.argument("uri")
@click.option(
    "--out",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write the (first) contents to this file, decoding a blob to its bytes.",
)
@_json_option
def read(target: ServerTarget, uri: str, out: str | None, as_json: bool) -> None:
    """Read the resource URI from SERVER; binary contents are summarised unless --out.

    \b
    mcpbind read "python -m examples.notes_server" notes://index
    """

    async def main() -> t.ReadResourceResult:
        async with connect(target) as client:
            from mcpbind_types.unified import ReadResourceRequestParams

            result: t.ReadResourceResult = await client.read_resource(
                ReadResourceRequestParams(uri=uri)
            )
            return result

    result = run_async(main, target)
    from mcpbind_types.unified import TextResourceContents

    from .render import resource_contents_lines

    if out is not None:
        import base64
        from pathlib import Path

        if not result.contents:
            raise CliFailure(f"{uri} has no contents to write", EXIT_TOOL_ERROR)
        first = result.contents[0]
        data = (
            first.text.encode("utf-8")
            if isinstance(first, TextResourceContents)
            else base64.b64decode(first.blob)
        )
        Path(out).write_bytes(data)
        echo(f"wrote {len(data)} bytes to {out}", err=True)
    else:
        many = len(result.contents) > 1
        _show(result, as_json, resource_contents_lines(result.contents, header=many))


# ------------------------------------------------------------------------------------ prompt
@click.command()
@server_options
@click.argument("name")
@click.option(
    "--args",
    "-a",
    "arguments",
    metavar="JSON",
    default=None,
    help="The prompt's arguments as a JSON object of strings, or @FILE.",
)
@_json_option
def prompt(target: ServerTarget, name: str, arguments: str | None, as_json: bool) -> None:
    """Get the prompt NAME from SERVER and print its messages.

    \b
    mcpbind prompt "python -m examples.notes_server" summarize_notes --args '{"tag": "example"}'
    """
    args = parse_json_object(arguments)
    bad = sorted(key for key, value in args.items() if not isinstance(value, str))
    if bad:
        raise click.BadParameter(
            f"prompt arguments are strings; not a string: {', '.join(bad)}", param_hint="--args"
        )

    async def main() -> t.GetPromptResult:
        async with connect(target) as client:
            from mcpbind_types.unified import GetPromptRequestParams

            params = GetPromptRequestParams(name=name)
            if args:
                params.arguments = args
            result: t.GetPromptResult = await client.get_prompt(params)
            return result

    result = run_async(main, target)
    from .render import prompt_lines

    _show(result, as_json, prompt_lines(result))
