"""`cache_steps`: the cache size changing over the trace (the run option `bufsim validate` gives
the model), from Python, the command line and a sweep; refused with one line where it cannot
apply; and without it a run is what it was."""

from __future__ import annotations

import json

import pytest

import bufsim
from bufsim import SpecError
from conftest import bufsim_cli


def loop(tmp_path, passes=4):
    """A loop over 4 blocks of one file: requests 0, 1, 2, 3, 0, 1, ..."""
    t = tmp_path / "loop.csv"
    t.write_text("op,file,offset,size\n" + "".join(f"R,f,{b * 4096},4096\n" for _ in range(passes) for b in range(4)))
    return t


def test_a_fall_evicts_and_a_rise_refills(tmp_path):
    t = loop(tmp_path)
    full = bufsim.simulate(t, "lru", 4)
    assert (full.misses, full.evictions) == (4, 0)
    # 4 blocks for two passes, then 3: every access of the last two passes misses; the fall
    # itself evicts the least recently used block.
    fell = bufsim.simulate(t, "lru", 4, cache_steps=[(8, 3)])
    assert (fell.misses, fell.evictions) == (4 + 8, 1 + 8)
    # 3 blocks (all miss), then 4 from request 8: one miss brings the loop back in.
    rose = bufsim.simulate(t, "lru", 3, cache_steps={8: 4})
    assert (rose.misses, rose.evictions) == (8 + 1, 5)
    assert rose.cache_steps == "8=4blocks" and rose.cache_blocks == 3
    # The linux policy takes steps too.
    assert bufsim.simulate(t, "linux", 4, cache_steps=["8=3"]).misses > full.misses


def test_the_command_line_takes_repeated_steps(tmp_path):
    t = loop(tmp_path)
    p = bufsim_cli(
        "run", t, "-p", "lru", "-c", "4blocks", "--cache-steps", "8=3", "--cache-steps", "12=16KiB", "--json"
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.splitlines()[0])
    # 4 blocks, 3 from request 8 (4 misses), 4 again from request 12 (1 miss brings it back).
    assert (r["misses"], r["cache_steps"]) == (4 + 4 + 1, "8=3blocks;12=4blocks")


def test_a_sweep_keeps_the_steps_with_its_runs(tmp_path):
    t = loop(tmp_path)
    df = bufsim.sweep(t, ["lru", "fifo"], [4], cache_steps=["8=3"])
    assert set(df["cache_steps"]) == {"8=3blocks"} and list(df["misses"]) == [12, 12]


def test_where_steps_cannot_apply_one_line_says_why(tmp_path):
    t = loop(tmp_path)
    with pytest.raises(SpecError, match="policy `arc` cannot change its cache size during a run"):
        bufsim.simulate(t, "arc", 4, cache_steps=[(8, 3)])
    with pytest.raises(SpecError, match="count mode only"):
        bufsim.simulate(t, "lru", 4, cache_steps=[(8, 3)], timing=True)
    p = bufsim_cli("run", t, "-p", "lirs", "-c", "4blocks", "--cache-steps", "8=3")
    assert p.returncode == 2 and "cannot change its cache size" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    p = bufsim_cli("run", t, "-p", "lru", "-c", "4blocks", "--cache-steps", "8")
    assert p.returncode == 2 and "INDEX=SIZE" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_without_steps_nothing_changes(cloudphysics):
    plain = bufsim.run(cloudphysics, ["lru", "linux"], ["1MiB", "4MiB"], {"max_requests": 20000})
    # Steps that never come (past the last request) keep every number too.
    never = bufsim.run(
        cloudphysics, ["lru", "linux"], ["1MiB", "4MiB"], {"max_requests": 20000, "cache_steps": "10000000=1"}
    )
    for a, b in zip(plain, never):
        assert (a.hits, a.misses, a.evictions, a.disk_requests) == (b.hits, b.misses, b.evictions, b.disk_requests)
