"""The bundled real traces (traces/*.csv.gz, made by scripts/collect_workloads.py): each runs
through the simulator with several policies, the README table matches the traces, and the TPC-H
trace holds the repeated scans from one call site that AMP must find (a looping context).

The traces are decompressed to a temporary file first, as a user of the plain CSV would have them."""

from __future__ import annotations

import collections
import csv
import gzip
import shutil
import sys
from pathlib import Path

import pytest

from bufsim._core import Trace
from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import trace_stats  # noqa: E402

TRACES = ROOT / "traces"
NAMES = ["grep", "tpch", "gcc", "multi"]


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    d = tmp_path_factory.mktemp("traces")
    out = {}
    for n in NAMES:
        src = TRACES / f"{n}.csv.gz"
        assert src.exists(), f"{src} missing: regenerate with make workloads"
        out[n] = d / f"{n}.csv"
        with gzip.open(src, "rb") as f, open(out[n], "wb") as g:
            shutil.copyfileobj(f, g)
    return out


def rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


@pytest.mark.parametrize("name", NAMES)
def test_bundled_trace_runs_with_several_policies(plain, name):
    t = Trace(str(plain[name]))
    results = t.run(["lru", "clock", "mru", "lfu", "opt"], ["256blocks", "2048blocks"], check=True)
    by = {(r["policy"], r["cache_blocks"]): r for r in results}
    for r in results:
        assert r["requests"] == len(t) > 1000
        assert r["hits"] + r["misses"] == r["accesses"]
    for c in (256, 2048):
        assert by[("opt", c)]["misses"] <= min(by[(p, c)]["misses"] for p in ("lru", "clock", "mru", "lfu"))
        assert by[("lru", 2048)]["misses"] <= by[("lru", 256)]["misses"]


def test_readme_table_matches_the_traces():
    text = (TRACES / "README.md").read_text()
    for n in NAMES:
        s = trace_stats.stats(str(TRACES / f"{n}.csv.gz"))
        table_rows = [
            [c.strip() for c in l.strip().strip("|").split("|")]
            for l in text.splitlines()
            if l.startswith(f"| `{n}.csv.gz` |")
        ]
        row = cells = next(r for r in table_rows if len(r) == len(trace_stats.COLUMNS))
        assert cells[1] == f"{s['requests']:,}" and cells[4] == f"{s['block_refs']:,}", row
        assert cells[5] == f"{s['footprint_blocks']:,}" and cells[10] == f"{100 * s['consecutive']:.1f}%", row


def test_consecutive_fraction_follows_the_papers_examples():
    # Prefetching paper §6.1: 75, 75, 62.5 and 75 percent.
    for blocks, want in [
        ((5, 6, 7, 8), 0.75),
        ((1, 2, 3, 4, 100, 101, 102, 103), 0.75),
        ((1, 100, 2, 3, 4, 5, 6, 7), 0.625),
        ((1, 2, 3, 100, 101, 102, 103, 104), 0.75),
    ]:
        assert trace_stats.consecutive_fraction(("p", "f", b) for b in blocks) == want
    # The same block again counts; another file or another process's reference does not chain.
    assert trace_stats.consecutive_fraction([("p", "f", 1), ("p", "f", 1), ("p", "g", 2), ("q", "f", 2)]) == 0.25


def test_tpch_has_a_looping_context(plain):
    """One call site scans lineitem again and again: most of its blocks are read in at least three
    passes, each pass going up through the table."""
    refs = collections.defaultdict(list)
    for r in rows(plain["tpch"]):
        if r["op"] == "R" and r["file"].endswith("/tpch.db"):
            refs[r["ctx"]].append(int(r["offset"]) // 4096)
    ctx, blocks = max(refs.items(), key=lambda kv: len(kv[1]))
    counts = collections.Counter(blocks)
    assert len(counts) >= 2000
    assert sum(1 for c in counts.values() if c >= 3) >= 0.9 * len(counts)
    lowest = min(counts)
    passes = sum(1 for b in blocks if b == lowest)
    assert passes >= 3


def test_multi_interleaves_two_programs(plain):
    spans = {}
    for r in rows(plain["multi"]):
        kind = "tpch" if "/tpch/" in r["file"] else "grep"
        t = int(r["time_us"])
        lo, hi = spans.get(kind, (t, t))
        spans[kind] = (min(lo, t), max(hi, t))
    assert set(spans) == {"grep", "tpch"}
    assert spans["grep"][0] < spans["tpch"][1] and spans["tpch"][0] < spans["grep"][1]


def test_gcc_build_has_many_processes_and_temporary_file_generations(plain):
    rs = rows(plain["gcc"])
    assert len({r["pid"] for r in rs}) >= 32
    temp = {r["file"] for r in rs if "/tmp/cc" in r["file"] and r["file"].endswith(".s")}
    # One assembler file per compile, each its own file even where /tmp gave the inode number of
    # a deleted one to the next (the generations of docs/collect.md).
    assert len(temp) >= 32


@pytest.mark.parametrize("name", NAMES)
def test_bundled_trace_is_in_start_time_order(plain, name):
    times = [int(r["time_us"]) for r in rows(plain[name])]
    assert all(a <= b for a, b in zip(times, times[1:]))
