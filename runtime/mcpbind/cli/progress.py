"""A one-line progress bar on stderr, fed by ``notifications/progress``.

(2025-11-25 basic/utilities/progress.mdx: ``progress`` increases, ``total`` may be absent or
change, ``message`` is optional.) Drawn only once the first notification arrives, so quick
calls print nothing extra; redrawn in place with ``\\r`` and ended with a newline.
"""

from __future__ import annotations

from .output import echo

__all__ = ["ProgressBar"]

WIDTH = 30


class ProgressBar:
    """Render progress notifications; pass :meth:`update` as ``RequestOptions.on_progress``."""

    def __init__(self, label: str, *, enabled: bool = True) -> None:
        self.label = label
        self.enabled = enabled
        self.updates = 0
        self._last_len = 0

    def render(self, progress: float, total: float | None, message: str | None) -> str:
        if total is not None and total > 0:
            fraction = min(max(progress / total, 0.0), 1.0)
            filled = round(fraction * WIDTH)
            bar = "#" * filled + "-" * (WIDTH - filled)
            line = f"{self.label} [{bar}] {progress:g}/{total:g} {fraction:4.0%}"
        else:
            line = f"{self.label} [{'?' * 3:^{WIDTH}}] {progress:g}"
        return f"{line} {message}" if message else line

    async def update(self, progress: float, total: float | None, message: str | None) -> None:
        self.updates += 1
        if not self.enabled:
            return
        line = self.render(progress, total, message)
        pad = " " * max(self._last_len - len(line), 0)
        self._last_len = len(line)
        echo(f"{line}{pad}", err=True, nl=False, redraw=True)

    def close(self) -> None:
        """End the bar's line, if one was drawn."""
        if self.enabled and self.updates:
            echo("", err=True)
            self._last_len = 0
