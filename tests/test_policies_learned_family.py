"""LeCaR against libCacheSim, live, and why a run must start a fresh process: libCacheSim's
random stream lives for the whole process (docs/policies/lecar.md)."""

from __future__ import annotations

import importlib.util
import os
import tempfile

import pytest

import bufsim
from conftest import ROOT

import libcachesim  # noqa: F401  (the oracle is a test dependency)

spec = importlib.util.spec_from_file_location("oracle", ROOT / "scripts" / "libcachesim_oracle.py")
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)

SIZES = [4096, 65536]


@pytest.fixture(scope="module")
def oracle_trace(cloudphysics):
    blocks = oracle.expand_cloudphysics(cloudphysics)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cp.oracleGeneral")
        oracle.write_oracle(blocks, path)
        yield path, len(blocks)


def test_lecar_equals_a_fresh_libcachesim(cloudphysics, oracle_trace):
    path, n = oracle_trace
    ours = bufsim.sweep(cloudphysics, ["lecar(variant=libcachesim)"], SIZES)
    for size, misses in zip(SIZES, ours["misses"]):
        assert misses == oracle.lcs_misses(path, n, "LeCaR", {}, size), f"LeCaR at {size}"


def test_libcachesims_stream_carries_over_between_runs_in_one_process(oracle_trace):
    # Two LeCaR runs in this process: the second draws where the first stopped, so the counts
    # differ from each other, though by far less than 1% (the rules are the same).
    path, n = oracle_trace
    a = oracle.lcs_misses_here(path, n, "LeCaR", {}, 65536)
    b = oracle.lcs_misses_here(path, n, "LeCaR", {}, 65536)
    assert a != b
    assert abs(a - b) / a < 0.01


def test_cart_and_lecar_reject_bad_parameters():
    with pytest.raises(Exception, match="lru-weight"):
        bufsim.simulate(str(ROOT / "traces" / "gcc.csv.gz"), "lecar(lru-weight=2)", "100blocks")
    with pytest.raises(Exception, match="variant"):
        bufsim.simulate(str(ROOT / "traces" / "gcc.csv.gz"), "lecar(variant=lecar.c)", "100blocks")
    with pytest.raises(Exception, match="takes no parameters"):
        bufsim.simulate(str(ROOT / "traces" / "gcc.csv.gz"), "cart(p=1)", "100blocks")
