"""Sweeps: cache ranges, the DuckDB results store, kill-and-resume safety, Dask equality,
Parquet export and experiment files."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import duckdb
import pandas as pd
import pytest

import bufsim
from bufsim.sweeps import SweepSpec, cache_range, run_sweep
from conftest import SWEEP_CACHES, SWEEP_POLICIES, SWEEP_PREFETCHES, bufsim_cli, sweep_args

POLICIES, CACHES, PREFETCHES = SWEEP_POLICIES, SWEEP_CACHES, SWEEP_PREFETCHES
STATS = [
    "policy",
    "prefetch",
    "cache_blocks",
    "accesses",
    "hits",
    "misses",
    "disk_requests",
    "blocks_read",
    "prefetched",
    "prefetched_unused",
    "key",
    "trace_hash",
]


def test_cache_ranges():
    assert cache_range("1024blocks:8192blocks:x2") == ["1024blocks", "2048blocks", "4096blocks", "8192blocks"]
    assert cache_range("4MiB:16MiB:+4MiB") == ["1024blocks", "2048blocks", "3072blocks", "4096blocks"]
    assert cache_range("10blocks:12blocks:+1") == ["10blocks", "11blocks", "12blocks"]
    assert cache_range("64MiB") == ["64MiB"]
    for bad in ["1:2", "8blocks:4blocks:x2", "4blocks:8blocks:x1", "4blocks:8blocks:?3", "4blocks:8blocks:+0"]:
        with pytest.raises(bufsim.SpecError):
            cache_range(bad)


def rows(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"SELECT {', '.join(STATS)} FROM runs ORDER BY key").df()
    finally:
        con.close()


def count(db):
    if not os.path.exists(db):
        return 0
    return len(rows(db))


def start_and_kill(args, sig, after_progress_lines=1):
    """Starts a sweep and sends `sig` once its progress bar has shown a run done; returns its
    exit code. (The bar redraws with carriage returns, which text mode reads as line ends.)"""
    p = subprocess.Popen(
        [sys.executable, "-m", "bufsim", *args, "--progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = 0
    deadline = time.monotonic() + 120
    for line in p.stderr:
        if line.startswith("sweep:") and not re.search(r"\b0/\d+ ", line):
            seen += 1
            if seen >= after_progress_lines:
                p.send_signal(sig)
                break
        assert time.monotonic() < deadline, "sweep made no progress"
    # Drain the rest so the sweep's last words never meet a closed pipe.
    p.stderr.read()
    p.stderr.close()
    return p.wait(timeout=60)


@pytest.fixture(scope="module")
def uninterrupted(sweep_db):
    return rows(sweep_db)


def test_killed_twice_then_resumed_equals_an_uninterrupted_sweep(tmp_path, cloudphysics, uninterrupted):
    db = tmp_path / "r.duckdb"
    args = sweep_args(cloudphysics, db)
    code = start_and_kill(args, signal.SIGKILL)
    assert code == -signal.SIGKILL
    first = count(db)
    assert first < 64
    code = start_and_kill(args + ["--resume"], signal.SIGKILL)
    assert code == -signal.SIGKILL
    second = count(db)
    assert first <= second < 64
    p = bufsim_cli(*args, "--resume", "--quiet")
    assert p.returncode == 0, p.stderr
    got = rows(db)
    assert len(got) == 64
    pd.testing.assert_frame_equal(got.reset_index(drop=True), uninterrupted.reset_index(drop=True))


def test_sigint_stops_cleanly_and_keeps_finished_runs(tmp_path, cloudphysics):
    db = tmp_path / "i.duckdb"
    code = start_and_kill(sweep_args(cloudphysics, db), signal.SIGINT)
    assert code == 130
    n = count(db)
    assert 0 < n < 64
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM runs WHERE misses IS NULL OR accesses IS NULL").fetchone()[0] == 0
    con.close()


def test_dask_cluster_gives_identical_results(tmp_path, cloudphysics, uninterrupted):
    from dask.distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    ) as cluster:
        spec = SweepSpec([str(cloudphysics)], POLICIES, CACHES, PREFETCHES)
        run_sweep(spec, str(tmp_path / "d.duckdb"), dask=cluster.scheduler_address, progress=False)
    got = rows(tmp_path / "d.duckdb")
    pd.testing.assert_frame_equal(got.reset_index(drop=True), uninterrupted.reset_index(drop=True))


def test_sweep_api_returns_grid_order_and_resume_skips(tmp_path, cloudphysics):
    spec = SweepSpec([str(cloudphysics)], ["lru", "clock"], [1024, "4096blocks"])
    db = str(tmp_path / "a.duckdb")
    df = run_sweep(spec, db, progress=False)
    assert list(df["policy"]) == ["lru", "lru", "clock", "clock"]
    assert list(df["cache_blocks"]) == [1024, 4096, 1024, 4096]
    assert df.loc[0, "misses"] == bufsim.simulate(cloudphysics, "lru", 1024).misses
    stamp = duckdb.connect(db, read_only=True).execute("SELECT max(finished_at) FROM runs").fetchone()[0]
    run_sweep(spec, db, resume=True, progress=False)
    con = duckdb.connect(db, read_only=True)
    assert con.execute("SELECT count(*), max(finished_at) FROM runs").fetchone() == (4, stamp)


def test_export_parquet_and_show(tmp_path, cloudphysics):
    db = tmp_path / "e.duckdb"
    assert bufsim_cli("sweep", cloudphysics, "-p", "lru", "-c", "1024blocks", "-o", db, "-q").returncode == 0
    out = tmp_path / "runs.parquet"
    p = bufsim_cli("results", "export", db, "-o", out)
    assert p.returncode == 0, p.stderr
    assert duckdb.connect().execute(f"SELECT count(*) FROM '{out}'").fetchone()[0] == 1
    assert "lru" in bufsim_cli("results", "show", db).stdout
    p = bufsim_cli("results", "show", tmp_path / "none.duckdb")
    assert p.returncode == 2 and "no such results database" in p.stderr


def test_experiment_file(tmp_path, cloudphysics):
    exp = tmp_path / "exp.toml"
    exp.write_text(
        f'traces = ["{cloudphysics}"]\npolicies = ["lru", "opt"]\ncaches = ["4MiB"]\nprefetches = ["none", "bsd"]\n'
    )
    p = bufsim_cli("sweep", "--config", exp, "-o", tmp_path / "x.duckdb", "-q", "--json")
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.splitlines()) == 4
    exp.write_text('traces = ["a"]\npolicies = ["lru"]\ncaches = ["4MiB"]\ncolour = "red"\n')
    p = bufsim_cli("sweep", "--config", exp, "-o", tmp_path / "y.duckdb")
    assert p.returncode == 2 and "unknown key(s) colour" in p.stderr


def test_bad_sweeps_fail_before_running(tmp_path, cloudphysics):
    db = tmp_path / "b.duckdb"
    p = bufsim_cli("sweep", cloudphysics, "-p", "lru", "-p", "nope", "-c", "4MiB", "-o", db)
    assert p.returncode == 2 and "unknown policy `nope`" in p.stderr
    assert not db.exists() or count(db) == 0
    p = bufsim_cli("sweep", tmp_path / "missing.csv", "-o", db)
    assert p.returncode == 2 and "no such file" in p.stderr


def test_sweep_into_a_database_from_python(tmp_path, cloudphysics):
    db = tmp_path / "py.duckdb"
    df = bufsim.sweep(cloudphysics, ["lru", "clock"], ["1024blocks:2048blocks:x2"], out=db)
    mem = bufsim.sweep(cloudphysics, ["lru", "clock"], ["1024blocks:2048blocks:x2"])
    cols = list(mem.columns)
    pd.testing.assert_frame_equal(df[cols].reset_index(drop=True), mem, check_dtype=False)
    again = bufsim.sweep(cloudphysics, ["lru", "clock"], ["1024blocks:2048blocks:x2"], out=db, resume=True)
    assert list(again["finished_at"]) == list(df["finished_at"])
    with pytest.raises(bufsim.SpecError, match="need a results database"):
        bufsim.sweep(cloudphysics, ["lru"], [1024], resume=True)


def test_progress_is_a_tqdm_bar_with_the_time_left_when_asked(tmp_path, cloudphysics):
    args = ["sweep", str(cloudphysics), "-p", "lru", "-c", "64blocks", "-c", "128blocks", "--out"]
    p = bufsim_cli(*args, str(tmp_path / "p.duckdb"), "--progress")
    assert p.returncode == 0, p.stderr
    assert re.search(r"sweep: +\d+%\|.*\| [12]/2 \[\d\d:\d\d<\d\d:\d\d", p.stderr), p.stderr
    quiet = bufsim_cli(*args, str(tmp_path / "q.duckdb"))
    assert quiet.returncode == 0 and "sweep:" not in quiet.stderr, quiet.stderr


def test_rerun_without_resume_replaces_rows_and_duplicates_run_once(tmp_path, cloudphysics):
    db = str(tmp_path / "twice.duckdb")
    spec = SweepSpec([str(cloudphysics)], ["lru", "lru"], [1024])
    df = run_sweep(spec, db, progress=False)
    assert len(df) == 2 and df["key"].nunique() == 1
    first = duckdb.connect(db, read_only=True).execute("SELECT count(*), max(finished_at) FROM runs").fetchone()
    run_sweep(spec, db, progress=False)  # no resume: the run is redone and its row replaced
    second = duckdb.connect(db, read_only=True).execute("SELECT count(*), max(finished_at) FROM runs").fetchone()
    assert first[0] == second[0] == 1 and second[1] > first[1]
