"""Every line the CLI prints for a person goes through :func:`echo`, which shows control
characters instead of letting the terminal act on them.

What a server sends -- its name, tool and parameter names, descriptions, results, log
messages, errors, a stdio server's stderr -- may carry terminal control sequences: clear the
screen, set the window title (OSC 0), make links (OSC 8), write the clipboard (OSC 52), move
the cursor back (CR, BS) to repaint the approval question. :func:`visible` turns them into
text, so nothing acts and nothing is silently dropped: C0 controls but newline and tab (and
CR of a CRLF) in caret notation (ESC is ``^[``, CR ``^M``, BS ``^H``), DEL as ``^?``, C1
controls (CSI ``\\u009b``, OSC ``\\u009d``) and the bidirectional overrides and isolates
(U+202A-U+202E, U+2066-U+2069: text shown in another order than it is) as ``\\uXXXX``. JSON
output (``--json``) is printed exactly (:func:`echo_json`): JSON escapes control characters
itself, and scripts need the wire form. The library's own warnings, which may quote a server
(an HTTP error body), are printed the same way (:func:`show_library_logs`).
"""

from __future__ import annotations

import logging

import click

__all__ = ["echo", "echo_json", "show_library_logs", "visible"]


def _table(newlines: bool) -> dict[int, str]:
    table = {code: f"^{chr(code + 0x40)}" for code in range(0x20)}
    table[0x7F] = "^?"
    table.update({code: f"\\u{code:04x}" for code in range(0x80, 0xA0)})
    table.update(
        {code: f"\\u{code:04x}" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
    )
    del table[ord("\t")]
    if newlines:
        del table[ord("\n")]
    return table


_MULTILINE = _table(newlines=True)
_ONE_LINE = _table(newlines=False)


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` with its control characters shown, not acted on; ``one_line`` shows newlines
    as ``^J`` too (a line redrawn in place, a prompt)."""
    if not one_line:
        text = text.replace("\r\n", "\n")
    return text.translate(_ONE_LINE if one_line else _MULTILINE)


def echo(text: str = "", *, err: bool = False, nl: bool = True, redraw: bool = False) -> None:
    """Print ``text`` for a person (:func:`visible`); ``redraw``: over the current line (a
    carriage return first, the text on one line)."""
    shown = visible(text, one_line=redraw)
    click.echo(f"\r{shown}" if redraw else shown, err=err, nl=nl)


def echo_json(text: str) -> None:
    """Print JSON exactly, for scripts (``--json``)."""
    click.echo(text)


class _VisibleLogs(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.quiet: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        if record.name in self.quiet:
            return
        try:
            echo(self.format(record), err=True)
        except Exception:
            self.handleError(record)


def _handler() -> _VisibleLogs | None:
    found = [h for h in logging.getLogger("mcpbind").handlers if isinstance(h, _VisibleLogs)]
    return found[0] if found else None


def show_library_logs() -> None:
    """Print the ``mcpbind`` loggers' warnings through :func:`echo`, as Python's last-resort
    handler would print them (the message alone), but with their control characters shown."""
    if _handler() is None:
        logging.getLogger("mcpbind").addHandler(_VisibleLogs())


def quiet_library_logs(name: str) -> None:
    """Not the records of logger ``name``: a command that shows them its own way."""
    handler = _handler()
    if handler is not None:
        handler.quiet.add(name)
