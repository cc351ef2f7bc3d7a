"""``make typecheck-installed``: a user's typed code checks against mcpbind as installed.

1. Builds the sdist and, from it, the wheel (``python -m build``) in a fresh venv, and installs
   the wheel there with the ``codegen`` extra (for ``mcpbind bind``) and mypy.
2. Makes a second fresh venv with an editable install made the README's way (``make setup``).
3. In each: ``mcpbind bind examples/notes_server.py`` writes ``notes_tools.py`` beside a copy of
   ``app.py``; ``app.py`` runs against the server for real; then ``mypy --strict`` and pyright
   (pinned in package.json) check it with no settings but the activated venv. Each checker must
   report exactly one diagnostic, the wrong argument type on the line marked
   ``expected type error``; a missing one, or anything else (an unresolved import, ``Any``
   leaking out of a wrapper), fails the run.

``python tests/typing/installed/run.py [--keep]`` (``--keep`` leaves the work folder).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
APP = HERE / "app.py"
SERVER = ROOT / "examples" / "notes_server.py"
PYRIGHT = HERE / "node_modules" / ".bin" / "pyright"
MARK = "# expected type error"
WANTED = "AddNoteParams"  # the parameter type the wrong argument is checked against


def _run(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run a step; on failure print its output and stop with its exit code."""
    print("+", " ".join(argv), flush=True)
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        raise SystemExit(f"step failed with exit code {done.returncode}: {' '.join(argv)}")
    return done.stdout


def _activated(venv: Path) -> dict[str, str]:
    """The environment of a shell that activated ``venv``: nothing of this checkout's
    PYTHONPATH/MYPYPATH leaks in, so only the installed packages can be found."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "MYPYPATH", "PYTHONHOME"}}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _venv(path: Path) -> Path:
    _run([sys.executable, "-m", "venv", str(path)], cwd=ROOT)
    return path


def wheel_venv(work: Path) -> Path:
    venv = _venv(work / "wheel-venv")
    python = str(venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "-q", "build>=1.2"], cwd=ROOT)
    dist = work / "dist"
    _run([python, "-m", "build", "--outdir", str(dist), str(ROOT)], cwd=ROOT)
    sdists, wheels = list(dist.glob("*.tar.gz")), list(dist.glob("*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise SystemExit(f"expected one sdist and one wheel in {dist}, got {sdists + wheels}")
    _run([python, "-m", "pip", "install", "-q", f"{wheels[0]}[codegen]", "mypy>=1.10"], cwd=work)
    return venv


def editable_venv(work: Path) -> Path:
    venv = _venv(work / "editable-venv")
    _run(["make", "setup", f"PY={venv / 'bin' / 'python'}"], cwd=ROOT, env=_activated(venv))
    return venv


def _mypy_diagnostics(venv: Path, project: Path) -> list[tuple[str, int, str]]:
    argv = [str(venv / "bin" / "mypy"), "--strict", "--no-error-summary", "app.py"]
    print("+", " ".join(argv), flush=True)
    done = subprocess.run(
        argv, cwd=project, env=_activated(venv), capture_output=True, text=True, check=False
    )
    found: list[tuple[str, int, str]] = []
    for line in (done.stdout + done.stderr).splitlines():
        match = re.match(r"^(.+?):(\d+): (error|warning|note): (.*)$", line)
        if match:
            if match.group(3) != "note":
                found.append((match.group(1), int(match.group(2)), match.group(4)))
        elif line.strip():
            found.append(("mypy", 0, line))
    return found


def _pyright_diagnostics(venv: Path, project: Path) -> list[tuple[str, int, str]]:
    argv = [str(PYRIGHT), "--outputjson", "app.py"]
    print("+", " ".join(argv), flush=True)
    done = subprocess.run(
        argv, cwd=project, env=_activated(venv), capture_output=True, text=True, check=False
    )
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return [("pyright", 0, (done.stdout + done.stderr).strip())]
    return [
        (Path(d["file"]).name, d["range"]["start"]["line"] + 1, f"{d['severity']}: {d['message']}")
        for d in report["generalDiagnostics"]
        if d["severity"] in {"error", "warning"}
    ]


def check(label: str, venv: Path, work: Path) -> list[str]:
    """Bind, run and type-check the user project in ``venv``; the problems found."""
    project = work / f"{label}-project"
    project.mkdir()
    shutil.copy(APP, project / "app.py")
    env = _activated(venv)
    mcpbind = str(venv / "bin" / "mcpbind")
    _run(
        [mcpbind, "bind", str(SERVER), "--out", str(project / "notes_tools.py")], cwd=work, env=env
    )
    print(_run([str(venv / "bin" / "python"), "app.py", str(SERVER)], cwd=project, env=env), end="")
    expected = next(
        i + 1 for i, line in enumerate(APP.read_text().splitlines()) if line.endswith(MARK)
    )
    problems: list[str] = []
    for checker, found in (
        ("mypy", _mypy_diagnostics(venv, project)),
        ("pyright", _pyright_diagnostics(venv, project)),
    ):
        wanted = [d for d in found if d[:2] == ("app.py", expected) and WANTED in d[2]]
        if not wanted:
            problems.append(
                f"{label}: {checker} did not report the wrong argument on line {expected}"
            )
        for file, line, message in found:
            if (file, line, message) not in wanted[:1]:
                problems.append(f"{label}: {checker} also reported {file}:{line}: {message}")
        print(f"{label}: {checker}: {len(found)} diagnostic(s), expected one at app.py:{expected}")
    return problems


def main() -> int:
    if not PYRIGHT.exists():
        raise SystemExit(f"pyright is not installed: npm ci --prefix {HERE}")
    work = Path(tempfile.mkdtemp(prefix="mcpbind-typecheck-"))
    try:
        problems = check("wheel", wheel_venv(work), work)
        problems += check("editable", editable_venv(work), work)
    finally:
        if "--keep" in sys.argv:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    for problem in problems:
        print(problem, file=sys.stderr)
    print("typecheck-installed:", "FAILED" if problems else "ok (wheel and editable)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
