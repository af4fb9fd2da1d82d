"""Cacheus against libCacheSim: why the counts differ (docs/policies/cacheus.md). libCacheSim's
SR-LRU evicts on its own once its SR list passes its target (half the cache at the start), so its
Cacheus never fills the cache; bufsim's, as the paper's, evicts only when the cache is full."""

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


def test_libcachesims_cacheus_evicts_before_the_cache_is_full():
    # 100 distinct blocks twice through a 100-block cache: whatever fits stays. libCacheSim's
    # Cacheus keeps only SR's 50 of the first pass (150 misses); bufsim's keeps all (100).
    blocks = list(range(1, 101)) * 2
    with tempfile.TemporaryDirectory() as d:
        lcs_path = os.path.join(d, "t.oracleGeneral")
        oracle.write_oracle(blocks, lcs_path)
        assert oracle.lcs_misses(lcs_path, len(blocks), "LRU", {}, 100) == 100
        assert oracle.lcs_misses(lcs_path, len(blocks), "Cacheus", {}, 100) == 150
        ours_path = os.path.join(d, "t.csv")
        with open(ours_path, "w") as f:
            f.write("".join(f"{b}\n" for b in blocks))
        assert bufsim.simulate(ours_path, "cacheus", "100blocks").misses == 100


def test_cacheus_rejects_bad_parameters():
    trace = str(ROOT / "traces" / "gcc.csv.gz")
    with pytest.raises(Exception, match="learning-rate"):
        bufsim.simulate(trace, "cacheus(learning-rate=2)", "100blocks")
    with pytest.raises(Exception, match="lru-weight"):
        bufsim.simulate(trace, "cacheus(lru-weight=-1)", "100blocks")
