"""One convention for ratios (docs/index.md): fractions from 0 to 1 in command-line tables,
`--json`, the results database and its exports, notebook tables, the report and every figure
axis; no axis or column is labelled in percent."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

import bufsim
from bufsim import _core, display, plots, report
from bufsim.heatmap import hit_ratio_over_time
from conftest import bufsim_cli

RATIO_FIELDS = [f["name"] for f in _core.result_fields() if f["name"].endswith("_ratio")]


def fractions(values) -> bool:
    v = pd.Series(list(values), dtype=float).dropna()
    return len(v) > 0 and bool(((v >= 0) & (v <= 1)).all())


def test_the_result_table_has_ratios_and_runs_give_fractions(cloudphysics):
    assert {"hit_ratio", "miss_ratio"} <= set(RATIO_FIELDS)
    p = bufsim_cli("run", cloudphysics, "-p", "lru", "-p", "mru", "-c", "1024blocks", "-c", "65536blocks", "--json")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    for name in RATIO_FIELDS:
        assert fractions(r[name] for r in rows if r.get(name) is not None), name
    table = bufsim_cli("run", cloudphysics, "-p", "lru", "-c", "1024blocks")
    header, _, row = table.stdout.splitlines()[:3]
    cells = dict(zip(re.split(r"\s{2,}", header.strip()), row.split()))
    assert "%" not in table.stdout and 0 <= float(cells["hit ratio"]) <= 1, table.stdout


def test_mrc_json_and_frame_are_fractions(cloudphysics):
    r = bufsim.analysis.mrc_report(cloudphysics, shards=0.1, progress=False)
    assert fractions(r["miss_ratio"]) and fractions(r["shards"]["miss_ratio"])


def test_database_exports_and_notebook_tables_are_fractions(sweep_db, tmp_path):
    df = plots.load(sweep_db)
    for name in ("hit_ratio", "miss_ratio"):
        assert fractions(df[name]), name
    out = tmp_path / "runs.csv"
    assert bufsim_cli("results", "export", sweep_db, "-o", out).returncode == 0
    exported = pd.read_csv(out)
    assert fractions(exported["hit_ratio"]) and fractions(exported["miss_ratio"])
    html = display.table(df)._repr_html_()
    assert "hit_ratio" in html and "%" not in html


def test_every_ratio_axis_is_a_fraction_and_never_percent(sweep_db, tmp_path, cloudphysics):
    df = plots.load(sweep_db)
    drawn = [
        plots.hit_ratio(df, tmp_path / "h.png"),
        plots.mrc(df, tmp_path / "m.png"),
        plots.heatmap(hit_ratio_over_time(cloudphysics, caches=[1024, 16384], windows=4), tmp_path / "hm.png"),
    ]
    for p in drawn:
        for ax in p.figure.axes:
            labels = [ax.get_ylabel(), ax.get_xlabel()]
            assert not any("%" in s for s in labels), labels
            if "ratio" in ax.get_ylabel():
                assert all(fractions(line.get_ydata()) for line in ax.get_lines()), ax.get_ylabel()
    heat = drawn[2].figure
    mesh = heat.axes[0].collections[0]
    assert mesh.get_clim() == (0, 1) and fractions(mesh.get_array().compressed())
    figs, _ = report._plot_data(df)
    for f in figs:
        assert "%" not in f["ylabel"], f["ylabel"]
        if "ratio" in f["ylabel"] or "share" in f["ylabel"]:
            ys = [pt[1] for s in f["series"] for pt in s["points"]]
            assert fractions(ys), f["title"]


@pytest.mark.parametrize("field", ["hit_ratio", "miss_ratio"])
def test_result_objects_carry_fractions(field, cloudphysics):
    r = bufsim.simulate(cloudphysics, policy="lru", cache="1024blocks")
    assert 0 <= getattr(r, field) <= 1
