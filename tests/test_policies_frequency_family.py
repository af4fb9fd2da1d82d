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
