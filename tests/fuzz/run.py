"""Coverage-guided fuzzing of the receive path with atheris (libFuzzer): ``make fuzz``.

    python tests/fuzz/run.py [--seconds 600] [--workdir build/fuzz]

The committed seeds (``corpus/``) are copied into the working corpus once per target (the
first byte of an input picks it: core, stateless dispatch, HTTP session era, HTTP stateless
era, legacy HTTP+SSE, authorization, tasks; ``harness.COUNT``); libFuzzer grows the working corpus and writes a crashing input to
``<workdir>/crash-*``. To keep a finding as a regression: fix it, then copy the input minus
its first byte into ``corpus/`` (the replay test runs it through every target).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--workdir", type=Path, default=Path("build/fuzz"))
    args, extra = parser.parse_known_args()
    try:
        import atheris
    except ImportError:
        print("make fuzz needs atheris: pip install -e '.[fuzz]'", file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE.parent.parent / "tests"))
    work = args.workdir.resolve()
    corpus = work / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    with atheris.instrument_imports(include=["mcpbind", "mcpbind_types"]):
        from fuzz.harness import COUNT, Targets
    for seed in sorted((HERE / "corpus").iterdir()):
        for target in range(COUNT):
            (corpus / f"{target}-{seed.name}").write_bytes(bytes([target]) + seed.read_bytes())

    import logging

    logging.disable(logging.CRITICAL)  # handlers' expected failures are logged; keep it quiet
    targets = Targets()
    libfuzzer = [
        sys.argv[0],
        f"-max_total_time={args.seconds}",
        "-max_len=8192",
        "-timeout=30",
        f"-artifact_prefix={work}/",
        *extra,
        str(corpus),
    ]
    atheris.Setup(libfuzzer, targets.pick)
    atheris.Fuzz()
    shutil.rmtree(work / "tmp", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
