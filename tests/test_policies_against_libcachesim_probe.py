"""Differential probe against libCacheSim on small seeded traces (uniform, Zipf, loops one block
larger than the cache, scans over a hot set) at the extreme cache sizes (1-3 blocks, just below,
at and above the distinct blocks), and the minimal traces of every difference the probe found,
each pinned with both counts and the cause named in the policy's doc page."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import bufsim
from conftest import ROOT, block_trace

import libcachesim as lcs

spec = importlib.util.spec_from_file_location("oracle", ROOT / "scripts" / "libcachesim_oracle.py")
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)


def lcs_cache(cls: str, size: int, **params):
    return oracle.lcs_class(cls)(cache_size=size, hashpower=16, **params)


def lcs_hits(cache, seq: list[int]) -> list[bool]:
    return [bool(cache.get(lcs.Request(obj_size=1, obj_id=b))) for b in seq]


def lcs_misses(cls: str, size: int, seq: list[int], **params) -> int:
    return lcs_hits(lcs_cache(cls, size, **params), seq).count(False)


def our_misses(tmp_path, policy: str, sizes: list[int], seq: list[int]) -> list[int]:
    trace = block_trace(tmp_path / "t.csv", seq)
    return [int(m) for m in bufsim.sweep(trace, [policy], sizes, jobs=1)["misses"]]


def traces() -> list[tuple[str, list[int]]]:
    rng = np.random.default_rng(20261129)
    out = [("uniform", rng.integers(1, 61, 700).tolist())]
    for alpha in (0.7, 1.2):
        ranks = np.arange(1, 151, dtype=float)
        cdf = np.cumsum(ranks**-alpha)
        cdf /= cdf[-1]
        out.append((f"zipf{alpha}", (np.searchsorted(cdf, rng.random(800), side="right") + 1).tolist()))
    out.append(("loop", list(range(1, 42)) * 12))
    seq: list[int] = []
    scan = 1000
    while len(seq) < 800:
        if rng.random() < 0.3:
            k = int(rng.integers(1, 40))
            seq += range(scan, scan + k)
            scan += k
        else:
            seq += rng.integers(1, 21, int(rng.integers(1, 20))).tolist()
    out.append(("scan+hot", seq[:800]))
    return out


def sizes_of(seq: list[int], least: int = 1, multiple: int = 1) -> list[int]:
    d = len(set(seq))
    wanted = {1, 2, 3, 4, 8, d // 4, d // 2, d - 1, d, d + 1, 40, 41}
    return sorted(c for c in wanted if c >= least and c % multiple == 0)


# Pairs whose miss counts are equal on every trace and size of the probe (63 traces x 13 sizes);
# the smallest size each is equal from (libCacheSim caches nothing below it, see the tests that
# follow), and the multiple sizes must be of (SLRU, docs/policies/slru.md).
EXACT = [
    ("lru", "LRU", {}, 1, 1),
    ("fifo", "FIFO", {}, 1, 1),
    ("clock", "Clock", {}, 1, 1),
    ("arc", "ARC", {}, 1, 1),
    ("lru-k(crp=0,history=0)", "LRUK", {}, 1, 1),
    ("lfu", "LFU", {}, 1, 1),
    ("lrfu(lambda=0)", "LFU", {}, 1, 1),
    ("sieve", "Sieve", {}, 1, 1),
    ("gdsf(variant=libcachesim)", "GDSF", {}, 1, 1),
    ("2q", "TwoQ", {}, 4, 1),
    ("slru(variant=libcachesim)", "SLRU", {}, 4, 4),
    ("s3-fifo", "S3FIFOv0", {}, 20, 1),
    ("s3-fifo(variant=libcachesim)", "S3FIFO", {}, 20, 1),
    ("clock2q+", "Clock2QPlus", {}, 20, 1),
]


@pytest.mark.parametrize("policy, cls, params, least, multiple", EXACT, ids=[e[0] for e in EXACT])
def test_equal_misses_on_small_seeded_traces(tmp_path, policy, cls, params, least, multiple):
    checked = 0
    for name, seq in traces():
        sizes = sizes_of(seq, least, multiple)
        ours = our_misses(tmp_path, policy, sizes, seq)
        for c, m in zip(sizes, ours):
            assert m == lcs_misses(cls, c, seq, **params), f"{policy} on {name} at {c} blocks"
            checked += 1
    assert checked >= 15


# --- Differences, each on its minimal trace ---------------------------------------------------

# MQ (docs/policies/mq.md): with 2 blocks Qout holds 8. Blocks 2..9 fill it, so 2 comes back as
# the oldest entry of a full Qout. The paper's Figure 5 evicts 10 into Qout first, which drops 2:
# it restarts at count 1 (queue 0) and 11 evicts it. libCacheSim looks 2 up first and restores
# its count plus one (queue 1, with 1), so 11 evicts 1, which then misses.
MQ_SEQ = [1, 1, *range(2, 11), 2, 11, 1]


def test_mq_oldest_qout_entry_rule(tmp_path):
    assert our_misses(tmp_path, "mq(lifetime=10000)", [2], MQ_SEQ) == [12]
    assert lcs_misses("MQ", 2, MQ_SEQ, n_queue=8, lifetime=10000, qout_size_ratio=4.0) == 13


# LIRS (docs/policies/lirs.md): with fewer than 200 blocks libCacheSim's Q holds one block. A hit
# on the resident HIR block of Q that is not in S (the 4th request, block 1) demotes the bottom LIR
# block 2 into Q, and evicting Q's front to make room evicts block 1 itself, which stays in S
# marked resident: libCacheSim then holds one block, and counts the last access to 1 as a hit.
LIRS_SEQ = [1, 2, 2, 1, 3, 1]
LIRS = "lirs(hir-min=1,stack=2x,variant=libcachesim)"


def test_lirs_libcachesim_counts_a_hit_on_a_block_it_evicted(tmp_path):
    cache = lcs_cache("LIRS", 2)
    assert lcs_hits(cache, LIRS_SEQ[:4]) == [False, False, True, True]
    # Two distinct blocks, a 2-block cache, no miss since the cache filled: yet one block left.
    assert cache.get_n_obj() == 1
    assert lcs_hits(cache, LIRS_SEQ[4:]) == [False, True]
    assert our_misses(tmp_path, LIRS, [2], LIRS_SEQ) == [4]
    assert our_misses(tmp_path, "lirs", [2], LIRS_SEQ) == [4]


# With 200 blocks or more (Q of 2 or more) no phantom: the remaining difference is libCacheSim's
# eviction at the time of that hit, where bufsim's variant evicts Q's front at the next miss. A
# 200-block loop run twice, then block 1: in the second pass libCacheSim's hits on Q's blocks evict,
# so block 200 misses although all 200 blocks fit, and the cache ends one block short of full.
def test_lirs_eager_eviction_on_a_hit_differs_from_the_next_miss(tmp_path):
    seq = list(range(1, 201)) * 2 + [1]
    cache = lcs_cache("LIRS", 200)
    hits = lcs_hits(cache, seq)
    assert [i for i, h in enumerate(hits) if not h] == [*range(200), 399]
    assert cache.get_n_obj() == 199
    assert our_misses(tmp_path, LIRS, [200], seq) == [200]


# Tiny caches: libCacheSim gives a share of 0 blocks to a queue every new block must enter, and
# then caches nothing; bufsim follows the papers, which cache.
@pytest.mark.parametrize(
    "policy, cls, size",
    [
        ("2q", "TwoQ", 1),  # A1in: 25% of 1-3 blocks rounds down to 0 (TwoQ_can_insert refuses)
        ("2q", "TwoQ", 3),
        ("slru(variant=libcachesim)", "SLRU", 1),  # four segments of 0 blocks below 4
        ("slru(variant=libcachesim)", "SLRU", 3),
        ("clock2q+", "Clock2QPlus", 1),  # the small FIFO, 10%: 0 or 1 block below 20
        ("clock2q+", "Clock2QPlus", 10),
        ("s3-fifo", "S3FIFOv0", 10),  # S of 1 block (below 10 blocks libCacheSim aborts)
        ("s3-fifo(variant=libcachesim)", "S3FIFO", 19),
    ],
)
def test_libcachesim_caches_nothing_at_tiny_sizes(tmp_path, policy, cls, size):
    seq = [1, 1]
    assert lcs_misses(cls, size, seq) == 2
    assert our_misses(tmp_path, policy, [size], seq) == [1]
