"""``mcpbind host --config FILE``: an interactive host over several servers in the terminal.

It starts with a summary (the catalog is one command away), calls tools by their host names
(with a progress bar when the server reports progress), asks the user (y/n) before the calls
the approval policy says to ask about, and shows sampling requests for approval (you play the
model: you type the reply) and elicitation forms that follow the requested schema
(:mod:`.host_form`); line editing, history and completion are :mod:`.host_terminal`'s.
``--run`` executes commands and exits, for scripts (exit status 1 when a command failed: an
error, a denial, a tool error or a command cancelled with Ctrl-C); ``--yes``/``--no`` answer
every tool-call question. Ctrl-C while a command runs cancels it (in the shell and with
``--run`` alike); before the servers are up it exits with 130.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shlex
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

import anyio
import click
import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import RequestOptions

from ..host import (
    AmbiguousResource,
    ConfigError,
    Host,
    HostConfig,
    HostEvent,
    SamplingReview,
    ToolCallRequest,
    UnknownName,
    decide,
    load_config,
)
from ..protocol import McpError
from ..versions import pinned_version
from .errors import (
    EXIT_CONNECTION,
    EXIT_INTERRUPTED,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    CliFailure,
    missing_dependency,
)
from .host_form import OMIT, fields_of, parse_answer
from .host_inputs import input_asker
from .host_tasks import TaskCommands, requires_task
from .host_terminal import Terminal
from .output import echo, quiet_library_logs
from .progress import ProgressBar
from .render import (
    call_result_lines,
    counted,
    prompt_lines,
    resource_contents_lines,
    tool_signature,
)
from .target import protocol_version_option

__all__ = ["HELP", "host"]

_STDERR_LINES = 20  # of a failing server's stderr, shown once per cause

COMMANDS = (
    *("tools", "resources", "prompts", "servers", "call", "read", "prompt", "restart"),
    *("start", "tasks", "cancel", "result", "audit", "catalog", "help", "quit"),
)

HELP = """\
commands (Tab completes commands and names; Up/Down and Ctrl-R search the history):
  tools | resources | prompts | servers   show the catalog / server states
  call NAME [JSON]                        call a tool by its host name (one that requires
                                          a task runs as one, its status shown)
  start NAME [JSON]                       run a tool as a task in the background
  tasks                                   the tasks started here, with their status
  cancel TASK_ID | result TASK_ID         cancel a running task | wait for its result
  read URI [SERVER]                       read a resource
  prompt NAME [JSON]                      get a prompt by its host name
  restart SERVER                          restart one server
  audit                                   approval decisions so far
  help | quit"""


class _Shell:
    """The commands and the hooks; the host is attached once it is running."""

    def __init__(self, term: Terminal) -> None:
        self.term = term
        self._host: Host | None = None
        self._tasks: TaskCommands | None = None
        self.failures = 0
        self._running: anyio.CancelScope | None = None  # the command Ctrl-C cancels

    def attach(self, host: Host) -> None:
        """The host is running: the commands and the hooks act on it from now on."""
        self._host = host

    @property
    def host(self) -> Host:
        assert self._host is not None, "the host is not running yet"
        return self._host

    @property
    def tasks(self) -> TaskCommands:
        if self._tasks is None:
            self._tasks = TaskCommands(self.host, self.term)
        return self._tasks

    # ------------------------------------------------------------------ hooks
    async def approve(self, request: ToolCallRequest) -> bool:
        args = json.dumps(request.arguments or {}, ensure_ascii=False)
        self.term.say(f"? {request.host_name} (server {request.server!r}) wants to run with {args}")
        self.term.say(f"  why asked: {request.reason}")
        return await self.term.confirm("  Allow this call?")

    async def review_sampling(
        self, server: str, params: t.CreateMessageRequestParams
    ) -> SamplingReview:
        self.term.say(f"? server {server!r} asks the model (sampling/createMessage):")
        if isinstance(params.system_prompt, str):
            self.term.say(f"  system: {params.system_prompt}")
        for message in params.messages:
            self.term.say(f"  {message.role}: {_text(message.content)}")
        reply = await self.term.ask("  Send it? [y]es / [e]dit / [N]o: ")
        choice = (reply or "").strip().lower()
        if choice in ("e", "edit"):
            text = await self.term.ask("  New text for the last message: ")
            if text is None:
                return SamplingReview.deny("no edit given")
            edited = msgspec.structs.replace(params, messages=list(params.messages))
            last = edited.messages[-1]
            edited.messages[-1] = t.SamplingMessage(
                role=last.role, content=t.TextContent(text=text)
            )
            return SamplingReview.edit(edited, "edited at the terminal")
        if choice in ("y", "yes"):
            return SamplingReview.approve()
        return SamplingReview.deny("User rejected sampling request")

    async def sample(
        self, server: str, params: t.CreateMessageRequestParams
    ) -> t.CreateMessageResult:
        text = await self.term.ask("  No model is attached: type the reply for the server: ")
        return t.CreateMessageResult(
            content=t.TextContent(text=text or ""),
            model="human",
            role="assistant",
            stop_reason="endTurn",
        )

    async def elicit(
        self, server: str, params: t.ElicitRequestFormParams | t.ElicitRequestURLParams
    ) -> t.ElicitResult:
        self.term.say(f"? server {server!r} asks you: {params.message}")
        if isinstance(params, t.ElicitRequestURLParams):
            self.term.say(f"  it wants you to open: {params.url}")
            ok = await self.term.confirm("  Open it (accept)?")
            return t.ElicitResult(action="accept" if ok else "decline")
        if not await self.term.confirm("  Answer this form?", default=True):
            return t.ElicitResult(action="decline")
        content: dict[str, Any] = {}
        for item in fields_of(msgspec.to_builtins(params.requested_schema)):
            while True:
                reply = await self.term.ask(item.prompt(), words=item.words())
                if reply is None:
                    return t.ElicitResult(action="cancel")
                value, problem = parse_answer(item, reply)
                if problem is None:
                    break
                self.term.say(f"  {problem}; try again")
            if value is not OMIT:
                content[item.key] = value
        return t.ElicitResult(action="accept", content=content)

    def completions(self, before: str) -> Sequence[str]:
        """Tab completion: a command, then the names it takes (tools for ``call``, ...)."""
        command, space, _ = before.lstrip().partition(" ")
        if not space:
            return COMMANDS
        if self._host is None or " " in before.lstrip()[len(command) + 1 :]:
            return ()
        catalog = self.host.catalog
        names: dict[str, Iterable[str]] = {
            "call": catalog.tools,
            "prompt": catalog.prompts,
            "read": [e.resource.uri for e in catalog.resources],
            "restart": [s.name for s in self.host.servers()],
            "start": catalog.tools,
            "cancel": self.tasks.ids(running=True),
            "result": self.tasks.ids(running=False),
        }
        return sorted(names.get(command.lower(), ()))

    def on_event(self, event: HostEvent) -> None:
        """Problems on stderr, one line each; a failing server's stderr once per cause."""
        if event.kind == "stderr":
            lines = event.message.splitlines()[-_STDERR_LINES:]
            echo(f"[host] server {event.server!r} stderr (last lines):", err=True)
            for line in lines:
                echo(f"    {line}", err=True)
        elif event.kind in ("failed", "disconnected", "retrying", "warning"):
            echo(f"[host] server {event.server!r} {event.kind}: {event.message}", err=True)

    # ------------------------------------------------------------------ display
    def show_catalog(self) -> None:
        self.show_servers()
        self.show_tools()

    def show_summary(self) -> None:
        """What started, in two lines (the catalog itself is one command away)."""
        states = self.host.servers()
        running = [s.name for s in states if s.status == "running"]
        others = [f"{s.name} {s.status}" for s in states if s.status != "running"]
        line = f"{len(running)} of {counted(len(states), 'server')} running"
        line += f" ({', '.join(running)})" if running else ""
        self.term.say(line + (f"; {', '.join(others)}" if others else ""))
        catalog = self.host.catalog
        self.term.say(
            f"{counted(len(catalog.tools), 'tool')}, {counted(len(catalog.resources), 'resource')}, "
            f"{counted(len(catalog.templates), 'resource template')}, "
            f"{counted(len(catalog.prompts), 'prompt')} "
            "(tools, resources, prompts, servers show them)"
        )

    def show_servers(self) -> None:
        """One line per server: state, transport, what it is, and its last error."""
        for state in self.host.servers():
            info = state.server_info
            label = f" ({info.name} {info.version})" if info is not None else ""
            version = f", protocol {state.protocol_version}" if state.protocol_version else ""
            pid = f", pid {state.pid}" if state.pid is not None else ""
            tries = f", {counted(state.attempts, 'failed attempt')}" if state.attempts else ""
            error = f" - last error: {state.error.splitlines()[0]}" if state.error else ""
            self.term.say(
                f"server {state.name}: {state.status}, {state.transport}"
                f"{label}{version}{pid}{tries}{error}"
            )

    def show_tools(self) -> None:
        """One line per tool: host name, arguments, the policy's verdict, first line of help."""
        catalog = self.host.catalog
        self.term.say(f"{counted(len(catalog.tools), 'tool')}:")
        rows = []
        for name, entry in sorted(catalog.tools.items()):
            verdict, _ = decide(self.host.policy(entry.server), entry.tool)
            arguments = tool_signature(entry.tool).partition("(")[2]
            summary = entry.description.strip().splitlines()[0] if entry.description else ""
            rows.append((f"{name}({arguments} [{verdict}]", summary))
        width = min(max((len(left) for left, _ in rows), default=0), 48)
        for left, summary in rows:
            self.term.say(f"  {left:<{width}}  {summary}".rstrip())

    def show_resources(self) -> None:
        for entry in self.host.catalog.resources:
            self.term.say(f"  {entry.resource.uri}  [{entry.server}] {entry.resource.name}")
        for template in self.host.catalog.templates:
            self.term.say(f"  {template.template.uri_template}  [{template.server}] (template)")

    def show_prompts(self) -> None:
        for name, entry in sorted(self.host.catalog.prompts.items()):
            args = entry.prompt.arguments if isinstance(entry.prompt.arguments, list) else []
            names = ", ".join(a.name for a in args)
            self.term.say(f"  {name}({names})  [{entry.server}]")

    # ------------------------------------------------------------------ commands
    def interrupt(self) -> None:
        """Ctrl-C: cancel the running command (a call's request is cancelled on the server
        with ``notifications/cancelled``); with none running, nothing to do."""
        if self._running is not None:
            self._running.cancel()

    async def run_interruptible(self, line: str) -> bool:
        """:meth:`run`, cancelled by :meth:`interrupt`: back to the prompt, not out."""
        with anyio.CancelScope() as scope:
            self._running = scope
            try:
                return await self.run(line)
            finally:
                self._running = None
        if scope.cancelled_caught:
            self.failures += 1
            self.term.say("cancelled (Ctrl-C)")
        return True

    async def run(self, line: str) -> bool:
        """Run one command line; ``False`` means quit. Errors are printed, never raised."""
        words = line.strip().split(None, 1)
        if not words:
            return True
        command, rest = words[0].lower(), (words[1] if len(words) > 1 else "")
        try:
            return await self._dispatch(command, rest)
        except UnknownName as exc:  # the Host's hint names its Python API: name our command
            self.failures += 1
            listing = _LISTINGS.get(exc.what, "help")
            self.term.say(f"error: unknown {exc.what} {exc.name!r}; see {listing}")
        except AmbiguousResource as exc:
            self.failures += 1
            self.term.say(
                f"error: resource {exc.uri!r} is offered by {', '.join(exc.servers)}; "
                f"say which: read {exc.uri} SERVER"
            )
        except McpError as exc:
            self.failures += 1
            self.term.say(f"error [{exc.code}]: {exc.message}")
        except ValueError as exc:
            self.failures += 1
            self.term.say(f"error: {exc}")
        return True

    async def _dispatch(self, command: str, rest: str) -> bool:
        simple: dict[str, Callable[[], None]] = {
            "tools": self.show_tools,
            "catalog": self.show_catalog,
            "resources": self.show_resources,
            "prompts": self.show_prompts,
            "servers": self.show_servers,
            "audit": self.show_audit,
            "help": lambda: self.term.say(HELP),
        }
        if command in ("quit", "exit"):
            return False
        if command in simple:
            if command in ("tools", "resources", "prompts", "catalog"):
                await self.host.refresh()  # refetches only lists past their ttlMs
            simple[command]()
        elif command == "call":
            name, args = _name_and_json(rest)
            bar = ProgressBar(name, enabled=sys.stderr.isatty())
            options = RequestOptions(on_progress=bar.update, reset_timeout_on_progress=True)
            try:
                if requires_task(self.host, name):
                    result = await self.tasks.call(name, args)
                else:
                    result = await self.host.call_tool(name, args, options=options)
            finally:
                bar.close()
            _print(self.term, call_result_lines(result))
            if result.is_error is True:
                self._tool_error(name)
        elif command == "start":
            name, args = _name_and_json(rest)
            answered = await self.tasks.start(name, args)
            if answered is not None and answered.is_error is True:
                self._tool_error(name)
        elif command == "tasks":
            await self.tasks.show()
        elif command in ("cancel", "result"):
            if not rest.strip():
                raise ValueError(f"usage: {command} TASK_ID (see tasks)")
            if command == "cancel":
                await self.tasks.cancel(rest)
            elif (await self.tasks.result(rest)).is_error is True:
                self._tool_error(f"task {rest.strip()}")
        elif command == "read":
            parts = shlex.split(rest)
            if not parts:
                raise ValueError("usage: read URI [SERVER]")
            found = await self.host.read_resource(
                parts[0], server=parts[1] if len(parts) > 1 else None
            )
            _print(self.term, resource_contents_lines(found.contents, header=False))
        elif command == "prompt":
            name, args = _name_and_json(rest)
            prompt = await self.host.get_prompt(
                name, {k: str(v) for k, v in args.items()} if args else None
            )
            _print(self.term, prompt_lines(prompt))
        elif command == "restart":
            await self.host.restart_server(rest.strip())
            self.show_servers()
        else:
            self.term.say(f"unknown command {command!r}; type help")
        return True

    def _tool_error(self, what: str) -> None:
        """An ``isError`` result: marked as one (its text alone may be a bare "Internal
        error"), and counted, so ``-r`` exits 1."""
        self.failures += 1
        self.term.say(f"error: {what} reported an error (isError)")

    def show_audit(self) -> None:
        for entry in self.host.audit:
            self.term.say(
                f"  {entry.kind} {entry.server}/{entry.subject}: {entry.verdict} ({entry.reason})"
            )


@contextlib.contextmanager
def _sigint_calls(handler: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C outside a prompt (a command is running: the terminal sends SIGINT) calls
    ``handler`` instead of ending the shell; at a prompt the line editor reads it as a key."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, handler)
    except (NotImplementedError, RuntimeError, ValueError):  # Windows, not the main thread
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


#: The shell command that lists each kind of name (for "unknown tool ...; see tools").
_LISTINGS = {
    "tool": "tools",
    "prompt": "prompts",
    "resource": "resources",
    "server": "servers",
    "task": "tasks",
}


def _name_and_json(rest: str) -> tuple[str, dict[str, Any] | None]:
    name, _, raw = rest.strip().partition(" ")
    if not name:
        raise ValueError("usage: call NAME [JSON object]")
    if not raw.strip():
        return name, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError('arguments must be a JSON object, e.g. {"query": "x"}')
    return name, value


def _text(content: Any) -> str:
    if isinstance(content, t.TextContent):
        return content.text
    if isinstance(content, list):
        return " ".join(_text(c) for c in content)
    return f"[{getattr(content, 'type', 'content')}]"


def _print(term: Terminal, lines: Iterable[str]) -> None:
    for line in lines:
        term.say(line)


@click.command()
@click.option(
    "--config",
    "-c",
    "config_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="An mcpServers JSON file (the format desktop MCP hosts use).",
)
@click.option(
    "--run",
    "-r",
    "commands",
    multiple=True,
    help="Run this command (repeatable), then exit instead of prompting; Ctrl-C cancels the "
    "running one and the next one runs.",
)
@click.option(
    "--yes", "answer", flag_value=True, default=None, help="Allow every call the policy asks about."
)
@click.option("--no", "answer", flag_value=False, help="Deny every call the policy asks about.")
@click.option(
    "--startup-timeout",
    default=30.0,
    show_default=True,
    help="Seconds to wait for servers to start.",
)
@click.option(
    "--serve",
    "serve_stdio",
    is_flag=True,
    help="Serve the servers as one MCP server (a gateway) over stdio instead of a shell.",
)
@click.option(
    "--serve-http",
    "serve_http",
    metavar="HOST:PORT",
    help="Serve them as one MCP server over Streamable HTTP at http://HOST:PORT/mcp.",
)
@protocol_version_option
def host(
    config_path: str,
    commands: tuple[str, ...],
    answer: bool | None,
    startup_timeout: float,
    serve_stdio: bool,
    serve_http: str | None,
    protocol_version: str,
) -> None:
    """Run an interactive host over the servers of an mcpServers configuration file, or
    serve them as one MCP server (a gateway: --serve, --serve-http).

    \b
    mcpbind host --config examples/mcp_servers.json
    mcpbind host -c servers.json --run tools --run 'call notes__search_notes {"query": "x"}'
    mcpbind host -c servers.json --serve
    mcpbind host -c servers.json --serve-http 127.0.0.1:8000
    """
    address = _gateway_address(serve_stdio, serve_http, commands, answer)
    try:
        # stdin is the protocol's when serving over stdio: nothing can be asked there.
        config = load_config(config_path, ask=None if address == "stdio" else input_asker())
    except ConfigError as exc:
        raise CliFailure(f"invalid configuration: {exc}", EXIT_USAGE) from None
    try:
        pinned_version(protocol_version)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--protocol-version") from None
    for server in config.mcp_servers.values():  # a server's own protocolVersion wins
        if server.protocol_version is None:
            server.protocol_version = protocol_version
    if address is not None:
        _serve_gateway(config, address, startup_timeout)
        return
    # Host events are shown by the shell (on_event): keep the CLI's log handler and Python's
    # last-resort one from printing each one a second time.
    logging.getLogger("mcpbind.host").addHandler(logging.NullHandler())
    quiet_library_logs("mcpbind.host")

    async def main() -> int:
        term = Terminal(answer)
        shell = _Shell(term)
        term.complete = shell.completions
        async with Host(
            config,
            approve=shell.approve,
            review_sampling=shell.review_sampling,
            sampler=shell.sample,
            elicit=shell.elicit,
            on_event=shell.on_event,
            startup_timeout=startup_timeout,
        ) as running:
            shell.attach(running)
            shell.show_summary()
            if not any(state.status == "running" for state in running.servers()):
                shell.show_servers()  # each one's state and last error
                term.say("no server is running")
                return EXIT_CONNECTION
            term.interrupt = shell.interrupt
            if commands:  # as if typed: Ctrl-C cancels the running one, and the run goes on
                with _sigint_calls(shell.interrupt):
                    for command in commands:
                        term.say(f"mcpbind> {command}")
                        if not await shell.run_interruptible(command):
                            break
                return EXIT_TOOL_ERROR if shell.failures else 0
            term.say("type help for commands (Ctrl-C cancels a call, Ctrl-D or quit leaves)")
            with _sigint_calls(shell.interrupt):
                while True:
                    typed = await term.ask("mcpbind> ", command=True)
                    if typed is None or not await shell.run_interruptible(typed):
                        return 0

    try:
        code = anyio.run(main)
    except KeyboardInterrupt:  # Ctrl-C: the servers were shut down on the way out
        echo("interrupted", err=True)
        code = EXIT_INTERRUPTED
    if code:
        sys.exit(code)


def _gateway_address(
    stdio: bool, http: str | None, commands: tuple[str, ...], answer: bool | None
) -> tuple[str, int] | Literal["stdio"] | None:
    """Where to serve the gateway (``None``: run the shell); a usage error for options that
    do not go together."""
    if not stdio and http is None:
        return None
    if stdio and http is not None:
        raise click.UsageError("--serve and --serve-http: choose one")
    if commands or answer is not None:
        raise click.UsageError(
            "--run, --yes and --no are for the shell; the gateway asks its client"
        )
    if http is None:
        return "stdio"
    where, sep, port = http.rpartition(":")
    if not sep or not where or not port.isdigit() or int(port) > 65535:
        raise click.BadParameter(
            f"expected HOST:PORT, such as 127.0.0.1:8000, not {http!r}", param_hint="--serve-http"
        )
    return where.strip("[]"), int(port)


def _serve_gateway(
    config: HostConfig, address: tuple[str, int] | Literal["stdio"], startup_timeout: float
) -> None:
    """Serve the configured servers as one MCP server until the client goes (stdio) or the
    process is interrupted (HTTP); the host runs as the server's lifespan."""
    from ..server.session import serve_stdio

    server = Host(config, startup_timeout=startup_timeout).as_server(run_host=True)
    if isinstance(address, str):  # "stdio"
        serve_stdio(server)
        return
    try:
        from ..http import serve_http
    except ImportError as exc:
        raise missing_dependency("--serve-http", exc, "http") from None
    where, port = address
    try:
        serve_http(server, host=where, port=port)
    except OSError as exc:
        raise CliFailure(
            f"cannot serve on {where}:{port}: {exc.strerror or exc}", EXIT_CONNECTION
        ) from None
