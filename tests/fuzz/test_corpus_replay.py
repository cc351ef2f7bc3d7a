"""The fuzz corpus replayed through every target (issue 16): seeds and past findings of
``make fuzz`` (coverage-guided, atheris) stay fixed. Runs in seconds; no atheris needed."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import COUNT, Targets

CORPUS = sorted((Path(__file__).with_name("corpus")).iterdir())


@pytest.fixture(scope="module")
def targets() -> Iterator[Targets]:
    running = Targets()
    try:
        yield running
    finally:
        running.close()


def test_corpus_is_small_and_present() -> None:
    assert len(CORPUS) >= 20
    assert sum(p.stat().st_size for p in CORPUS) < 512 * 1024


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_replay(targets: Targets, path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.CRITICAL)
    data = path.read_bytes()
    targets.all(data)  # the fuzzer's framing: the first byte picks one of COUNT targets
    targets.pick(bytes([COUNT]) + data)  # and wraps around
