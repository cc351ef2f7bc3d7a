"""What the CLI's client answers and shows when the server speaks first.

* Log messages (``notifications/message``, server/utilities/logging.mdx) go to stderr as
  ``[server LEVEL logger] message``: ``warning`` and above always, every level with ``-v``
  (the CLI sets the level to ``debug``, or ``warning`` without ``-v``).
* Elicitation (client/elicitation.mdx): a form on the terminal when stdin and stderr are
  terminals (:mod:`.forms`), declined otherwise, so a script never hangs on a question. A
  URL-mode request shows the URL and asks to go ahead.
* Roots (client/roots.mdx): the current directory.

Declaring elicitation and roots lets servers that offer tools only to capable clients (such
as server-everything) show all of them.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import click

from mcpbind_types import unified as t

from ..client import Client, ClientHandlers
from .forms import fill_form
from .output import echo, visible

__all__ = ["cli_handlers", "set_log_level"]


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


async def _ask(prompt: str) -> str | None:
    def read() -> str | None:
        try:
            reply: str = click.prompt(
                visible(prompt, one_line=True),
                default="",
                show_default=False,
                prompt_suffix="",
                err=True,
            )
            return reply
        except click.Abort:
            return None

    return await anyio.to_thread.run_sync(read)


def _say(line: str) -> None:
    echo(line, err=True)


async def _elicit(params: t.ElicitRequestFormParams | t.ElicitRequestURLParams) -> t.ElicitResult:
    if not _interactive():
        _say(f"[server asks] {params.message} (declined: not a terminal)")
        return t.ElicitResult(action="decline")
    _say(f"[server asks] {params.message}")
    if isinstance(params, t.ElicitRequestURLParams):
        _say(f"  it wants you to open: {params.url}")
        go = await _ask("  Done / go ahead? [y/N] ")
        return t.ElicitResult(action="accept" if (go or "").lower() in {"y", "yes"} else "decline")
    return await fill_form(params, _ask, _say)


def _log_printer(verbose: bool) -> Any:
    shown = None if verbose else {"warning", "error", "critical", "alert", "emergency"}

    async def show(params: t.LoggingMessageNotificationParams) -> None:
        if shown is not None and params.level not in shown:
            return
        data = params.data
        if isinstance(data, str):
            text = data
        else:
            import json  # at the first structured message: not with every ls (cold start)

            text = json.dumps(data, ensure_ascii=False)
        source = f" {params.logger}" if isinstance(params.logger, str) else ""
        _say(f"[server {params.level}{source}] {text}")

    return show


#: The bytes a ``file:`` URI keeps as they are (RFC 3986 unreserved, and ``/``); the others are
#: percent-encoded, as ``pathlib.Path.as_uri`` does on POSIX.
_URI_KEPT = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")


def file_uri(path: str) -> str:
    """The ``file://`` URI of the absolute POSIX ``path``. Not ``Path.as_uri``: importing
    pathlib (with urllib.parse and ipaddress) costs every ``mcpbind ls`` ~18M instructions
    for this one string (issue 15, cold start)."""
    if sys.platform == "win32":  # drive letters and backslashes: pathlib's rules
        from pathlib import Path

        return Path(path).as_uri()
    return "file://" + "".join(
        chr(byte) if byte in _URI_KEPT else f"%{byte:02X}" for byte in os.fsencode(path)
    )


def cli_handlers(verbose: bool) -> ClientHandlers:
    cwd = os.getcwd()
    return ClientHandlers(
        elicitation=_elicit,
        roots=[t.Root(uri=file_uri(cwd), name=os.path.basename(cwd) or cwd)],
        logging=_log_printer(verbose),
    )


async def set_log_level(client: Client, verbose: bool) -> None:
    """Ask a server that logs for every message (``-v``) or warnings and worse."""
    if client.peer_has_capability(("logging",)):
        await client.set_level(t.SetLevelRequestParams(level="debug" if verbose else "warning"))
