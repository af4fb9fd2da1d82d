"""Shared fixtures: paths to the real traces beside the repository, and small trace builders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BUFSIM_SHARED", ROOT.parent / "shared"))
CLOUDPHYSICS = SHARED / "traces" / "cloudphysics_vscsi.csv"

# `make test` runs the suite on two workers (pytest-xdist `-n 2`), a module's tests on one worker
# so that its module-scoped fixtures (a reproduction's run, a kernel recording) run once. The
# modules that drive the kernel drop the page cache, trace it and run commands in memory-limited
# cgroups, so one would disturb another's measurement: they form one unit and run in turn.
KERNEL_MODULES = {"test_validate", "test_ktrace", "test_collect_validate_probe", "test_kernel_workloads", "test_damon"}


# The units that take minutes, longest first: they start first, so that the two workers finish
# together instead of one running a long unit alone at the end. (xdist would otherwise order the
# units by their number of tests, which puts a long single test, as the wheel's, last.)
LONG_UNITS = [
    "tests/test_reproductions.py",
    "kernel",
    "tests/test_oracle.py",
    "tests/test_reproduce_figures.py",
    "tests/test_wheel.py",
    "tests/test_plot_layout.py",
    "tests/test_plots.py",
]


def scheduling_unit(nodeid: str) -> str:
    """The unit of scheduling a test belongs to: its module, or "kernel"."""
    module = nodeid.split("::", 1)[0]
    return "kernel" if Path(module).stem in KERNEL_MODULES else module


def pytest_collection_modifyitems(items):
    first = {unit: rank for rank, unit in enumerate(LONG_UNITS)}
    # A stable sort: each unit's tests keep their order.
    items.sort(key=lambda item: first.get(scheduling_unit(item.nodeid), len(first)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    # xdist's own `--dist loadgroup` cannot be used: it renames node ids in a way pytest 9 ignores.
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scheduling_unit(nodeid)

    # Hand the units out in the order of the collection (LONG_UNITS first), not by test count.
    config.option.loadscopereorder = False
    return ByModule(config, log)


@pytest.fixture(scope="session")
def cloudphysics() -> Path:
    if not CLOUDPHYSICS.exists():
        pytest.fail(f"real trace missing: {CLOUDPHYSICS} (../shared must sit beside the repository)")
    return CLOUDPHYSICS


def write_csv(path: Path, rows: list[tuple], header: str = "op,file,offset,size") -> Path:
    path.write_text(header + "\n" + "".join(",".join(str(x) for x in r) + "\n" for r in rows))
    return path


def block_trace(path: Path, blocks: list[int], block_size: int = 4096) -> Path:
    """A single-file csv trace reading one block per request."""
    return write_csv(path, [("R", "f", b * block_size, block_size) for b in blocks])


def bufsim_cli(*args: str, check: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bufsim", *map(str, args)], capture_output=True, text=True, check=check
    )


# The reference sweep (4 policies x 8 sizes x 2 read-ahead settings on the real
# trace), run once per session: the kill/resume and Dask tests compare against it, and the plot
# and report tests draw it.
SWEEP_POLICIES = ["lru", "fifo", "clock", "lfu"]
SWEEP_CACHES = ["1024blocks:131072blocks:x2"]  # 8 sizes
SWEEP_PREFETCHES = ["none", "linux"]


def sweep_args(trace, out) -> list[str]:
    args = ["sweep", trace, "--out", out, "--jobs", "2"]
    for p in SWEEP_POLICIES:
        args += ["--policy", p]
    for c in SWEEP_CACHES:
        args += ["--cache", c]
    for f in SWEEP_PREFETCHES:
        args += ["--prefetch", f]
    return [str(a) for a in args]


@pytest.fixture(scope="session")
def sweep_db(tmp_path_factory, cloudphysics) -> Path:
    db = tmp_path_factory.mktemp("sweep") / "full.duckdb"
    p = bufsim_cli(*sweep_args(cloudphysics, db), "--quiet")
    assert p.returncode == 0, p.stderr
    return db


GREP = ROOT / "traces" / "grep.csv.gz"
MD5GREP = ROOT / "traces" / "md5grep.csv.gz"


def add_runs(db: Path, trace: Path, *argv: str) -> None:
    """Sweeps `trace` into the results database `db` (quietly), asserting it succeeds."""
    p = bufsim_cli("sweep", trace, *argv, "-o", db, "--quiet")
    assert p.returncode == 0, p.stderr


def timed_and_count_db(db: Path) -> Path:
    """A results database of grep's lru runs in timed mode beside its fifo runs in count mode, which
    leave the time columns and the timing settings NULL."""
    add_runs(db, GREP, "-p", "lru", "-c", "64blocks", "-c", "256blocks", "--timing")
    add_runs(db, GREP, "-p", "fifo", "-c", "64blocks", "-c", "256blocks")
    return db
