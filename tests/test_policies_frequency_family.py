"""The frequency family (GDSF, LFU-DA, W-TinyLFU, Hyperbolic) through the Python API and the
command line: listed with parameters and papers, runnable with and without read-ahead (invariants
checked) on the real trace and on small random traces, and bad parameters refused with one-line
errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import bufsim
from conftest import block_trace, bufsim_cli

FAMILY = [
    "gdsf",
    "gdsf(variant=libcachesim)",
    "lfu-da",
    "w-tinylfu",
    "w-tinylfu(adaptive=true)",
    "lhd",
    "w-tinylfu(variant=libcachesim)",
    "hyperbolic",
]


def test_listed_with_parameters_defaults_and_papers():
    infos = {p["name"]: p for p in bufsim.policies()}
    params = {n: {k: d for k, d, _ in infos[n]["params"]} for n in ["gdsf", "w-tinylfu", "hyperbolic"]}
    assert params["gdsf"] == {"variant": "paper"}
    assert params["w-tinylfu"] == {
        "window": "1%",
        "protected": "80%",
        "doorkeeper": "true",
        "adaptive": "false",
        "variant": "paper",
        "sample": "10",
    }
    assert params["hyperbolic"] == {"samples": "64", "seed": "run"}
    assert infos["lfu-da"]["preset_of"] == "lfu(aging=dynamic)"
    assert "TOS 2017" in infos["w-tinylfu"]["paper"] and "ATC 2017" in infos["hyperbolic"]["paper"]
    out = bufsim_cli("policies").stdout
    assert "w-tinylfu" in out and "hyperbolic" in out and "lfu-da" in out


@pytest.mark.parametrize("policy", FAMILY)
@pytest.mark.parametrize("prefetch", ["none", "linux"])
def test_runs_on_the_real_trace(policy, prefetch, cloudphysics):
    r = bufsim.simulate(cloudphysics, policy=policy, cache=4096, prefetch=prefetch, check=True)
    assert r.hits + r.misses == r.accesses == 1141869


def test_the_same_seed_gives_the_same_hyperbolic_run(cloudphysics):
    a = bufsim.simulate(cloudphysics, policy="hyperbolic", cache=1024, seed=5)
    b = bufsim.simulate(cloudphysics, policy="hyperbolic", cache=1024, seed=5)
    assert a.misses == b.misses


@pytest.mark.parametrize(
    "spec, message",
    [
        ("gdsf(variant=lcs)", "one of paper, libcachesim"),
        ("w-tinylfu(window=150%)", "between 0% and 100%"),
        ("w-tinylfu(sample=0)", "sample must be at least 1"),
        ("w-tinylfu(doorkeeper=maybe)", "true or false"),
        ("hyperbolic(samples=0)", "from 1 to 1048576"),
        ("lfu-da(aging=sometimes)", "one of none, halve, dynamic"),
    ],
)
def test_bad_parameters_are_refused(spec, message, tmp_path):
    t = block_trace(tmp_path / "t.csv", [1, 2, 3])
    with pytest.raises(bufsim.SpecError, match=message):
        bufsim.simulate(t, policy=spec, cache=2)
    p = bufsim_cli("run", t, "--policy", spec, "--cache", "2blocks")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


@settings(max_examples=30, deadline=None)
@given(blocks=st.lists(st.integers(0, 40), min_size=1, max_size=400), cache=st.integers(1, 12))
def test_invariants_hold_on_random_traces_and_gdsf_is_lfu_da(tmp_path_factory, blocks, cache):
    t = block_trace(tmp_path_factory.mktemp("t") / "t.csv", blocks)
    df = bufsim.sweep(t, FAMILY, [cache], check=True)
    m = dict(zip(df["policy"], df["misses"]))
    assert m["gdsf"] == m["lfu-da"]
    assert all(v <= len(blocks) for v in m.values())


@pytest.mark.parametrize("policy", FAMILY)
def test_timed_mode_with_read_ahead(policy, tmp_path):
    # A refused newcomer (gdsf's libcachesim entry rule) goes straight to the device in timed mode.
    blocks = [b % 50 for b in range(0, 3000, 3)] + list(range(200, 260)) * 3
    t = block_trace(tmp_path / "t.csv", blocks)
    r = bufsim.simulate(t, policy=policy, cache=16, prefetch="linux", timing=True, check=True)
    assert r.hits + r.misses == r.accesses == len(blocks)


# A loop over 1,050 blocks through 1,000 frames, 20 times (docs/policies/hyperbolic.md).
# libCacheSim's Hyperbolic (binding 0.3.5, a fresh process) misses 19,160 times; ours 4.8-5.3% more.
LOOP_BLOCKS, LOOP_FRAMES, LOOP_PASSES, LCS_LOOP_MISSES = 1050, 1000, 20, 19160


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & (2**64 - 1)
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
    return x ^ (x >> 31)


def _hyperbolic_misses(blocks: list[int], frames: int, draw: str, seed: int, samples: int = 64) -> int:
    """Hyperbolic (n / age, least of `samples` draws with replacement, first minimum kept) with
    the draw rule of bufsim and the paper (`uniform`: every resident block equally likely) or of
    libCacheSim's `chained_hashtable_rand_obj_v2` (`bucket`: a random non-empty bucket of a
    chained hash table, then a random object of its chain; the table doubles when it holds more
    objects than buckets and halves after 33 empty buckets in a row; 2^12 buckets to start)."""
    import random

    rng = random.Random(seed)
    info: dict[int, list[int]] = {}  # block -> [n, entry time]
    resident: list[int] = []  # uniform draws
    where: dict[int, int] = {}
    table: list[list[int]] = [[] for _ in range(1 << 12)]  # bucket draws

    def rehash(size: int) -> None:
        old = [b for chain in table for b in chain]
        table[:] = [[] for _ in range(size)]
        for b in old:
            table[_splitmix64(b) & (size - 1)].insert(0, b)

    def draw_one() -> int:
        if draw == "uniform":
            return resident[rng.randrange(len(resident))]
        pos, empty = rng.getrandbits(64) & (len(table) - 1), 0
        while not table[pos]:
            empty += 1
            if empty > 32:
                rehash(len(table) // 2)
            pos = rng.getrandbits(64) & (len(table) - 1)
        return table[pos][rng.getrandbits(64) % len(table[pos])]

    misses = 0
    for now, b in enumerate(blocks, 1):
        if b in info:
            info[b][0] += 1
            continue
        misses += 1
        if len(info) == frames:
            best, best_n, best_age = -1, 1, 0
            for _ in range(samples):
                s = draw_one()
                n, age = info[s][0], now - info[s][1]
                if n * best_age < best_n * age:
                    best, best_n, best_age = s, n, age
            del info[best]
            table[_splitmix64(best) & (len(table) - 1)].remove(best)
            i, last = where.pop(best), resident.pop()
            if last != best:
                resident[i], where[last] = last, i
        if len(info) > len(table):
            rehash(2 * len(table))
        info[b] = [1, now]
        table[_splitmix64(b) & (len(table) - 1)].insert(0, b)
        where[b] = len(resident)
        resident.append(b)
    return misses


def test_hyperbolic_on_a_loop_differs_from_libcachesim_by_its_hash_table_draws(tmp_path):
    # libCacheSim draws a bucket, then an object of its chain: a block sharing a bucket is drawn
    # less often, so it is evicted less often and some of the loop stays. Uniform draws (the
    # paper's, ours) give LRU-like misses on a loop slightly larger than the cache.
    blocks = list(range(LOOP_BLOCKS)) * LOOP_PASSES
    t = block_trace(tmp_path / "loop.csv", blocks)
    ours = {s: bufsim.simulate(t, policy="hyperbolic", cache=LOOP_FRAMES, seed=s).misses for s in (42, 2)}
    assert ours == {42: 20167, 2: 20081}
    assert all(0.04 < m / LCS_LOOP_MISSES - 1 < 0.06 for m in ours.values())
    # The cause, measured: the same policy with uniform draws lands on ours, with libCacheSim's
    # bucket-then-chain draws on libCacheSim's count.
    # Which blocks share a bucket is fixed for a run, so one run of the bucket rule strays by about
    # 1% (19,122 to 19,501 over seeds 1-4); their mean is within 1% of libCacheSim's.
    uniform = _hyperbolic_misses(blocks, LOOP_FRAMES, "uniform", seed=1)
    bucket = sum(_hyperbolic_misses(blocks, LOOP_FRAMES, "bucket", seed=s) for s in range(1, 5)) / 4
    assert abs(uniform / ours[42] - 1) < 0.005, uniform
    assert abs(bucket / LCS_LOOP_MISSES - 1) < 0.01, bucket
    assert bucket < 0.97 * uniform
