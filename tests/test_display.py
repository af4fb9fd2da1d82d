"""Notebook tables: a Result and a sweep's runs render as HTML with the numbers of the run, ratios
as fractions, the best miss ratio per cache size in bold; Plot objects show their image."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd

import bufsim
from bufsim import display, plots

TPCH = str(Path(__file__).resolve().parents[1] / "traces" / "tpch.csv.gz")


class Cells(HTMLParser):
    """(row header, cell text) pairs and bold texts of a table."""

    def __init__(self):
        super().__init__()
        self.rows, self.bold, self._tag, self._th = [], [], None, None

    def handle_starttag(self, tag, attrs):
        self._tag = tag

    def handle_data(self, data):
        if self._tag == "th":
            self._th = data
        elif self._tag == "td":
            self.rows.append((self._th, data))
        elif self._tag == "b":
            self.bold.append(data)


def parse(text: str) -> Cells:
    c = Cells()
    c.feed(text)
    return c


def test_result_renders_its_counters():
    r = bufsim.simulate(TPCH, policy="lru", cache=1024)
    cells = dict(parse(display.result_html(r)).rows)
    assert cells["hits"] == f"{r.hits:,}" and cells["misses"] == f"{r.misses:,}"
    assert cells["hit_ratio"] == f"{r.hit_ratio:.4f}"
    assert cells["miss_ratio"] == f"{1 - r.hit_ratio:.4f}"
    assert cells["cache_blocks"] == "1,024 blocks (4 MiB)"
    assert "exec_time_s" not in cells and ">timing<" not in display.result_html(r)  # count mode
    assert r._repr_html_() == display.result_html(r)


def test_sweep_table_bolds_the_lowest_miss_ratio_per_size():
    df = bufsim.sweep(TPCH, policies=["lru", "fifo", "arc"], caches=[64, 4096])
    text = display.table(df)._repr_html_()
    miss = 1 - df["hit_ratio"]
    want = sorted(f"{m:.4f}" for m in miss[miss == miss.groupby(df["cache_blocks"]).transform("min")])
    assert sorted(parse(text).bold) == want
    assert text.count("<tr>") == 1 + len(df)
    assert "exec_time_s" not in text  # empty in count mode
    many = display.table(pd.concat([df] * 50), max_rows=10)._repr_html_()
    assert many.count("<tr>") == 11 and "290 more runs not shown" in many
    # A list of results renders the same way.
    results = [bufsim.simulate(TPCH, policy="lru", cache=c) for c in (64, 4096)]
    assert len(re.findall(r"<tr>", display.table(results)._repr_html_())) == 3


def test_plot_shows_its_image_in_a_notebook(tmp_path):
    df = pd.DataFrame({"cache_blocks": [1, 2, 4], "miss_ratio": [0.9, 0.5, 0.2]})
    png = plots.mrc(df, tmp_path / "m.png")
    assert png._repr_png_() == (tmp_path / "m.png").read_bytes()
    svg = plots.mrc(df, tmp_path / "m.svg")
    assert svg._repr_svg_().lstrip().startswith("<?xml") and svg._repr_png_() is None
