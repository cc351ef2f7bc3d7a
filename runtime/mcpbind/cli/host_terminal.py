"""The Host shell's terminal: line editing, history and completion when it is one.

In a terminal, lines are read with prompt_toolkit (the ``shell`` extra): arrow keys and the
usual editing keys, a history kept across sessions (``~/.mcpbind_host_history``, or
``$MCPBIND_HOST_HISTORY``; Up/Down and Ctrl-R), Tab completion of commands and of the
catalog's tool, prompt, resource and server names, and of a form field's choices. It was
chosen over the standard library's readline because it completes and edits the same way on
every platform, needs no GNU readline, and reads input on the event loop (no thread), so
host events printed meanwhile appear above the prompt. Without prompt_toolkit, or when input
is not a terminal (a pipe, a script), lines are read plainly (with readline's editing if it
is available), in a daemon thread so the event loop keeps running.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.from_thread
import anyio.lowlevel

from .output import echo, visible

if TYPE_CHECKING:
    from .host_editor import LineEditor

__all__ = ["CompletionSource", "Terminal", "history_path"]

#: Words to offer for the line typed so far (the text before the cursor).
CompletionSource = Callable[[str], Sequence[str]]


def history_path() -> Path:
    configured = os.environ.get("MCPBIND_HOST_HISTORY")
    return Path(configured) if configured else Path.home() / ".mcpbind_host_history"


class Terminal:
    """Prompts one question at a time; ``answer`` (``--yes``/``--no``) answers confirmations."""

    def __init__(
        self,
        answer: bool | None,
        *,
        complete: CompletionSource | None = None,
        editor: bool | None = None,
    ) -> None:
        self.answer = answer
        self.complete = complete
        #: Called on Ctrl-C at an answer prompt (an approval, a form): the shell cancels the
        #: command that asked.
        self.interrupt: Callable[[], None] | None = None
        self._lock = anyio.Lock()
        self.eof = False
        if editor is None:
            editor = sys.stdin.isatty() and sys.stdout.isatty()
        self._editor: LineEditor | None = None
        if editor:
            try:
                from .host_editor import LineEditor
            except ImportError:  # no prompt_toolkit: input() with readline's editing
                with contextlib.suppress(ImportError):
                    import readline  # noqa: F401
            else:
                self._editor = LineEditor(self._completions, history_path())

    def _completions(self, before: str) -> Sequence[str]:
        return self.complete(before) if self.complete is not None else ()

    @property
    def editing(self) -> bool:
        """Whether lines are read with prompt_toolkit."""
        return self._editor is not None

    def say(self, text: str = "") -> None:
        echo(text)

    async def ask(
        self, prompt: str, *, command: bool = False, words: Sequence[str] = ()
    ) -> str | None:
        """One line, or ``None`` at end of input (Ctrl-D). ``command``: a shell command line
        (kept in the history, completed from ``complete``); else an answer, completed from
        ``words``.

        Ctrl-D ends the input only at the command prompt (as in a shell); at an answer prompt
        it answers ``None`` (no, decline) and the shell goes on. Ctrl-C clears a command line
        (``""``); at an answer prompt it answers ``None`` and calls :attr:`interrupt`."""
        async with self._lock:
            if self.eof:
                return None
            prompt = visible(prompt, one_line=True)  # it may quote the server
            try:
                if self._editor is not None:
                    return await self._editor.read(prompt, command, words)
                return await _read_line(prompt)
            except EOFError:
                if command or not _is_terminal():  # a pipe that ended stays ended
                    self.eof = True
                echo()
                return None
            except KeyboardInterrupt:
                if command:
                    return ""
                if self.interrupt is not None:
                    self.interrupt()
                return None

    async def confirm(self, prompt: str, *, default: bool = False) -> bool:
        hint = "[Y/n]" if default else "[y/N]"
        if self.answer is not None:
            self.say(
                f"{prompt} {hint} {'y' if self.answer else 'n'} (--{'yes' if self.answer else 'no'})"
            )
            return self.answer
        reply = await self.ask(f"{prompt} {hint} ", words=("yes", "no"))
        if reply is None:
            return False
        text = reply.strip().lower()
        return default if not text else text in ("y", "yes")


def _is_terminal() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


async def _read_line(prompt: str) -> str:
    """``input(prompt)`` in a daemon thread, so the event loop keeps running meanwhile.

    Not ``anyio.to_thread``: its worker threads are joined at interpreter exit, and a thread
    blocked in ``input()`` cannot be interrupted, so Ctrl-C would leave the process hanging
    until the user pressed Enter. A daemon thread is simply dropped at exit.
    """
    done = anyio.Event()
    outcome: list[str | BaseException] = []
    token = anyio.lowlevel.current_token()

    def read() -> None:
        try:
            outcome.append(input(prompt))
        except BaseException as exc:  # EOFError, or anything else: re-raised in the loop
            outcome.append(exc)
        with contextlib.suppress(RuntimeError):  # the loop already ended (shutdown)
            anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=read, name="mcpbind-host-input", daemon=True).start()
    await done.wait()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]
