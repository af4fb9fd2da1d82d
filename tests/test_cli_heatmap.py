"""`bufsim heatmap`: the windows of a hit-ratio heatmap add up to the full runs."""

from __future__ import annotations

import csv
import subprocess
import sys
import warnings

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


def test_heatmap_reads_standard_input_once(tmp_path):
    # Without --cache the default sizes were counted on a first read of the trace, so the
    # conversion that followed found standard input empty: "the trace is empty; pass --format".
    rows = "".join(f"R,f,{(i % 40) * 4096},4096\n" for i in range(400))
    out, cells = tmp_path / "hm.png", tmp_path / "hm.csv"
    p = subprocess.run(
        [sys.executable, "-m", "bufsim", "heatmap", "-", "--windows", "2", "-o", str(out), "--csv", str(cells)],
        input="op,file,offset,size\n" + rows,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    sizes = {int(r["cache_blocks"]) for r in csv.DictReader(open(cells))}
    assert sizes == {16, 32}  # powers of two from 16 blocks below the 40 distinct blocks


def test_heatmap_of_a_trace_without_requests_warns_by_its_name(tmp_path):
    from bufsim.heatmap import hit_ratio_over_time

    trace = tmp_path / "d.csv"
    trace.write_text("op,file,offset,size\nD,f,0,0\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = hit_ratio_over_time(trace, caches=[4])
    shown = [str(w.message) for w in caught]
    assert shown == [f"{trace}: the trace holds no requests; every count is 0"], shown
    assert df.attrs["requests"] == 0


def test_a_heatmap_of_zero_length_requests_draws_nothing_and_says_so(tmp_path):
    # One request, no block access: every window's hit ratio is undefined. This drew an empty
    # grid and failed with an IndexError traceback.
    trace = tmp_path / "z.csv"
    trace.write_text("op,file,offset,size\nR,f,0,0\n")
    p = bufsim_cli("heatmap", trace, "-c", "1blocks", "-o", tmp_path / "h.png")
    assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.splitlines()) == 1, p.stderr
    assert "no window holds a block access" in p.stderr and "h.png not written" in p.stderr, p.stderr
    assert "wrote" not in p.stdout and not (tmp_path / "h.png").exists()
