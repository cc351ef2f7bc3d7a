"""The SERVER argument shared by ls, call, read, prompt and bind: how to reach one server.

A SERVER is parsed as ``Client("...")`` parses it (:mod:`mcpbind.transports.launch`): an
``http://`` or ``https://`` URL (Streamable HTTP, from the ``http`` extra, imported only then,
with ``--header`` on every request), a ``.py`` file (run with this interpreter) or a ``.js``
file (run with ``node``), or a command line that starts a stdio server, split like a shell
would (``"python -m examples.notes_server"``). ``--protocol-version`` pins a version or an era
(default ``auto``: negotiate). The spawned server sees only the few inherited
variables of :data:`mcpbind.transports.INHERITED_ENV` plus ``--env``, so secrets in this
shell do not leak into it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..launch import ServerLocation, open_server, parse_server
from ..versions import ALL_VERSIONS, AUTO, ERAS, pinned_version
from .auth_options import AuthSettings, auth_options
from .errors import EXIT_USAGE, CliFailure, missing_dependency, translate
from .output import echo

if TYPE_CHECKING:
    from ..client import Client
    from ..transports.stdio.spawn import StartedProcess

__all__ = [
    "ServerTarget",
    "connect",
    "protocol_version_option",
    "run_async",
    "server_options",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ServerTarget:
    """One server to reach: a URL, or an argv to spawn with its extra environment."""

    spec: str
    argv: tuple[str, ...] = ()
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    timeout: float | None = 60.0
    verbose: bool = False
    #: The version to pin (``None``: negotiate, ``--protocol-version auto``).
    protocol_version: str | None = None
    auth: AuthSettings = field(default_factory=AuthSettings)
    #: The server process, once :meth:`start` started it (taken over by :func:`connect`).
    started: list[StartedProcess] = field(default_factory=list, compare=False, repr=False)

    def start(self) -> None:
        """Start a stdio server now, before the event loop and the client are imported: it
        starts while this process imports them (issue 15, cold start)."""
        if self.url is None and self.argv and not self.started:
            from ..transports.stdio.spawn import start_process  # not anyio: not yet
            from .prestart import take

            started = take(self.spec, self.env, self.cwd)  # before click: `ls SERVER`
            if started is None:
                command, *args = self.argv
                started = start_process(command, args, env=self.env, cwd=self.cwd)
            self.started.append(started)

    @classmethod
    def parse(
        cls,
        spec: str,
        *,
        env: tuple[str, ...] = (),
        headers: tuple[str, ...] = (),
        cwd: str | None = None,
        timeout: float | None = 60.0,
        verbose: bool = False,
        protocol_version: str | None = None,
    ) -> ServerTarget:
        """Validate SERVER, ``--env`` and ``--header`` values; raise
        :class:`click.BadParameter` if bad."""
        variables: dict[str, str] = {}
        for item in env:
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="--env")
            variables[name] = value
        fields: dict[str, str] = {}
        for item in headers:
            name, sep, value = item.partition(":")
            if not sep or not name.strip() or any(c.isspace() for c in name.strip()):
                raise click.BadParameter(
                    f"expected 'Name: value', got {item!r}", param_hint="--header"
                )
            fields[name.strip()] = value.strip()
        if timeout is not None and timeout <= 0:
            timeout = None
        try:
            pinned = pinned_version(protocol_version)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--protocol-version") from None
        try:
            location = parse_server(spec)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="SERVER") from None
        if location.url is None and fields:
            raise CliFailure(
                "--header applies to http(s) URLs only, not to stdio servers", EXIT_USAGE
            )
        if location.url is not None and variables:
            raise CliFailure("--env applies to stdio servers only, not to URLs", EXIT_USAGE)
        return cls(
            spec,
            argv=location.argv,
            url=location.url,
            env=variables,
            headers=fields,
            cwd=cwd,
            timeout=timeout,
            verbose=verbose,
            protocol_version=pinned,
        )


def protocol_version_option(command: Callable[..., T]) -> Callable[..., T]:
    """``--protocol-version``: a version, an era, or ``auto`` (the default: negotiate)."""
    return click.option(
        "--protocol-version",
        metavar="VERSION",
        default=AUTO,
        show_default=True,
        help="Pin the protocol version: one of "
        + ", ".join((*ERAS, *ALL_VERSIONS))
        + " (auto: the newest both sides speak).",
    )(command)


def server_options(command: Callable[..., T]) -> Callable[..., T]:
    """SERVER plus ``--env``, ``--cwd``, ``--timeout`` and ``--verbose``, parsed into a
    :class:`ServerTarget` passed as ``target``."""

    @click.argument("server", metavar="SERVER")
    @click.option(
        "--env",
        "-e",
        "env",
        multiple=True,
        metavar="NAME=VALUE",
        help="Environment variable for a stdio server (repeatable).",
    )
    @click.option(
        "--header",
        "-H",
        "headers",
        multiple=True,
        metavar="'NAME: VALUE'",
        help="HTTP header sent with every request to an http(s) SERVER (repeatable).",
    )
    @click.option(
        "--cwd",
        type=click.Path(exists=True, file_okay=False),
        default=None,
        help="Working directory of a stdio server (default: this one).",
    )
    @click.option(
        "--timeout",
        type=float,
        default=60.0,
        show_default=True,
        help="Seconds to wait for each answer (0: no limit).",
    )
    @click.option(
        "--verbose",
        "-v",
        is_flag=True,
        help="Show the server's log messages of every level (not only warnings and worse), "
        "and echo a stdio server's stderr.",
    )
    @protocol_version_option
    @auth_options
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        target = ServerTarget.parse(
            kwargs.pop("server"),
            env=tuple(kwargs.pop("env")),
            headers=tuple(kwargs.pop("headers")),
            cwd=kwargs.pop("cwd"),
            timeout=kwargs.pop("timeout"),
            verbose=kwargs.pop("verbose"),
            protocol_version=kwargs.pop("protocol_version"),
        )
        kwargs["target"] = dataclasses.replace(target, auth=kwargs.pop("auth_settings"))
        return command(*args, **kwargs)

    return wrapper


@contextlib.asynccontextmanager
async def connect(target: ServerTarget, **client_options: Any) -> AsyncIterator[Client]:
    """A connected, initialized :class:`mcpbind.Client` for ``target``, answering and showing
    what the server sends first as :mod:`.handlers` says.

    The server is spawned first and the client imported after: the server starts while this
    process imports (issue 15, cold start)."""
    options: dict[str, Any] = {"name": "mcpbind-cli", "timeout": target.timeout, **client_options}
    if target.protocol_version is not None:
        options["protocol_version"] = target.protocol_version
    if target.url is not None:
        try:
            import mcpbind.http.client  # noqa: F401  (open_server(url) uses it)
        except ImportError as exc:
            raise missing_dependency("an http(s) SERVER", exc, "http") from None
        try:
            auth = target.auth.build()
        except ImportError as exc:
            raise missing_dependency("--auth", exc, "auth") from None
        if auth is not None:
            options["auth"] = auth
            if target.timeout is not None:  # a person authorizes in between
                options["timeout"] = max(target.timeout, 300.0)
    elif target.auth.wanted:
        raise CliFailure("--auth and --client-credentials apply to URLs only", EXIT_USAGE)
    async with open_server(
        ServerLocation(target.spec, url=target.url, argv=target.argv),
        env=target.env,
        cwd=target.cwd,
        on_stderr=_echo_stderr if target.verbose else None,
        headers=target.headers,
        auth=options.get("auth"),
        started=target.started.pop() if target.started else None,
    ) as transport:
        from ..client import Client
        from .client_handlers import cli_handlers, set_log_level

        options.setdefault("handlers", cli_handlers(target.verbose))
        async with Client(transport, **options) as client:
            await set_log_level(client, target.verbose)
            yield client


def _echo_stderr(line: str) -> None:
    echo(f"[server] {line.rstrip()}", err=True)


def run_async(main: Callable[[], Awaitable[T]], target: ServerTarget | None = None) -> T:
    """Run ``main`` on an event loop; errors become exit codes (:mod:`.errors`). ``target``
    (the server ``main`` connects to) is started first, before asyncio is imported.

    Plain ``asyncio.run`` (mcpbind runs on asyncio only): anyio loads its asyncio backend on
    first use, after the server is spawned, instead of before it as ``anyio.run`` would."""

    async def guarded() -> T:
        return await main()

    try:
        if target is not None:
            target.start()
        import asyncio  # after the server was started

        return asyncio.run(guarded())
    except BaseException as exc:  # every path re-raises: mapped, or as it was
        translate(exc)
    finally:
        while target is not None and target.started:  # never taken over: not left running
            target.started.pop().discard()
