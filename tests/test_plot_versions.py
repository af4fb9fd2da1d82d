"""A results database holding runs of two bufsim versions: figures and the report draw each
version's runs apart, labelled with it, and say so in a note; `--bufsim-version` keeps one."""

from __future__ import annotations

import json

import duckdb
import pytest

from bufsim import __version__ as NOW

from bufsim import plots, report
from bufsim.sweeps import SweepSpec, run_sweep
from conftest import ROOT, bufsim_cli

GREP = ROOT / "traces" / "grep.csv.gz"


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("versions") / "r.duckdb")
    run_sweep(SweepSpec([str(GREP)], ["lru", "arc"], ["64blocks:4096blocks:x4"]), db, progress=False)
    con = duckdb.connect(db)
    # The same runs as an older version stored them, with other numbers.
    con.execute(
        "INSERT INTO runs SELECT * REPLACE (key || 'old' AS key, '0.0.9' AS bufsim_version, "
        "0.5 AS hit_ratio, 0.5 AS miss_ratio) FROM runs"
    )
    con.close()
    return db


def test_metric_plots_draw_each_version_apart(two_versions, tmp_path):
    df = plots.load(two_versions)
    plot = plots.hit_ratio(df, tmp_path / "h.png")
    lines = [line for line in plot.figure.axes[0].get_lines() if not line.get_label().startswith("_")]
    labels = sorted(line.get_label() for line in lines)
    assert labels == ["arc bufsim 0.0.9", f"arc bufsim {NOW}", "lru bufsim 0.0.9", f"lru bufsim {NOW}"]
    for line in lines:  # one point per cache size: no line zigzags between two versions
        xs = list(line.get_xdata())
        assert len(xs) == len(set(xs)) == 4
    assert any(f"2 bufsim versions (0.0.9, {NOW})" in n for n in plot.notes)


def test_sequence_cdfs_keep_versions_apart(two_versions, tmp_path):
    plot = plots.sequence_cdf(plots.load(two_versions), tmp_path / "s.png")
    titles = sorted(ax.get_title(loc="left") for ax in plot.figure.axes if ax.get_visible())
    assert titles == ["arc, bufsim 0.0.9", f"arc, bufsim {NOW}", "lru, bufsim 0.0.9", f"lru, bufsim {NOW}"]


def test_report_labels_each_version(two_versions):
    page = report.render(plots.load(two_versions), two_versions)
    data = json.loads(page.split('id="bufsim-data">')[1].split("</script>")[0])
    hit = next(p for p in data["plots"] if p["id"].startswith("hit_ratio"))
    assert sorted(s["name"] for s in hit["series"]) == [
        "arc bufsim 0.0.9",
        f"arc bufsim {NOW}",
        "lru bufsim 0.0.9",
        f"lru bufsim {NOW}",
    ]
    assert "2 bufsim versions" in page
    cdfs = [p["title"] for p in data["plots"] if p["id"].startswith("seqcdf")]
    assert "sequence-size CDF: lru, bufsim 0.0.9" in cdfs and f"sequence-size CDF: lru, bufsim {NOW}" in cdfs


def test_bufsim_version_filter(two_versions, tmp_path):
    p = bufsim_cli("plot", "hit-ratio", two_versions, "-o", tmp_path / "h.png")
    assert p.returncode == 0 and "bufsim versions" in p.stderr, p.stderr
    p = bufsim_cli("plot", "hit-ratio", two_versions, "-o", tmp_path / "h.png", "--bufsim-version", "0.0.9")
    assert p.returncode == 0 and "versions" not in p.stderr, p.stderr
    p = bufsim_cli("report", two_versions, "-o", tmp_path / "r.html", "--bufsim-version", "0.0.9")
    assert p.returncode == 0 and "(8 runs)" in p.stdout, p.stderr
