"""Plotting reads what the analyses write: `bufsim mrc --json` (exact and SHARDS curves),
`bufsim analyze --json` (temporal distances); the hit-ratio heatmap over time and cache size adds
up to the full runs; progress bars show the time left only where asked."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

import bufsim
from bufsim import plots, progress
from bufsim.heatmap import hit_ratio_over_time
from conftest import bufsim_cli
from test_plot_layout import outside

TPCH = str(Path(__file__).resolve().parents[1] / "traces" / "tpch.csv.gz")  # a bundled real trace


@pytest.fixture(scope="module")
def mrc_json(tmp_path_factory, cloudphysics):
    out = tmp_path_factory.mktemp("mrc") / "mrc.json"
    p = bufsim_cli("mrc", cloudphysics, "--shards", "0.1", "--json")
    assert p.returncode == 0, p.stderr
    out.write_text(p.stdout)
    return out


def test_mrc_json_loads_as_exact_and_shards_curves(mrc_json, tmp_path, cloudphysics):
    df = plots.load(mrc_json)
    assert list(dict.fromkeys(df["method"])) == ["LRU, exact", "LRU, SHARDS rate 0.1"]
    exact = df[df["method"] == "LRU, exact"]
    ref = bufsim.mrc(cloudphysics)
    assert exact["cache_blocks"].tolist() == ref["cache_blocks"].tolist()
    assert np.allclose(exact["miss_ratio"], ref["miss_ratio"])
    # One real point, simulated: the exact curve is LRU's miss ratio.
    size = int(exact["cache_blocks"].iloc[len(exact) // 2])
    r = bufsim.simulate(cloudphysics, policy="lru", cache=size)
    assert exact[exact.cache_blocks == size]["miss_ratio"].iloc[0] == pytest.approx(r.misses / r.accesses)

    p = plots.mrc(df, tmp_path / "mrc.pdf")
    lines = {ln.get_label(): ln for ln in p.figure.axes[0].get_lines()}
    assert set(lines) == {"LRU, exact", "LRU, SHARDS rate 0.1"}
    assert lines["LRU, exact"].get_linestyle() == "-" and lines["LRU, SHARDS rate 0.1"].get_linestyle() == "--"
    assert p.figure._suptitle.get_text() == "LRU miss ratio curve — cloudphysics_vscsi"
    assert p.figure.axes[0].get_ylabel() == "miss ratio"
    y = lines["LRU, exact"].get_ydata()
    assert np.allclose(y, exact["miss_ratio"].to_numpy())
    assert outside(p.figure, "pdf") == []
    # The command line's `plot mrc` reads the same file (the wiring the lead merges calls load()).
    assert plots.KINDS["mrc"] is plots.mrc


def test_analyze_json_loads_as_temporal_distances(tmp_path):
    p = bufsim_cli("analyze", TPCH, "--json", "--no-working-set")
    assert p.returncode == 0, p.stderr
    path = tmp_path / "a.json"
    path.write_text(p.stdout)
    df = plots.load(path)
    report = json.loads(p.stdout)
    assert list(df.columns) == ["distance", "count", "trace"]
    assert df["count"].sum() == report["temporal_distance"]["correlated"] > 0
    assert df.attrs["analysis"]["footprint"] == report["footprint"]
    fig = plots.temporal_distance(df, tmp_path / "td.png").figure
    assert fig._suptitle.get_text() == "Temporal distances — tpch"


def test_json_lines_and_arrays_still_load(tmp_path):
    lines = tmp_path / "runs.jsonl"
    lines.write_text('{"cache_blocks": 1, "hit_ratio": 0.5}\n{"cache_blocks": 2, "hit_ratio": 0.6}\n')
    assert plots.load(lines)["hit_ratio"].tolist() == [0.5, 0.6]
    one = tmp_path / "one.json"
    one.write_text('{"cache_blocks": 1, "hit_ratio": 0.5}\n{"cache_blocks": 2, "hit_ratio": 0.7}\n')
    assert plots.load(one)["hit_ratio"].tolist() == [0.5, 0.7]


@pytest.mark.parametrize("policy", ["lru", "arc", "random"])
def test_heatmap_windows_add_up_to_the_full_run(policy):
    caches = [64, 1024, 8192]
    df = hit_ratio_over_time(TPCH, policy=policy, caches=caches, windows=7, progress=False)
    assert sorted(df["window"].unique()) == list(range(7)) and len(df) == 7 * 3
    assert df.groupby("window")["first_request"].first().tolist()[0] == 0
    for c in caches:
        r = bufsim.simulate(TPCH, policy=policy, cache=c)
        w = df[df.cache_blocks == c]
        assert (w["hits"].sum(), w["accesses"].sum()) == (r.hits, r.accesses), c
        assert w["last_request"].max() + 1 == r.requests
    # A warm cache in a late window hits more than the cold first window does (tpch rereads tables).
    big = df[df.cache_blocks == 8192].set_index("window")["hit_ratio"]
    assert big.iloc[0] < big.iloc[1:].max()


def test_heatmap_refuses_lookahead_and_bad_windows():
    with pytest.raises(bufsim.SpecError, match="looks ahead"):
        hit_ratio_over_time(TPCH, policy="opt", caches=[64])
    with pytest.raises(bufsim.SpecError, match="windows must be a positive"):
        hit_ratio_over_time(TPCH, caches=[64], windows=0)


def test_heatmap_figure(tmp_path):
    df = hit_ratio_over_time(TPCH, caches=[64, 256, 1024, 4096], windows=5, progress=False)
    p = plots.heatmap(df, tmp_path / "hm.png")
    assert p.out is not None and p.figure._suptitle.get_text() == "Hit ratio over time — tpch, lru"
    mesh = p.figure.axes[0].collections[0]
    assert mesh.get_array().size == 4 * 5 and mesh.get_cmap().name == "viridis"
    for fmt in ("png", "pdf"):
        assert outside(p.figure, fmt) == []
    assert plots.heatmap(df.drop(columns=["window"]), tmp_path / "x.png").out is None


def test_progress_is_quiet_off_a_terminal_unless_asked(monkeypatch):
    monkeypatch.delenv(progress.ENV, raising=False)
    quiet = io.StringIO()
    assert list(progress.bar(range(3), file=quiet)) == [0, 1, 2] and quiet.getvalue() == ""
    shown = io.StringIO()
    with progress.bar(total=4, desc="runs", unit="run", show=True, file=shown, mininterval=0) as b:
        for _ in range(4):
            b.update(1)
    text = shown.getvalue()
    assert "runs" in text and re.search(r"\d\d:\d\d<\d\d:\d\d", text), text  # elapsed<remaining
    monkeypatch.setenv(progress.ENV, "1")
    assert progress.wanted(file=io.StringIO()) is True
    monkeypatch.setenv(progress.ENV, "0")
    assert progress.wanted() is False and progress.wanted(show=True) is True


def test_unreadable_sources_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("garbage{{")
    with pytest.raises(bufsim.SpecError, match="not JSON records, JSON lines, `bufsim mrc --json`"):
        plots.load(bad)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(bufsim.SpecError, match="not a readable CSV table"):
        plots.load(empty)
    p = bufsim_cli("plot", "mrc", bad, "-o", tmp_path / "x.png")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
