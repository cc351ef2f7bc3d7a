"""Several worker processes for ``serve_http(..., workers=N)``: forked from the parent, which
has already bound the listening socket (so every worker accepts on it), then supervised:
SIGTERM to the parent goes to every worker (each drains and stops gracefully), and the
parent returns once all have exited. SIGINT (Ctrl-C) reaches the workers from the terminal
itself, so the parent only waits. POSIX only (``fork``)."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable
from types import FrameType

__all__ = ["run_workers"]


def run_workers(count: int, run: Callable[[int], None]) -> None:
    """Run ``run(0)`` … ``run(count - 1)`` in forked processes until all have exited."""
    if "fork" not in multiprocessing.get_all_start_methods():
        raise OSError("several workers need fork (POSIX); run one process per port instead")
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=run, args=(i,), daemon=False) for i in range(count)]
    for process in processes:
        process.start()

    def stop(signum: int, _frame: FrameType | None) -> None:
        for process in processes:
            if process.pid is not None and process.is_alive():
                os.kill(process.pid, signal.SIGTERM)

    previous = signal.signal(signal.SIGTERM, stop), signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        for process in processes:
            process.join()
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
