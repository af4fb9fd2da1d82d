"""The pip route: the wheel maturin builds installs into a clean virtual environment (no system
site packages, nothing from the worktree) with its dependencies, and the commands of a study run
from there: --help, run, sweep into DuckDB, plot and report. Skipped when the package index
cannot be reached to fetch the dependencies (the wheel itself is built here)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TPCH = ROOT / "traces" / "tpch.csv.gz"
OFFLINE_SIGNS = (
    "Could not find a version",
    "No matching distribution",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "ProxyError",
    "timed out",
)


def run(*args, cwd=None, timeout=900) -> subprocess.CompletedProcess:
    # A clean environment: nothing of the test session's venv or worktree on the path.
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_wheel_installs_and_runs_a_study_in_a_clean_venv(tmp_path):
    maturin = Path(sys.executable).parent / "maturin"
    if not maturin.exists():
        pytest.skip("maturin is not installed in this environment (make build installs it)")
    wheels = tmp_path / "wheels"
    # The README's `maturin build --release`, with the test suite's profile (release code without
    # LTO): the same wheel, built in the time the suite has, reusing `make test`'s compiled crates.
    p = run(maturin, "build", "--profile", "ci", "-o", wheels, "-i", sys.executable, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    (wheel,) = wheels.glob("bufsim-*.whl")
    assert "abi3" in wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert {"bufsim/report.js", "bufsim/report.css", "bufsim/py.typed"} <= names
    for dep in ("pandas", "duckdb", "matplotlib", "tqdm"):
        assert f"Requires-Dist: {dep}" in meta, dep

    env = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    assert run(base, "-m", "venv", env).returncode == 0
    py, bufsim = env / "bin" / "python", env / "bin" / "bufsim"
    p = run(py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--find-links", wheels, "bufsim")
    if p.returncode != 0 and any(s in p.stdout + p.stderr for s in OFFLINE_SIGNS):
        pytest.skip(f"the package index is out of reach for the dependencies: {p.stderr.strip().splitlines()[-1]}")
    assert p.returncode == 0, p.stderr[-3000:]

    work = tmp_path / "study"
    work.mkdir()
    where = run(py, "-c", "import bufsim, sys; print(bufsim.__file__); print(sys.flags.no_site, sys.prefix)", cwd=work)
    assert where.returncode == 0 and str(env) in where.stdout and str(ROOT / "python") not in where.stdout, where
    p = run(bufsim, "--help", cwd=work)
    assert p.returncode == 0 and "sweep" in p.stdout
    p = run(bufsim, "run", TPCH, "--policy", "lru", "--cache", "1024blocks", cwd=work)
    assert p.returncode == 0 and "lru" in p.stdout, p.stderr
    db = work / "results.duckdb"
    p = run(
        bufsim,
        "sweep",
        TPCH,
        "--out",
        db,
        "--policy",
        "lru",
        "--policy",
        "arc",
        "--cache",
        "64blocks",
        "--cache",
        "1024blocks",
        "--quiet",
        cwd=work,
    )
    assert p.returncode == 0, p.stderr
    p = run(bufsim, "plot", "hit-ratio", db, "-o", work / "hit-ratio.pdf", cwd=work)
    assert p.returncode == 0 and (work / "hit-ratio.pdf").read_bytes()[:4] == b"%PDF", p.stderr
    p = run(bufsim, "report", db, "-o", work / "report.html", cwd=work)
    assert p.returncode == 0 and "4 runs" in p.stdout, p.stdout + p.stderr
