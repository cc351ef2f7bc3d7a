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

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import click

from mcpbind_types import unified as t

from ..client import Client, ClientHandlers
from .forms import fill_form

__all__ = ["cli_handlers", "set_log_level"]


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


async def _ask(prompt: str) -> str | None:
    def read() -> str | None:
        try:
            reply: str = click.prompt(
                prompt, default="", show_default=False, prompt_suffix="", err=True
            )
            return reply
        except click.Abort:
            return None

    return await anyio.to_thread.run_sync(read)


def _say(line: str) -> None:
    click.echo(line, err=True)


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
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        source = f" {params.logger}" if isinstance(params.logger, str) else ""
        _say(f"[server {params.level}{source}] {text}")

    return show


def cli_handlers(verbose: bool) -> ClientHandlers:
    cwd = Path(os.getcwd())
    return ClientHandlers(
        elicitation=_elicit,
        roots=[t.Root(uri=cwd.as_uri(), name=cwd.name or str(cwd))],
        logging=_log_printer(verbose),
    )


async def set_log_level(client: Client, verbose: bool) -> None:
    """Ask a server that logs for every message (``-v``) or warnings and worse."""
    if client.peer_has_capability(("logging",)):
        await client.set_level(t.SetLevelRequestParams(level="debug" if verbose else "warning"))
