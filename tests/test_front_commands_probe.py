"""Sweeps, their database and what reads it, probed with inputs a careful user gives: spellings
of one policy or read-ahead setting, a trace file that changed between two sweeps into one
database, and the Python API given values of the wrong type."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import pytest

import bufsim
from bufsim import plots, report
from bufsim._core import SpecError
from conftest import block_trace, bufsim_cli


def trace(tmp_path, name="t.csv", blocks=None):
    """A small trace whose runs differ by cache size (a loop over 40 blocks, twice)."""
    return block_trace(tmp_path / name, blocks if blocks is not None else list(range(40)) * 2)


def sweep(*args) -> None:
    p = bufsim_cli("sweep", *args, "--quiet")
    assert p.returncode == 0, p.stderr


def rows(db) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT policy, prefetch, cache_blocks FROM runs ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_spellings_of_one_read_ahead_setting_are_one_run(tmp_path):
    # As for policies: `LINUX`, `linux()` and `linux(min=3)` (its default) are one setting, run
    # once and stored once under its canonical spelling, not as four rows of one configuration.
    db = tmp_path / "r.duckdb"
    t = trace(tmp_path)
    spellings = ["linux", "LINUX", "linux()", "linux(min=3)", "simple(min=3,max=8)", "SIMPLE"]
    sweep(t, "-c", "16blocks", *[a for s in spellings for a in ("--prefetch", s)], "-o", db)
    assert rows(db) == [("lru", "linux", 16), ("lru", "simple", 16)]


def test_filters_of_plot_report_and_show_take_any_spelling(tmp_path):
    db = tmp_path / "r.duckdb"
    sweep(trace(tmp_path), "-p", "lirs(hir=1%)", "-p", "lru", "--prefetch", "simple(min=3,max=8)", "-c", "16blocks",
          "-c", "32blocks", "-o", db)  # fmt: skip
    # What the sweep was given finds its runs, though the table holds `lirs` and `simple`.
    p = bufsim_cli("plot", "hit-ratio", db, "-o", tmp_path / "f.png", "-p", "lirs(hir=1%)")
    assert p.returncode == 0, p.stderr
    p = bufsim_cli("report", db, "-o", tmp_path / "r.html", "-p", "LRU", "--prefetch", "simple(min=3,max=8)")
    assert p.returncode == 0 and "(2 runs)" in p.stdout, p.stderr
    p = bufsim_cli("results", "show", db, "--where", "policy=lirs(hir=1%)", "--where", "prefetch=SIMPLE")
    assert p.returncode == 0 and p.stdout.count("lirs") == 2, p.stdout
    # From Python too, and one name is one filter value, not its letters.
    df = plots.load(db)
    assert len(plots.select(df, policies="LRU")) == 2
    assert len(plots.select(df, policies=["lirs(hir=1%)"], caches=16)) == 1
    assert report.write(db, tmp_path / "p.html", policies="lru") == 2


def test_a_trace_that_changed_between_sweeps_is_not_drawn_as_one(tmp_path):
    # Sweeping t.csv, changing it and sweeping again into one database leaves runs of two
    # contents under one path; drawn as one trace, the lru line zigzagged between them.
    db = tmp_path / "r.duckdb"
    t = trace(tmp_path)
    sweep(t, "-c", "16blocks", "-c", "64blocks", "-o", db)
    trace(tmp_path, blocks=list(range(10)) * 8)
    sweep(t, "-c", "16blocks", "-c", "64blocks", "-o", db)
    df = plots.load(db)
    assert df["trace"].nunique() == 1 and df["trace_hash"].nunique() == 2
    result = plots.hit_ratio(df, tmp_path / "f.png")
    assert result.panels == 2
    # Each panel is one content: one point per cache size.
    for label, panel in plots._trace_panels(df):
        assert label.startswith("t.csv (sha256 ") and panel["cache_blocks"].is_unique, label
    page = (tmp_path / "r.html").read_text() if report.write(db, tmp_path / "r.html") else ""
    hashes = sorted(df["trace_hash"].unique())
    for h in hashes:
        assert f"t.csv (sha256 {h[:8]})" in page
    # A trace that never changed keeps its plain name.
    assert plots.trace_contents(df[df["trace_hash"] == hashes[0]])["trace"].eq(str(t)).all()


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda t, d: bufsim.sweep(t, "lru", 1.5), "give a cache size or a list of them"),
        (lambda t, d: bufsim.sweep(t, "lru", "16blocks", prefetches=None), "give a prefetch setting"),
        (lambda t, d: bufsim.sweep([t, 5], "lru", "16blocks"), "trace must be a path"),
        (lambda t, d: bufsim.sweep(None, "lru", "16blocks"), "give a trace or a list of them"),
        (lambda t, d: bufsim.sweep(t, "lru", "16blocks", out=123), "out must be a path"),
        (lambda t, d: bufsim.sweep(t, "lru", "16blocks", out=d, dask=5), "not a Dask scheduler address"),
        (lambda t, d: bufsim.run(5, "lru", "16blocks"), "trace must be a path"),
        (lambda t, d: bufsim.run(t, "lru", "16blocks", options=5), "options must be a mapping"),
        (lambda t, d: bufsim.run(t, "lru", "16blocks", prefetches=3.0), "give a prefetch setting"),
        (lambda t, d: plots.load(5), "the results file must be a path"),
        (lambda t, d: report.write(t, 5), "-o must be a path"),
    ],
)
def test_the_api_names_values_of_the_wrong_type(tmp_path, call, fragment):
    # A SpecError saying what to give, not the binding's or the standard library's TypeError.
    with pytest.raises(SpecError, match=fragment):
        call(trace(tmp_path), tmp_path / "r.duckdb")
    assert not (tmp_path / "r.duckdb").exists()


def test_generate_names_its_default_output_after_the_generator(tmp_path):
    # The core reads ` AMP-C` as amp-c; the file was named " AMP-C-3.csv", leading space and all.
    p = subprocess.run(
        [sys.executable, "-m", "bufsim", "generate", " AMP-C", "--seed", "3"], cwd=tmp_path, capture_output=True,
        text=True,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(tmp_path)) == ["amp-c-3.csv"]


def test_heatmap_takes_the_trace_options_a_sweep_takes(tmp_path):
    # `bufsim heatmap` had only --format: a sweep at --block-size 512 had no heatmap of its runs
    # (`unrecognized arguments`), and the API wrote the core's defaults again (block_size=4096).
    t = trace(tmp_path)
    cells = tmp_path / "cells.csv"
    p = bufsim_cli("heatmap", t, "-c", "8blocks", "--windows", "2", "--block-size", "512", "--reads-only",
                   "--csv", cells, "-o", tmp_path / "h.png")  # fmt: skip
    assert p.returncode == 0, p.stderr
    import pandas as pd

    df = pd.read_csv(cells)
    assert set(df["block_size"]) == {512} and df["accesses"].sum() == 80 * 8  # 8 blocks of 512 B per request
    from bufsim.heatmap import hit_ratio_over_time

    default = hit_ratio_over_time(t, caches=[8], windows=2, progress=False)
    assert set(default["block_size"]) == {bufsim.Options().resolved()["block_size"]}
    with pytest.raises(SpecError, match="block size"):
        hit_ratio_over_time(t, caches=[8], windows=2, block_size="x")
