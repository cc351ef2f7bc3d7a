"""``mcpbind serve FILE.py[:ATTR]`` or ``MODULE[:ATTR]``: run a server written with mcpbind,
over stdio or HTTP.

APP is a Python file (loaded as a script would be, its folder importable, its
``if __name__ == "__main__"`` block not run) or a module name (the current directory is
importable, as with ``python -m``). ATTR names a :class:`mcpbind.Server`, or a callable that
takes no arguments and returns one (a factory such as ``create_server``); without ``:ATTR``
the one ``Server`` the module defines at top level is used (``server`` when there are
several; ``create_server()`` when there is none).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

import click

from ..server.app import Server
from .errors import EXIT_CONNECTION, EXIT_USAGE, CliFailure, missing_dependency
from .http_options import endpoint_path, http_options

__all__ = ["load_server", "serve"]


def load_server(spec: str) -> Server:
    """Load ``FILE.py[:attr]`` or ``module[:attr]`` and return the :class:`Server` it names
    (or builds)."""
    source, attr = _split(spec)
    module = _load_file(source) if source.endswith(".py") else _import(source)
    if attr is None:
        return _only_server(module, source)
    try:
        value: Any = module
        for part in attr.split("."):
            value = getattr(value, part)
    except AttributeError:
        raise click.BadParameter(
            f"{source!r} has no attribute {attr!r}", param_hint="APP"
        ) from None
    if not isinstance(value, Server) and callable(value):
        value = value()
    if not isinstance(value, Server):
        raise click.BadParameter(
            f"{spec} is a {type(value).__name__}, not an mcpbind Server (or a factory of one)",
            param_hint="APP",
        )
    return value


def _split(spec: str) -> tuple[str, str | None]:
    """``path/to/app.py:server`` -> (``path/to/app.py``, ``server``); a Windows drive's colon
    is part of the path."""
    source, sep, attr = spec.rpartition(":")
    named = all(part.isidentifier() for part in attr.split("."))
    if not sep or not named or os.path.exists(spec):
        source, attr = spec, ""
    if not source:
        raise click.BadParameter("expected FILE.py[:ATTR] or MODULE[:ATTR]", param_hint="APP")
    return source, attr or None


def _load_file(path: str) -> ModuleType:
    if not os.path.isfile(path):
        raise click.BadParameter(f"no such file: {path}", param_hint="APP")
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as `python path/to/app.py` would
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise click.BadParameter(f"cannot load {path}", param_hint="APP")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _import(name: str) -> ModuleType:
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise click.BadParameter(f"cannot import {name!r}: {exc}", param_hint="APP") from None


def _only_server(module: ModuleType, source: str) -> Server:
    """The one ``Server`` defined at the top of ``module``; ``server`` among several; else
    what its ``create_server()`` returns."""
    found = {name: value for name, value in vars(module).items() if isinstance(value, Server)}
    if len(found) == 1:
        return next(iter(found.values()))
    if "server" in found:
        return found["server"]
    factory = getattr(module, "create_server", None)
    if not found and callable(factory) and isinstance(server := factory(), Server):
        return server
    if found:
        names = ", ".join(sorted(found))
        raise click.BadParameter(
            f"{source} defines several Servers ({names}): add :NAME", param_hint="APP"
        )
    raise click.BadParameter(
        f"{source} defines no mcpbind Server at top level; name a factory with {source}:NAME",
        param_hint="APP",
    )


@click.command()
@click.argument("app", metavar="FILE.py[:ATTR] | MODULE[:ATTR]")
@http_options("Serve Streamable HTTP on this port instead of stdio.")
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes sharing the --http port (more than one needs --redis).",
)
@click.option(
    "--redis",
    "redis",
    metavar="URL",
    default=None,
    help="Share sessions, resumable streams and change notifications among workers through "
    "this Redis (default: $MCPBIND_REDIS_URL; none: one process, in memory).",
)
@click.option(
    "--advertise-host",
    default=None,
    help="The address other workers reach this machine's workers at (default: --host, or "
    "127.0.0.1 for 0.0.0.0).",
)
@click.option(
    "--trusted-proxy",
    "trusted_proxies",
    multiple=True,
    metavar="ADDRESS",
    help="A reverse proxy (address or network) whose X-Forwarded-For names the client; repeatable.",
)
@click.option(
    "--debug",
    is_flag=True,
    help="Send a failing handler's exception text to the client (Server(debug=True)). "
    "Tracebacks are logged on stderr either way. For development only.",
)
def serve(
    app: str,
    port: int | None,
    host: str,
    path: str,
    workers: int,
    redis: str | None,
    advertise_host: str | None,
    trusted_proxies: tuple[str, ...],
    debug: bool,
) -> None:
    """Serve the mcpbind Server in APP (a file or a module) over stdio, or over HTTP with
    --http PORT. A handler's uncaught exception is logged with its traceback on stderr.

    \b
    mcpbind serve examples/notes_server.py
    mcpbind serve examples.notes_server:server
    mcpbind serve examples.files_server:create_server --http 8000
    mcpbind serve examples/notes_server.py --http 8000 --workers 4 --redis redis://127.0.0.1:6379/0
    """
    if port is None and (workers > 1 or redis or trusted_proxies):
        raise CliFailure("--workers, --redis and --trusted-proxy need --http PORT", EXIT_USAGE)
    server = load_server(app)
    if debug:
        server.debug = True
    if port is None:
        from ..server.session import serve_stdio

        serve_stdio(server)
        return
    endpoint_path(path)
    try:
        from mcpbind.http import serve_http
    except ImportError as exc:
        raise missing_dependency("mcpbind serve --http", exc, "http") from None
    cluster: dict[str, Any] = {"workers": workers, "redis": redis, "advertise_host": advertise_host}
    if trusted_proxies:
        cluster["trusted_proxies"] = list(trusted_proxies)
    try:  # it prints the URL once listening
        serve_http(server, host=host, port=port, path=path, **cluster)
    except ValueError as exc:  # --workers without Redis
        raise CliFailure(str(exc), EXIT_USAGE) from None
    except OSError as exc:  # the port is in use, the address not this machine's, ...
        raise CliFailure(exc.strerror or str(exc), EXIT_CONNECTION) from None
