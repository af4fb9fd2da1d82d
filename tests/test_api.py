"""The Python API: results, DataFrames, and errors as specific exceptions."""

from __future__ import annotations

import pandas as pd
import pytest

import bufsim
from conftest import block_trace, write_csv


def test_simulate_returns_counters(tmp_path):
    t = block_trace(tmp_path / "t.csv", [1, 2, 3, 1, 4, 1, 5, 2])
    r = bufsim.simulate(t, policy="lru", cache=3)
    assert (r.accesses, r.hits, r.misses) == (8, 2, 6)
    assert r.hit_ratio == pytest.approx(0.25)
    assert r.to_dict()["cache_blocks"] == 3
    assert r.miss_ratio == pytest.approx(0.75)


def test_sizes_with_units_and_block_size(tmp_path):
    t = block_trace(tmp_path / "t.csv", list(range(10)) * 2)
    assert bufsim.simulate(t, cache="40KiB").cache_blocks == 10
    assert bufsim.simulate(t, cache="10blocks").hits == 10
    r = bufsim.simulate(t, cache="40KiB", block_size="8KiB")
    assert r.cache_blocks == 5 and r.block_size == 8192


def test_file_requests_split_into_blocks(tmp_path):
    # 10000 bytes at offset 100 touch blocks 0..2 of file a; the second file is elsewhere.
    t = write_csv(tmp_path / "t.csv", [("R", "a", 100, 10000), ("W", "b", 0, 4096), ("R", "a", 8192, 1)])
    r = bufsim.simulate(t, cache=10)
    assert (r.requests, r.accesses, r.hits, r.write_accesses) == (3, 5, 1, 1)
    assert bufsim.simulate(t, cache=10, reads_only=True).requests == 2


def test_sweep_is_a_dataframe_in_cross_product_order(cloudphysics):
    df = bufsim.sweep(cloudphysics, ["lru", "fifo"], ["4MiB", 4096])
    assert isinstance(df, pd.DataFrame)
    assert list(df["policy"]) == ["lru", "lru", "fifo", "fifo"]
    assert list(df["cache_blocks"]) == [1024, 4096, 1024, 4096]
    assert (df["hits"] + df["misses"] == df["accesses"]).all()
    one = bufsim.simulate(cloudphysics, "fifo", 4096)
    assert one.misses == int(df.iloc[3]["misses"])


def test_parallel_and_serial_sweeps_agree(cloudphysics):
    a = bufsim.sweep(cloudphysics, ["lru", "random", "clock"], [1024, 16384], jobs=1)
    b = bufsim.sweep(cloudphysics, ["lru", "random", "clock"], [1024, 16384], jobs=4)
    pd.testing.assert_frame_equal(a, b)


def test_errors_are_specific(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv: no such file"):
        bufsim.simulate(tmp_path / "nope.csv")
    bad = write_csv(tmp_path / "bad.csv", [("R", "a", 0, 4096), ("R", "a", "x", 4096)])
    with pytest.raises(bufsim.TraceFormatError, match=r"bad.csv:3: offset must be"):
        bufsim.simulate(bad)
    with pytest.raises(bufsim.SpecError, match="unknown policy `nope`"):
        bufsim.simulate(bad, policy="nope")
    with pytest.raises(bufsim.SpecError, match="no unit"):
        bufsim.simulate(bad, cache="64")
    with pytest.raises(bufsim.SpecError, match="positive"):
        bufsim.simulate(bad, cache=-3)
    with pytest.raises(bufsim.SpecError, match="unknown trace format"):
        bufsim.simulate(bad, format="parquet")
    assert issubclass(bufsim.TraceFormatError, ValueError)


def test_a_bad_spec_fails_before_any_run(tmp_path):
    t = block_trace(tmp_path / "t.csv", [1, 2, 3])
    with pytest.raises(bufsim.SpecError, match="no parameter `speed`"):
        bufsim.sweep(t, ["lru", "random(speed=3)"], [2])


def test_policies_lists_parameters_and_papers():
    names = {p["name"]: p for p in bufsim.policies()}
    for n in ["lru", "fifo", "clock", "mru", "random", "lfu", "opt"]:
        assert n in names and names[n]["paper"]
    assert ("aging", "none") == names["lfu"]["params"][0][:2]


def test_a_result_is_a_read_only_value(cloudphysics):
    import copy
    import pickle

    r = bufsim.simulate(cloudphysics, "lru", "1024blocks")
    assert pickle.loads(pickle.dumps(r)) == r
    assert copy.deepcopy(r) == r
    assert list(r.to_dict()) == [f["name"] for f in bufsim.RESULT_FIELDS]
    assert bufsim.Result(**r.to_dict()) == r
    assert r != bufsim.Result(**{**r.to_dict(), "misses": r.misses + 1})
    with pytest.raises(AttributeError):
        r.misses = 0
    with pytest.raises(TypeError):
        bufsim.Result(no_such_field=1)
    assert repr(r).startswith("Result(policy='lru'")
