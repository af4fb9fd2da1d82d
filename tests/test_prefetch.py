"""Read-ahead and clustering: the prefetching paper's Table 1 through the CLI, and the
qualitative findings of its §6 on generated traces."""

from __future__ import annotations

import json
import random

import pytest

import bufsim
from conftest import bufsim_cli, write_csv

PREFETCHERS = ["linux", "linux-ondemand", "bsd", "simple(min=3,max=8)"]


def test_reproduce_table1_matches_the_paper():
    p = bufsim_cli("reproduce", "prefetch-table1", "--rows")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(l) for l in p.stdout.splitlines()]
    assert len(rows) == 4
    assert all(r["bufsim"] == r["paper"] for r in rows), rows
    human = bufsim_cli("reproduce", "prefetch-table1")
    assert "4 of 4 findings agree" in human.stdout


@pytest.mark.parametrize("prefetch", PREFETCHERS)
def test_sequential_scan_needs_less_than_half_the_disk_requests(tmp_path, prefetch):
    # Two files read front to back, one 4 KiB block per read call.
    rows = [("R", f, b * 4096, 4096) for f in ("x", "y") for b in range(5000)]
    t = write_csv(tmp_path / "scan.csv", rows)
    off = bufsim.simulate(t, "lru", "16MiB")
    on = bufsim.simulate(t, "lru", "16MiB", prefetch=prefetch)
    assert off.disk_requests == 10000
    assert on.disk_requests < off.disk_requests / 2, (prefetch, on.disk_requests)
    assert on.blocks_read == off.blocks_read == 10000  # nothing wasted on a scan
    # At most one read in `max` misses (simple fetches 8 at a time; the others ramp to 32).
    assert on.prefetch_hits >= 0.85 * 10000


@pytest.mark.parametrize("prefetch", ["linux", "simple(min=3,max=8)"])
def test_random_single_block_reads_read_more_blocks(tmp_path, prefetch):
    rng = random.Random(5)
    rows = [("R", f"f{rng.randrange(8)}", rng.randrange(50_000) * 4096, 4096) for _ in range(20_000)]
    # Large files: the end of each is far from the reads.
    rows += [("R", f"f{i}", 50_000 * 4096, 4096) for i in range(8)]
    t = write_csv(tmp_path / "random.csv", rows)
    off = bufsim.simulate(t, "lru", "4MiB")
    on = bufsim.simulate(t, "lru", "4MiB", prefetch=prefetch)
    assert on.blocks_read > 1.5 * off.blocks_read
    assert on.prefetched_unused > 0.8 * on.prefetched


def test_bsd_does_not_prefetch_random_reads(tmp_path):
    rng = random.Random(9)
    rows = [("R", "f", rng.randrange(100_000) * 4096, 4096) for _ in range(5000)]
    t = write_csv(tmp_path / "random.csv", rows)
    on = bufsim.simulate(t, "lru", "1MiB", prefetch="bsd")
    assert on.prefetched < 50


def test_prefetch_results_in_json_and_table(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", b * 4096, 4096) for b in range(100)])
    p = bufsim_cli("run", t, "-p", "lru", "-c", "64blocks", "--prefetch", "linux", "--json")
    row = json.loads(p.stdout)
    for key in ["disk_requests", "sync_requests", "async_requests", "blocks_read", "prefetched_unused", "prefetch"]:
        assert key in row
    assert row["sync_requests"] + row["async_requests"] == row["disk_requests"]
    p = bufsim_cli("run", t, "-c", "64blocks", "--prefetch", "none", "--prefetch", "bsd")
    assert "prefetch" in p.stdout.splitlines()[0] and "bsd" in p.stdout


def test_cluster_size_bounds_disk_requests(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 64 * 4096)])
    assert bufsim.simulate(t, "lru", 100).disk_requests == 4  # 64 blocks in 64 KiB requests
    assert bufsim.simulate(t, "lru", 100, cluster="128KiB").disk_requests == 2
    assert bufsim.simulate(t, "lru", 100, cluster="1blocks").disk_requests == 64
    with pytest.raises(bufsim.SpecError, match="smaller than one block"):
        bufsim.simulate(t, "lru", 100, cluster="1KiB")


def test_bad_prefetch_specs(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    with pytest.raises(bufsim.SpecError, match="unknown prefetch `windows`"):
        bufsim.simulate(t, prefetch="windows")
    with pytest.raises(bufsim.SpecError, match="no parameter `mx`"):
        bufsim.simulate(t, prefetch="linux(mx=4)")
    p = bufsim_cli("run", t, "--prefetch", "linux(min=0)")
    assert p.returncode == 2 and "from 1 to 4294967296" in p.stderr and "Traceback" not in p.stderr
