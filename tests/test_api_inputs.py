"""The Python API on inputs a notebook user gives: single values and generators where lists are
expected, empty traces, samples that hold nothing, values JSON cannot carry, huge window counts,
and the same file as input and output. Each gives a result, a warning or a clear SpecError."""

from __future__ import annotations

import hashlib
import time
import warnings

import pytest
from conftest import block_trace, write_csv

import bufsim
from bufsim._core import SpecError
from bufsim.analysis import miniature_mrc
from bufsim.heatmap import COLUMNS, hit_ratio_over_time


def test_sweep_takes_what_run_takes(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 0, 1])
    assert bufsim.sweep(trace, (p for p in ["lru", "fifo"]), [4]).policy.tolist() == ["lru", "fifo"]
    assert bufsim.sweep(trace, ["lru"], [4], prefetches=(p for p in ["none", "linux"])).prefetch.tolist() == [
        "none",
        "linux",
    ]
    assert bufsim.sweep(trace, "lru", "64MiB").cache_blocks.tolist() == [16384]
    assert bufsim.sweep(trace, "lru", 4096).cache_blocks.tolist() == [4096]
    assert bufsim.sweep(trace, "lru", "1024blocks:4096blocks:x2").cache_blocks.tolist() == [1024, 2048, 4096]
    with pytest.raises(SpecError, match="no trace given"):
        bufsim.sweep([], ["lru"], [4])


def test_numpy_scalars_are_taken_as_their_python_values(tmp_path):
    # What an np.arange of sizes or a DataFrame cell gives: whole numbers are block counts and
    # option values as Python's own; what JSON cannot carry is named, never a TypeError.
    np = pytest.importorskip("numpy")
    trace = block_trace(tmp_path / "t.csv", [0, 1, 0, 2, 0])
    assert [r.cache_blocks for r in bufsim.run(trace, "lru", np.arange(1, 4))] == [1, 2, 3]
    assert bufsim.simulate(trace, "lru", np.int64(2)).hits == 2
    plain = bufsim.simulate(trace, "random", 2, seed=5, max_requests=4, skip_bad=True)
    numpy = bufsim.simulate(trace, "random", 2, seed=np.int64(5), max_requests=np.uint32(4), skip_bad=np.True_)
    assert (numpy.requests, numpy.hits) == (plain.requests, plain.hits) == (4, plain.hits)
    with pytest.raises(SpecError, match="must be a positive number of blocks"):
        bufsim.run(trace, "lru", np.int64(0))
    with pytest.raises(SpecError, match="option skip_bad takes a number"):
        bufsim.run(trace, "lru", 2, {"skip_bad": np.array([True])})
    # The analyses' whole-number arguments likewise.
    a = bufsim.analyze(trace, contexts=np.int64(2), jobs=np.int64(1), seed=np.uint64(5), working_set=False)
    assert a.footprint["blocks"] == 3
    assert len(bufsim.mrc(trace, shards_size=np.int64(2), seed=np.int64(1))) > 0
    assert len(hit_ratio_over_time(trace, caches=np.array([1, 2]), windows=np.int64(2))) == 4


def test_an_empty_trace_warns_in_the_api_too(tmp_path):
    trace = write_csv(tmp_path / "e.csv", [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = bufsim.simulate(trace, "lru", 64)
    assert r.requests == 0
    assert any("holds no requests" in str(w.message) for w in caught)
    assert list(hit_ratio_over_time(trace, caches=[4], windows=2).columns) == COLUMNS


def test_an_estimate_from_an_empty_sample_is_refused(tmp_path):
    trace = block_trace(tmp_path / "t.csv", list(range(200)))
    with pytest.raises(SpecError, match="SHARDS sample holds none of the trace's 200 block accesses"):
        bufsim.mrc(trace, sizes=[8, 64], shards=1e-6)
    with pytest.raises(SpecError, match="sample at rate 1e-06 holds none"):
        miniature_mrc(trace, "lru", sample=1e-6, sizes=[8, 64])
    assert miniature_mrc(trace, "lru", sample=1.0, sizes=[8])["miss_ratio"] == [1.0]


@pytest.mark.parametrize("name", ["seed", "block_size", "think", "cluster"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_values_json_cannot_carry_are_named(tmp_path, name, value):
    trace = block_trace(tmp_path / "t.csv", [0])
    with pytest.raises(SpecError, match=f"option {name} must be a finite value"):
        bufsim.simulate(trace, "lru", 64, **{name: value})


def test_an_option_key_that_is_not_a_name_is_an_unknown_option(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0])
    with pytest.raises(SpecError, match=r"unknown option\(s\) 1; known: format"):
        bufsim.run(trace, ["lru"], ["1MiB"], {1: 2})


BIG = 2**70  # 1180591620717411303424: past 2^64, where JSON numbers were read as floats


@pytest.mark.parametrize(
    "options, rule",
    [
        ({"seed": BIG}, "seed must be a whole number from 0 to 2^64 - 1"),
        ({"max_requests": BIG}, "max requests must be a whole number from 0 to 2^64 - 1"),
        ({"jobs": -BIG}, "jobs must be a whole number from 0 to 2^64 - 1"),
        ({"closed": BIG}, "closed must be a number of outstanding requests from 1 to 1000000"),
        ({"block_size": BIG}, "must be a power of two from 512 B (a sector) to 1 GiB"),
        ({"cluster": BIG}, "must be a positive number of blocks (from 1 to 2^64 - 1)"),
        ({"file_gap": BIG}, "must be a positive number of blocks (from 1 to 2^64 - 1)"),
        ({"cache_steps": {1: BIG}}, "must be a positive number of blocks (from 1 to 2^64 - 1)"),
        ({"cache_steps": [[BIG, 5]]}, "must be a whole number of requests from 0 to 2^64 - 1"),
        ({"array": BIG}, "must be a whole number from 1 to 254"),
        ({"first_level": bufsim.FirstLevel("lru", BIG)}, "must be a positive number of blocks (from 1 to 2^64 - 1)"),
    ],
)
def test_integers_past_2_64_are_shown_exactly_with_their_range(tmp_path, options, rule):
    trace = block_trace(tmp_path / "t.csv", [0])
    with pytest.raises(SpecError) as e:
        bufsim.run(trace, "lru", 64, options)
    assert rule in str(e.value), e.value
    assert str(abs(BIG)) in str(e.value) and "e+21" not in str(e.value), e.value


def test_more_windows_than_requests_cost_no_more_than_one_each(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 0])
    t0 = time.perf_counter()
    df = hit_ratio_over_time(trace, caches=[4], windows=10**9)
    assert len(df) == 2 and df.hits.tolist() == [0, 1]
    assert time.perf_counter() - t0 < 30  # was minutes: the cuts were listed over 10^9 windows


def test_filter_trace_never_writes_over_its_input(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1])
    before = hashlib.md5(trace.read_bytes()).hexdigest()
    for out in (trace, tmp_path / "." / "t.csv"):
        with pytest.raises(Exception, match="is the input trace"):
            bufsim.filter_trace(trace, out, bufsim.FirstLevel("lru", 1))
    assert hashlib.md5(trace.read_bytes()).hexdigest() == before


def test_results_and_first_levels_hash_as_they_compare(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 0])
    a, b = bufsim.simulate(trace, "lru", 4), bufsim.simulate(trace, "lru", 4)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert hash(bufsim.FirstLevel("lru", 1)) == hash(bufsim.FirstLevel("lru", 1))
    assert "params" in bufsim.policies()[0]


@pytest.mark.parametrize(
    "call",
    [
        lambda t: bufsim.analysis.mrc(t, seed=BIG),
        lambda t: bufsim.analysis.mrc(t, shards_size=BIG),
        lambda t: bufsim.analysis.analyze(t, contexts=BIG),
        lambda t: bufsim.analysis.analyze(t, jobs=BIG),
        lambda t: miniature_mrc(t, "lru", sample=0.5, seed=BIG),
    ],
)
def test_analysis_integers_past_2_64_are_refused_with_their_range(tmp_path, call):
    # They went to the native module as they were: "OverflowError: int too big to convert".
    trace = block_trace(tmp_path / "t.csv", [0])
    with pytest.raises(SpecError, match=r"from [01] to 2\^64 - 1, not " + str(BIG)):
        call(trace)
