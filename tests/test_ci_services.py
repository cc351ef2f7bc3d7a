""".ci/run on a machine where a service the tests need cannot be installed: it fails there,
before the suite runs, instead of letting those tests skip and the run go green."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ci_fails_without_redis_server(tmp_path: Path) -> None:
    """No redis-server and apt-get failing: .ci/run exits 1 with the reason and never
    reaches ``make`` (the Redis task-store tests would skip).

    Spec: issue 34 "What to build" (Timing: .ci/run fails when a service cannot be installed).
    """
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "awk"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    reached = tmp_path / "reached"
    for name, body in (
        ("apt-get", "exit 100"),  # no registry: the install fails
        ("pyenv", f"echo pyenv >> {reached}; exit 1"),
        ("make", f"echo make >> {reached}; exit 1"),
    ):
        fake = bin_dir / name
        fake.write_text(f"#!{bash}\n{body}\n")
        fake.chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path)}
    proc = subprocess.run(
        [bash, str(ROOT / ".ci" / "run")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "redis-server could not be installed" in proc.stderr
    assert not reached.exists(), reached.read_text()
