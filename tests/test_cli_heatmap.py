"""`bufsim heatmap`: the windows of a hit-ratio heatmap add up to the full runs."""

from __future__ import annotations

import csv

import bufsim
from conftest import ROOT, bufsim_cli


def test_heatmap_windows_add_up_to_the_full_run(tmp_path):
    trace = ROOT / "traces" / "tpch.csv.gz"
    out, cells = tmp_path / "hm.png", tmp_path / "hm.csv"
    p = bufsim_cli(
        "heatmap", trace, "-p", "lru", "-c", "64blocks", "-c", "1024blocks", "--windows", "5", "-o", out, "--csv", cells
    )
    assert p.returncode == 0, p.stderr
    assert out.stat().st_size > 0
    rows = list(csv.DictReader(open(cells)))
    assert len(rows) == 10
    for blocks in (64, 1024):
        full = bufsim.simulate(trace, "lru", blocks)
        mine = [r for r in rows if int(r["cache_blocks"]) == blocks]
        assert sum(int(r["hits"]) for r in mine) == full.hits
        assert sum(int(r["accesses"]) for r in mine) == full.accesses


def test_heatmap_refuses_a_policy_that_looks_ahead(tmp_path):
    p = bufsim_cli("heatmap", ROOT / "traces" / "tpch.csv.gz", "-p", "opt", "-o", tmp_path / "x.png")
    assert p.returncode == 2 and "looks ahead" in p.stderr and "Traceback" not in p.stderr
