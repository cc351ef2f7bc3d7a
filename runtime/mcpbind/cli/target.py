"""The SERVER argument shared by ls, call, read, prompt and bind: how to reach one server.

A SERVER is an ``http://`` or ``https://`` URL (Streamable HTTP, from the ``http`` extra,
imported only then) or a command line that starts a stdio server, split like a shell would
(``"python -m examples.notes_server"``). The spawned server sees only the few inherited
variables of :data:`mcpbind.transports.INHERITED_ENV` plus ``--env``, so secrets in this
shell do not leak into it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import click

from .auth_options import AuthSettings, auth_options
from .errors import EXIT_USAGE, CliFailure, missing_dependency, translate

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["ServerTarget", "connect", "run_async", "server_options"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ServerTarget:
    """One server to reach: a URL, or an argv to spawn with its extra environment."""

    spec: str
    argv: tuple[str, ...] = ()
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    timeout: float | None = 60.0
    verbose: bool = False
    auth: AuthSettings = field(default_factory=AuthSettings)

    @classmethod
    def parse(
        cls,
        spec: str,
        *,
        env: tuple[str, ...] = (),
        cwd: str | None = None,
        timeout: float | None = 60.0,
        verbose: bool = False,
    ) -> ServerTarget:
        """Validate SERVER and ``--env`` values; raise :class:`click.BadParameter` if bad."""
        variables: dict[str, str] = {}
        for item in env:
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="--env")
            variables[name] = value
        if timeout is not None and timeout <= 0:
            timeout = None
        if spec.startswith(("http://", "https://")):
            return cls(spec, url=spec, env=variables, cwd=cwd, timeout=timeout, verbose=verbose)
        try:
            argv = tuple(shlex.split(spec))
        except ValueError as exc:
            raise click.BadParameter(f"cannot split {spec!r}: {exc}", param_hint="SERVER") from None
        if not argv:
            raise click.BadParameter("empty command line", param_hint="SERVER")
        return cls(spec, argv=argv, env=variables, cwd=cwd, timeout=timeout, verbose=verbose)


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
        "--verbose", "-v", is_flag=True, help="Echo a stdio server's stderr to this stderr."
    )
    @auth_options
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        target = ServerTarget.parse(
            kwargs.pop("server"),
            env=tuple(kwargs.pop("env")),
            cwd=kwargs.pop("cwd"),
            timeout=kwargs.pop("timeout"),
            verbose=kwargs.pop("verbose"),
        )
        kwargs["target"] = dataclasses.replace(target, auth=kwargs.pop("auth_settings"))
        return command(*args, **kwargs)

    return wrapper


@contextlib.asynccontextmanager
async def connect(target: ServerTarget, **client_options: Any) -> AsyncIterator[Client]:
    """A connected, initialized :class:`mcpbind.Client` for ``target``."""
    from ..client import Client

    options: dict[str, Any] = {"name": "mcpbind-cli", "timeout": target.timeout, **client_options}
    if target.url is not None:
        if target.env:
            raise CliFailure("--env applies to stdio servers only, not to URLs", EXIT_USAGE)
        try:
            from ..transports.http import connect_http
        except ImportError as exc:
            raise missing_dependency("an http(s) SERVER", exc, "http") from None
        try:
            auth = target.auth.build()
        except ImportError as exc:
            raise missing_dependency("--auth", exc, "auth") from None
        if auth is not None and target.timeout is not None:
            options["timeout"] = max(target.timeout, 300.0)  # a person authorizes in between
        server: Any = target.url
        if target.auth.headers:
            server = connect_http(target.url, headers=target.auth.headers, auth=auth)
        async with Client(server, auth=auth, **options) as client:
            yield client
        return
    if target.auth.wanted or target.auth.headers:
        raise CliFailure("--auth, --client-credentials and --header apply to URLs only", EXIT_USAGE)
    from ..transports import StdioClientTransport

    on_stderr = _echo_stderr if target.verbose else None
    command, *args = target.argv
    async with (
        StdioClientTransport.spawn(
            command, args, env=target.env, cwd=target.cwd, on_stderr=on_stderr
        ) as transport,
        Client(transport, **options) as client,
    ):
        yield client


def _echo_stderr(line: str) -> None:
    click.echo(f"[server] {line.rstrip()}", err=True)


def run_async(main: Callable[[], Awaitable[T]]) -> T:
    """Run ``main`` on an event loop; errors become exit codes (:mod:`.errors`)."""

    async def guarded() -> T:
        return await main()

    try:
        return anyio.run(guarded)
    except BaseException as exc:  # every path re-raises: mapped, or as it was
        translate(exc)
