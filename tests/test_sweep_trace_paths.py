"""A trace given under several paths with one content (a copy under another name): every path
the user gave has its rows, labelled with that path, in the database, in what `sweep` returns
and prints, and in `results show`; the run itself is simulated once."""

from __future__ import annotations

import shutil

import duckdb

from bufsim.sweeps import COLUMNS, SweepSpec, run_sweep
from conftest import ROOT, bufsim_cli

GREP = ROOT / "traces" / "grep.csv.gz"


def copies(tmp_path, *names):
    out = []
    for n in names:
        shutil.copy(GREP, tmp_path / n)
        out.append(str(tmp_path / n))
    return out


def stored(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        query = "SELECT trace, policy, cache_blocks, misses FROM runs ORDER BY trace, policy, cache_blocks"
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_two_paths_of_one_content_each_keep_their_rows(tmp_path):
    a, b = copies(tmp_path, "a.csv.gz", "b.csv.gz")
    db = str(tmp_path / "r.duckdb")
    df = run_sweep(SweepSpec([a, b], ["lru", "fifo"], [64, 128]), db, progress=False)
    assert list(df["trace"]) == [a] * 4 + [b] * 4
    assert df["key"].nunique() == 4  # one run per configuration, filed under both paths
    got = stored(db)
    assert [t for t, *_ in got] == [a] * 4 + [b] * 4
    assert [r[1:] for r in got[:4]] == [r[1:] for r in got[4:]]
    shown = bufsim_cli("results", "show", db, "--where", "trace=" + b)
    assert shown.returncode == 0 and shown.stdout.count("b.csv.gz") == 4, shown.stdout + shown.stderr
    assert "a.csv.gz" not in shown.stdout


def test_the_sweep_table_names_each_trace(tmp_path):
    a, b = copies(tmp_path, "a.csv.gz", "b.csv.gz")
    p = bufsim_cli("sweep", a, b, "-p", "lru", "-c", "64blocks", "-o", tmp_path / "r.duckdb", "--quiet")
    assert p.returncode == 0, p.stderr
    assert p.stdout.index(f"{a}:") < p.stdout.index(f"{b}:") and "2 runs in" in p.stdout


def test_resume_files_a_kept_run_under_a_new_path_without_running_it(tmp_path):
    a, b = copies(tmp_path, "a.csv.gz", "b.csv.gz")
    db = tmp_path / "r.duckdb"
    assert bufsim_cli("sweep", a, "-p", "lru", "-c", "64blocks", "-o", db, "--quiet").returncode == 0
    p = bufsim_cli("sweep", a, b, "-p", "lru", "-c", "64blocks", "-o", db, "--resume")
    assert p.returncode == 0, p.stderr
    assert "2 of 2 runs already in" in p.stderr and "1 of them under another path" in p.stderr, p.stderr
    assert [t for t, *_ in stored(db)] == [a, b]
    # Without --resume the run is redone, and its row under each path replaced, not added.
    assert bufsim_cli("sweep", a, b, "-p", "lru", "-c", "64blocks", "-o", db, "--quiet").returncode == 0
    assert len(stored(db)) == 2


def test_a_database_keyed_by_run_alone_gains_rows_by_path(tmp_path):
    # The table as bufsim wrote it before rows by path: `key` its primary key.
    a, b = copies(tmp_path, "a.csv.gz", "b.csv.gz")
    db = str(tmp_path / "old.duckdb")
    cols = ", ".join(f'"{n}" {t}' + (" PRIMARY KEY" if n == "key" else "") for n, t in COLUMNS)
    con = duckdb.connect(db)
    con.execute(f"CREATE TABLE runs ({cols.replace(' NOT NULL', '')})")
    con.close()
    run_sweep(SweepSpec([a], ["lru"], [64]), db, progress=False)
    df = run_sweep(SweepSpec([a, b], ["lru"], [64]), db, resume=True, progress=False)
    assert list(df["trace"]) == [a, b]
    assert [t for t, *_ in stored(db)] == [a, b]
