"""The workload suite recorded with the kernel tracer (traces/kernel/, scripts/record_workloads.py):
`bufsim workloads --json` lists the thirteen workloads, each recorded trace is readable by `bufsim run`
with the counts its manifest entry gives, the four large applications have at least 1M block
accesses, and cscope's query phase is the loop the papers describe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bufsim.ktrace import read_pagecache
from conftest import ROOT, bufsim_cli

SUITE_DIR = ROOT / "traces" / "kernel"
NAMES = [
    "cscope",
    "glimpse",
    "gcc",
    "tpch",
    "tpch-mysql",
    "pgbench",
    "randread",
    "unxz",
    "multi1",
    "multi2",
    "multi3",
    "multi4",
    "multi5",
]


@pytest.fixture(scope="module")
def listing() -> list[dict]:
    r = bufsim_cli("workloads", "--json", check=True)
    return json.loads(r.stdout)


def recorded(listing: list[dict]) -> list[dict]:
    return [e for e in listing if e.get("path")]


def test_the_thirteen_workloads_are_listed(listing):
    assert [e["name"] for e in listing] == NAMES
    text = bufsim_cli("workloads", check=True).stdout
    for name in NAMES:
        assert name in text


@pytest.mark.parametrize("name", ["cscope", "glimpse", "gcc", "tpch"])
def test_large_applications_have_a_million_block_accesses(listing, name):
    e = next(e for e in listing if e["name"] == name)
    assert e.get("path"), f"{name} is not recorded (make kernel-workloads)"
    assert e["block_accesses"] >= 1_000_000
    assert e["kernel"].startswith("Linux ") and e["packages"] and e["command"]


def test_each_recorded_trace_is_readable_by_run_with_its_manifest_counts(listing):
    entries = recorded(listing)
    assert entries, "no workload recorded"
    for e in entries:
        assert Path(e["path"]).exists()
        r = bufsim_cli("run", e["path"], "--policy", "lru", "--cache", "64MiB", "--json")
        assert r.returncode == 0, r.stderr
        res = json.loads(r.stdout.splitlines()[0])
        assert res["requests"] == e["requests"], e["name"]
        assert res["accesses"] == e["block_accesses"], e["name"]


def test_cscope_queries_loop_over_the_database(listing):
    # 64 queries each scan the whole cross-reference (about 70 MB): LRU in a cache smaller than the
    # database misses nearly everything, OPT keeps most of it (the AMP report's Figure 6 pattern).
    e = next(e for e in listing if e["name"] == "cscope")
    if not e.get("path"):
        pytest.fail("cscope is not recorded (make kernel-workloads)")
    r = bufsim_cli("run", e["path"], "--policy", "lru", "--policy", "opt", "--cache", "64MiB", "--json", check=True)
    by = {json.loads(line)["policy"]: json.loads(line) for line in r.stdout.splitlines()}
    assert by["lru"]["hit_ratio"] < 0.05
    assert by["opt"]["hit_ratio"] > 0.85


def test_pagecache_companions_read(listing):
    for e in recorded(listing):
        if not e.get("pagecache"):
            continue
        events = read_pagecache(str(SUITE_DIR / e["pagecache"]), limit=200_000)
        kinds = {ev.event for ev in events}
        assert {"lookup", "insert"} <= kinds, e["name"]
        looks = [ev for ev in events if ev.event == "lookup"]
        assert all(0 <= ev.hits <= ev.count for ev in looks)
        times = [ev.time_us for ev in events]
        assert times == sorted(times)
