"""One string that says where a server is, as the CLI and ``Client("...")`` both take it.

* ``http://`` or ``https://``: a Streamable HTTP endpoint (the ``http`` extra, imported only
  then), falling back to the 2024-11-05 HTTP+SSE transport.
* a path to a ``.py`` file: run with this Python interpreter (``sys.executable``); a ``.js``,
  ``.mjs`` or ``.cjs`` file: run with ``node``. A command line whose first word is such a
  file gets the same treatment (``"server.py --debug"``).
* anything else: a command line that starts a stdio server, split like a POSIX shell would
  (``"python -m examples.notes_server"``, ``"npx -y @modelcontextprotocol/server-everything"``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .transports.base import Transport

if TYPE_CHECKING:
    from .transports.stdio.spawn import StartedProcess

__all__ = ["ServerLocation", "open_server", "parse_server"]

_INTERPRETERS = {".py": None, ".js": "node", ".mjs": "node", ".cjs": "node"}


class ServerLocation(NamedTuple):
    """A parsed server string: a ``url``, or the ``argv`` of a stdio server. (A NamedTuple,
    not a dataclass: ``mcpbind ls`` parses its SERVER before it imports dataclasses.)"""

    text: str
    url: str | None = None
    argv: tuple[str, ...] = ()


def _interpreter_for(path: str) -> str | None:
    """The program that runs the script ``path``, or ``None`` when it is not a script file."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in _INTERPRETERS or not os.path.isfile(path):
        return None
    return _INTERPRETERS[suffix] or sys.executable


def parse_server(text: str) -> ServerLocation:
    """Parse a server string (see the module docstring); :class:`ValueError` when it is empty
    or cannot be split."""
    if text.startswith(("http://", "https://")):
        return ServerLocation(text, url=text)
    interpreter = _interpreter_for(text)  # a script path, spaces and all
    if interpreter is not None:
        return ServerLocation(text, argv=(interpreter, text))
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"cannot split the server command {text!r}: {exc}") from None
    if not argv:
        raise ValueError("empty server command line")
    interpreter = _interpreter_for(argv[0])
    if interpreter is not None:
        argv.insert(0, interpreter)
    return ServerLocation(text, argv=tuple(argv))


@contextlib.asynccontextmanager
async def open_server(
    server: str | ServerLocation,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    on_stderr: Callable[[str], object] | None = None,
    headers: Mapping[str, str] | None = None,
    auth: Any = None,
    started: StartedProcess | None = None,
) -> AsyncIterator[Transport]:
    """The open transport to ``server``: spawned (``env``, ``cwd``, ``on_stderr``: see
    :meth:`StdioClientTransport.spawn`) or connected over HTTP (``headers`` on every request, ``auth``: see
    :func:`~mcpbind.http.client.connect_http`);
    closed (the process shut down) on exit. ``started``: the server process, already started
    (:func:`~mcpbind.transports.stdio.spawn.start_process`)."""
    location = parse_server(server) if isinstance(server, str) else server
    if location.url is not None:
        if env:
            raise ValueError("environment variables apply to stdio servers only, not to URLs")
        from .http.client import connect_http  # httpx2 is the optional "http" extra

        async with connect_http(location.url, headers=headers, auth=auth) as transport:
            yield transport
        return
    if auth is not None:
        raise ValueError("authorization applies to http(s) URLs only, not to stdio servers")
    if headers:
        raise ValueError("HTTP headers apply to http(s) URLs only, not to stdio servers")
    from .transports.stdio.process import StdioClientTransport  # anyio: after a CLI's spawn

    command, *args = location.argv
    async with StdioClientTransport.spawn(
        command, args, env=env, cwd=cwd, on_stderr=on_stderr, started=started
    ) as spawned:
        yield spawned
