"""2Q at a second-level cache, the MQ paper's setting (§5): the CloudPhysics trace (4 KiB blocks)
filtered through a 4096-block LRU first-level cache, so the second level sees only its misses.
The MQ paper found 2Q ahead of LRU there; bufsim's 2Q must beat LRU at 16384 and 65536 blocks and
give libCacheSim's TwoQ miss counts on the same stream."""

from __future__ import annotations

import importlib.util
from collections import OrderedDict

import pytest

import bufsim
from conftest import ROOT

import libcachesim  # noqa: F401  (the oracle is a test dependency)

spec = importlib.util.spec_from_file_location("oracle", ROOT / "scripts" / "libcachesim_oracle.py")
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)

SIZES = [16384, 65536]


@pytest.fixture(scope="module")
def second_level(cloudphysics, tmp_path_factory):
    first = OrderedDict()
    misses = []
    for b in oracle.expand_cloudphysics(cloudphysics):
        if b in first:
            first.move_to_end(b)
        else:
            misses.append(b)
            first[b] = None
            if len(first) > 4096:
                first.popitem(last=False)
    path = tmp_path_factory.mktemp("second") / "second.oracleGeneral"
    oracle.write_oracle(misses, str(path))
    return str(path), len(misses)


def test_2q_beats_lru_below_a_first_level_lru(second_level):
    path, n = second_level
    df = bufsim.sweep(path, ["lru", "2q"], SIZES)
    lru = list(df[df["policy"] == "lru"]["misses"])
    two_q = list(df[df["policy"] == "2q"]["misses"])
    for size, a, b in zip(SIZES, lru, two_q):
        assert b < a, f"2Q {b} not below LRU {a} at {size}"
    for size, ours in zip(SIZES, two_q):
        assert ours == oracle.lcs_misses(path, n, "TwoQ", {}, size)
    assert lru == [oracle.lcs_misses(path, n, "LRU", {}, s) for s in SIZES]
