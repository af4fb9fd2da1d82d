"""Trace analyses through Python and the command line: `bufsim.analyze`, `bufsim.mrc`,
`bufsim analyze`, `bufsim mrc`; hand-computed small traces, exact agreement of the one-pass MRC
with LRU simulation, libCacheSim's analyzer as a live oracle, and one-line errors."""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bufsim
from conftest import ROOT, block_trace, bufsim_cli, write_csv
from test_cli import check_error

TOP_KEYS = {
    "trace",
    "format",
    "block_size",
    "reads_only",
    "requests",
    "accesses",
    "footprint",
    "consecutive",
    "temporal_distance",
    "frequency",
    "working_set",
    "inter_reference_gaps",
    "distance_breakdown",
}


@pytest.fixture(scope="module")
def cloudphysics_analysis(cloudphysics):
    return bufsim.analyze(cloudphysics, working_set=False)


def hand_trace(tmp_path):
    """File a blocks 0-3 read by context 0x7, file b block 0 written by 0x9, file a blocks 0-1
    read again by 0x7: references a0 a1 a2 a3 b0 a0 a1."""
    return write_csv(
        tmp_path / "hand.csv",
        [
            ("R", "a", 0, 4 * 4096, "0x7"),
            ("W", "b", 0, 4096, "0x9"),
            ("R", "a", 0, 2 * 4096, "0x7"),
        ],
        header="op,file,offset,size,ctx",
    )


def test_hand_computed_analysis(tmp_path):
    a = bufsim.analyze(hand_trace(tmp_path), jobs=1)
    assert (a.requests["total"], a.accesses["total"], a.footprint["blocks"]) == (3, 7, 5)
    # a1, a2, a3 and the second a1 follow their predecessor (prefetching paper §6.1).
    assert a.consecutive_fraction == 4 / 7
    # a0 and a1 come back 5 references later: bin 8 (MQ paper rounds up to powers of two).
    assert [(b["distance"], b["count"]) for b in a.temporal_distance["bins"]] == [(1, 0), (2, 0), (4, 0), (8, 2)]
    assert (a.min_dist, a.max_dist) == (8, 8)
    # Figure 4: 2 of 5 blocks are accessed twice, and get 4 of the 7 accesses.
    f2 = next(p for p in a.frequency["points"] if p["frequency"] == 2)
    assert (f2["block_share"], f2["access_share"]) == (0.4, 4 / 7)
    # AMP gaps (4 other references between) belong to context 0x7.
    top = a.inter_reference_gaps["by_context"][0]
    assert (top["ctx"], top["gaps"], top["cdf"]) == (7, 2, [[4, 1.0]])
    # OPT needs 3 frames to keep a0 and a1 until they return.
    assert a.working_set_blocks == 3
    assert a.working_set["max_hit_ratio"] == 2 / 7
    r = bufsim.analyze(hand_trace(tmp_path), reads_only=True, working_set=False)
    assert (r.accesses["total"], r.working_set) == (6, None)


def test_cloudphysics_numbers(cloudphysics_analysis):
    a = cloudphysics_analysis
    assert (a.requests["total"], a.accesses["total"], a.footprint["blocks"]) == (113872, 1141869, 269210)
    assert a.format == "cloudphysics"
    assert a.temporal_distance["correlated"] + a.temporal_distance["first"] == a.accesses["total"]
    assert sum(n for _, n in a.frequency["distribution"]) == a.footprint["blocks"]
    assert 0 < a.consecutive_fraction < 1
    assert a.min_dist <= a.temporal_distance["hill"]["peak_distance"] <= a.max_dist
    assert set(a.to_dict()) == TOP_KEYS


def test_analyze_cli_prints_every_section(cloudphysics):
    p = bufsim_cli("analyze", cloudphysics, "--no-working-set")
    assert p.returncode == 0, p.stderr
    for fragment in [
        "requests              113872",
        "block accesses        1141869",
        "footprint             269210 blocks",
        "consecutive refs",
        "working set           not searched",
        "request sizes",
        "temporal distance",
        "hill: minDist",
        "frequency (MQ paper Figure 4",
        "inter-reference gaps by program context",
    ]:
        assert fragment in p.stdout, fragment


def test_analyze_cli_json(tmp_path, cloudphysics_analysis):
    p = bufsim_cli("analyze", hand_trace(tmp_path), "--json", "--jobs", "1")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert set(d) == TOP_KEYS
    assert set(d["working_set"]) == {
        "method",
        "max_hit_ratio",
        "target_hit_ratio",
        "blocks",
        "bytes",
        "hit_ratio",
        "probes",
    }
    assert set(d["temporal_distance"]) == {"correlated", "first", "hill", "hill_fraction", "bins"}
    assert set(d["temporal_distance"]["hill"]) == {"peak_distance", "min_dist", "max_dist", "share"}
    assert set(d["frequency"]) == {"blocks", "accesses", "max_frequency", "mean_frequency", "points", "distribution"}
    assert set(d["inter_reference_gaps"]) == {"contexts", "all", "by_context"}
    assert set(d["consecutive"]) == {"references", "consecutive", "fraction"}
    assert d == bufsim.analyze(hand_trace(tmp_path), jobs=1).to_dict()


def test_table3_breakdown(cloudphysics):
    df = bufsim.distance_breakdown(cloudphysics, "64MiB", ["lru", "fifo", "opt"])
    assert list(df["policy"]) == ["lru", "fifo", "opt"]
    runs = bufsim.sweep(cloudphysics, ["lru", "fifo", "opt"], ["64MiB"])
    assert list(df["below_hits"] + df["above_hits"]) == list(runs["hits"])
    assert list(df["below_misses"] + df["above_misses"] + df["first"]) == list(runs["misses"])
    assert df["below_misses"][0] == 0  # MQ paper §5: LRU has no miss below C
    p = bufsim_cli("analyze", cloudphysics, "--no-working-set", "--breakdown", "64MiB", "-p", "lru", "-p", "mru")
    assert p.returncode == 0, p.stderr
    assert "MQ paper Table 3" in p.stdout
    from bufsim.analysis import table3_policies

    # Every policy of the paper's Table 3 is there, LRU-2 as its registered spec.
    assert set(table3_policies()) == {"mq", "2q", "fbr", "lrfu", "lru-k(k=2)", "lru", "lfu", "mru", "opt"}
    check_error(bufsim_cli("analyze", cloudphysics, "--breakdown", "64MiB", "-p", "nosuch"), "unknown policy")
    # An empty list is a mistake to name, not an empty table.
    with pytest.raises(bufsim.SpecError, match="name at least one"):
        bufsim.distance_breakdown(cloudphysics, "64MiB", [])
    with pytest.raises(bufsim.SpecError, match="at least one cache size"):
        bufsim.distance_breakdown(cloudphysics, [], ["lru"])


def test_mrc_equals_lru_simulation(cloudphysics):
    sizes = [1, 100, 4096, 16384, 65536, 262144]
    df = bufsim.mrc(cloudphysics, sizes=sizes)
    assert list(df.columns) == ["cache_blocks", "cache_bytes", "misses", "miss_ratio"]
    lru = bufsim.sweep(cloudphysics, ["lru"], sizes)
    assert list(df["misses"]) == list(lru["misses"])
    assert df.attrs["distinct"] == df.attrs["cold"] == 269210
    assert list(bufsim.mrc(cloudphysics, sizes=["16MiB"])["cache_blocks"]) == [4096]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=120))
def test_mrc_at_every_size_equals_lru(blocks):
    with tempfile.TemporaryDirectory() as d:
        from pathlib import Path

        t = block_trace(Path(d) / "t.csv", blocks)
        df = bufsim.mrc(t, sizes="all")
        assert list(df["cache_blocks"]) == list(range(1, len(set(blocks)) + 1))
        lru = bufsim.sweep(t, ["lru"], list(df["cache_blocks"]), jobs=1)
        assert list(df["misses"]) == list(lru["misses"])


def test_mrc_with_shards(cloudphysics):
    df = bufsim.mrc(cloudphysics, shards=0.01)
    assert {"shards_miss_ratio", "abs_error"} <= set(df.columns)
    s = df.attrs["shards"]
    assert (s["mode"], s["rate"], s["seed"]) == ("fixed-rate", 0.01, 42)
    assert s["error"]["mean_abs"] <= 0.02  # the SHARDS paper's mean absolute error, whole curve
    only = bufsim.mrc(cloudphysics, shards_size=4096, exact=False)
    assert "misses" not in only and only.attrs["shards"]["error"] is None
    assert only.attrs["shards"]["sampled_blocks"] == 4096
    again = bufsim.mrc(cloudphysics, shards_size=4096, exact=False)
    assert list(again["shards_miss_ratio"]) == list(only["shards_miss_ratio"])


def test_mrc_cli(cloudphysics, tmp_path):
    p = bufsim_cli("mrc", cloudphysics, "--sizes", "4MiB,64MiB", "--sizes", "1GiB", "--shards", "0.1")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["cache", "blocks", "misses", "miss", "ratio", "SHARDS", "|error|"]
    assert "1009752" in p.stdout  # LRU at 16384 blocks, as `bufsim run` and libCacheSim
    assert "SHARDS error over 269210 cache sizes" in p.stdout
    t = block_trace(tmp_path / "t.csv", [1, 2, 3, 1, 2, 3, 4, 1])
    d = json.loads(bufsim_cli("mrc", t, "--sizes", "all", "--json").stdout)
    assert (d["sizes"], d["misses"], d["cold"]) == ([1, 2, 3, 4], [8, 8, 5, 4], 4)


def test_bad_input_gives_one_line_errors(tmp_path):
    bad = write_csv(tmp_path / "bad.csv", [("R", "a", 0, 4096), ("R", "a", "x", 4096)])
    for cmd in ("analyze", "mrc"):
        check_error(bufsim_cli(cmd, tmp_path / "missing.csv"), "missing.csv", "no such file")
        check_error(bufsim_cli(cmd, bad), "bad.csv:3:", "offset")
        check_error(bufsim_cli(cmd, bad, "--format", "nope"), "unknown trace format")
        check_error(bufsim_cli(cmd, bad, "--block-size", "0B"), "must be a power of two")
    ok = block_trace(tmp_path / "ok.csv", [1, 2, 1])
    check_error(bufsim_cli("mrc", ok, "--shards", "0"), "SHARDS sampling rate 0 is out of range")
    check_error(bufsim_cli("mrc", ok, "--shards", "0.1", "--shards-size", "9"), "not both")
    check_error(bufsim_cli("mrc", ok, "--sizes", "0blocks"), "no whole")
    check_error(bufsim_cli("mrc", ok, "--no-exact"), "nothing to compute")
    check_error(bufsim_cli("analyze", ok, "--hill", "1.5"), "hill fraction")
    with pytest.raises(bufsim.SpecError, match="SHARDS rate"):
        bufsim.mrc(ok, shards="0.1")
    with pytest.raises(FileNotFoundError):
        bufsim.analyze(tmp_path / "missing.csv")
    with pytest.raises(bufsim.TraceFormatError, match="bad.csv:3:"):
        bufsim.mrc(bad)


# libCacheSim's trace analyzer, live: its popularity (blocks per access count) and virtual-time
# reuse (the MQ temporal distance) on the same block sequence.
_spec = importlib.util.spec_from_file_location("analysis_oracle", ROOT / "scripts" / "libcachesim_analysis_oracle.py")
analysis_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(analysis_oracle)


def test_frequencies_equal_libcachesim_live(cloudphysics, cloudphysics_analysis):
    blocks = analysis_oracle.oracle.expand_cloudphysics(cloudphysics)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cp.oracleGeneral")
        analysis_oracle.oracle.write_oracle(blocks, path)
        live = analysis_oracle.analyze_oracle_file(path, len(blocks))
        ours = bufsim.analyze(path, working_set=False)
    assert {str(f): n for f, n in cloudphysics_analysis.frequency["distribution"]} == live["popularity"]
    assert ours.frequency == cloudphysics_analysis.frequency
    assert live["reuse_vtime_log1.5"]["-1"] == cloudphysics_analysis.temporal_distance["first"]
    golden = json.loads((ROOT / "tests" / "golden" / "analysis_libcachesim_cloudphysics.json").read_text())
    assert golden == live, "the committed golden file no longer matches libCacheSim"
