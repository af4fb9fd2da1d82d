"""ARC, CAR, CLOCK-Pro, MQ, Linux two-list and GreedyDual-Size
through the Python API and the command line: listed with parameters and papers, runnable with
and without read-ahead on the real trace, and bad parameters refused with one-line errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import bufsim
from conftest import block_trace, bufsim_cli

POLICIES = ["arc", "car", "clock-pro", "mq", "linux-2list", "gds"]


def test_listed_with_parameters_defaults_and_papers():
    infos = {p["name"]: p for p in bufsim.policies()}
    for name in POLICIES:
        assert infos[name]["paper"] and infos[name]["summary"], name
    params = {n: {k: d for k, d, _ in infos[n]["params"]} for n in POLICIES}
    assert params["mq"] == {
        "queues": "8",
        "history": "4x",
        "lifetime": "adaptive",
        "prefetch": "fresh",
        "variant": "paper",
    }
    assert params["arc"] == {"adapt": "real", "variant": "paper"}
    assert params["linux-2list"] == {"active-ratio": "1"}
    assert set(params["clock-pro"]) == {"cold-min", "cold-max", "nonresident"}
    assert infos["mq-accusim"]["preset_of"] == "mq(queues=4,history=1x,lifetime=1x,variant=accusim)"
    assert infos["arc-accusim"]["preset_of"] == "arc(adapt=integer,variant=accusim)"
    out = bufsim_cli("policies").stdout
    assert "mq-accusim" in out and "lifetime=adaptive" in out and "CLOCK-Pro" in out


@pytest.mark.parametrize("policy", POLICIES + ["mq-accusim"])
@pytest.mark.parametrize("prefetch", ["none", "linux"])
def test_runs_on_the_real_trace(policy, prefetch, cloudphysics):
    r = bufsim.simulate(cloudphysics, policy=policy, cache=4096, prefetch=prefetch, check=True)
    assert r.hits + r.misses == r.accesses == 1141869
    assert r.misses <= r.accesses


@pytest.mark.parametrize(
    "spec, message",
    [
        ("mq(queues=0)", "between 1 and 64"),
        ("mq(lifetime=soon)", "lifetime=`soon` must be `adaptive`"),
        ("mq(history=-1x)", "history"),
        ("arc(adapt=float)", "one of real, integer"),
        ("clock-pro(cold-min=60%,cold-max=10%)", "exceeds cold-max"),
        ("linux-2list(active-ratio=0)", "above 0"),
        ("gds(cost=2)", "takes no parameters"),
    ],
)
def test_bad_parameters_are_refused(spec, message, tmp_path):
    t = block_trace(tmp_path / "t.csv", [1, 2, 3])
    with pytest.raises(bufsim.SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        bufsim.simulate(t, policy=spec, cache=2)
    p = bufsim_cli("run", t, "--policy", spec, "--cache", "2blocks")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


@settings(max_examples=30, deadline=None)
@given(blocks=st.lists(st.integers(0, 30), min_size=1, max_size=300), cache=st.integers(1, 12))
def test_degenerate_configurations_equal_lru(tmp_path_factory, blocks, cache):
    t = block_trace(tmp_path_factory.mktemp("t") / "t.csv", blocks)
    df = bufsim.sweep(t, ["lru", "mq(queues=1)", "gds"], [cache], check=True)
    assert len(set(df["misses"])) == 1, df[["policy", "misses"]]
