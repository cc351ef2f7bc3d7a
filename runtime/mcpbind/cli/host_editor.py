"""prompt_toolkit line editing for the Host shell (imported only in a terminal, and only
when the ``shell`` extra is installed; see :mod:`.host_terminal`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, WordCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.patch_stdout import patch_stdout

__all__ = ["LineEditor"]


class _ShellCompleter(Completer):
    """Completes the word before the cursor from what ``source`` offers for the line."""

    def __init__(self, source: Callable[[str], Sequence[str]]) -> None:
        self.source = source

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterator[Completion]:
        before = document.text_before_cursor
        word = before.rsplit(" ", 1)[-1]
        for candidate in self.source(before):
            if candidate.startswith(word):
                yield Completion(candidate, start_position=-len(word))


class LineEditor:
    """Two sessions: commands (kept history, completion) and answers (no history)."""

    def __init__(self, source: Callable[[str], Sequence[str]], history: Path) -> None:
        kept: History
        try:
            # What was typed may hold secrets (tool arguments): the owner's alone, like a
            # shell's history.
            history.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            history.touch(mode=0o600)
            kept = FileHistory(str(history))
        except OSError:
            kept = InMemoryHistory()
        self.commands: PromptSession[str] = PromptSession(
            history=kept, completer=_ShellCompleter(source)
        )
        self.answers: PromptSession[str] = PromptSession(history=InMemoryHistory())

    async def read(self, prompt: str, command: bool, words: Sequence[str]) -> str:
        # Output printed while the prompt is up (host events) goes above it. Ctrl-C at the
        # prompt is a key (KeyboardInterrupt from prompt_async); SIGINT, sent while no prompt
        # is up, stays the shell's (handle_sigint=False: prompt_toolkit would take it over
        # and then reset it to the default, which ends the process).
        with patch_stdout(raw=True):
            if command:
                return await self.commands.prompt_async(prompt, handle_sigint=False)
            completer = WordCompleter(list(words)) if words else None
            return await self.answers.prompt_async(prompt, completer=completer, handle_sigint=False)
