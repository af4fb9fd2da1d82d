"""The HTML report of the session's sweep: self-contained, and in headless Chromium its plots are
drawn (pixels of every policy's colour inside each plot), the legend toggles series, hovering
shows a tooltip, and clicking a column header sorts the table (read back from the DOM)."""

from __future__ import annotations

import io
import json
import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from bufsim import plots, report
from chromium_cdp import Chromium, chromium_path
from conftest import MD5GREP, SWEEP_POLICIES, add_runs, bufsim_cli, timed_and_count_db


@pytest.fixture(scope="module")
def page(sweep_db, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    p = bufsim_cli("report", sweep_db, "-o", out)
    assert p.returncode == 0, p.stderr
    assert "64 runs" in p.stdout
    return out


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_report_is_self_contained(page, sweep_db):
    text = page.read_text()
    tags = Tags()
    tags.feed(text)
    for tag, attrs in tags.tags:
        assert tag not in ("link", "iframe", "img", "object", "embed"), tag
        for name in ("src", "href", "action"):
            assert name not in attrs, (tag, attrs)
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text), "the report must load nothing"
    # The summary names the trace's content hash, the version and the seed.
    runs = plots.load(sweep_db)
    assert runs["trace_hash"].iloc[0] in text
    assert runs["bufsim_version"].iloc[0] in text
    assert '<th scope="row">seeds</th><td>42</td>' in text
    assert text.count("<tr>") >= 64


def test_notes_name_missing_columns(sweep_db):
    df = plots.load(sweep_db).drop(columns=["exec_time_s"])
    html = report.render(df, "x.duckdb")
    assert (
        "execution time (s): no `exec_time_s` column in these results; run the sweep in timed mode (--timing)" in html
    )
    assert "execution time (s): no" not in report.render(df.assign(exec_time_s=1.0), "x.duckdb")


def notes_and_plots(page: Path) -> tuple[list[str], list[dict]]:
    """The notes under the plots and the plots' data, as the page carries them."""
    text = page.read_text()
    ul = re.search(r'<ul class="notes">(.*?)</ul>', text)
    notes = [unescape(n) for n in re.findall(r"<li>(.*?)</li>", ul.group(1))] if ul else []
    data = re.search(r'<script type="application/json" id="bufsim-data">(.*?)</script>', text).group(1)
    return notes, json.loads(data)["plots"]


def test_a_timed_metric_empty_in_every_selected_run_is_named_with_what_to_do(tmp_path):
    """A database of timed and count-mode runs (or of count-mode runs only) has the time columns,
    NULL in the count-mode runs: the report once said "no `exec_time_s` column in these results"
    of a column that is there, and gave no way out; its legends read `fifo device=nan ...`."""
    db = timed_and_count_db(tmp_path / "r.duckdb")
    out = tmp_path / "fifo.html"
    p = bufsim_cli("report", db, "-o", out, "--policy", "fifo")
    assert p.returncode == 0, p.stderr
    notes, figs = notes_and_plots(out)
    assert notes == [
        f"{label}: `{column}` is empty for every selected run (runs made without --timing?); select timed runs, "
        "or run the sweep in timed mode (--timing)"
        for label, column in (
            ("execution time (s)", "exec_time_s"),
            ("I/O time (s)", "io_time_s"),
            ("stall time (s)", "stall_time_s"),
        )
    ]
    assert [f["title"] for f in figs if not f["id"].startswith("seqcdf")] == [
        "hit ratio vs cache size: grep.csv.gz",
        "miss ratio vs cache size: grep.csv.gz",
        "disk requests vs cache size: grep.csv.gz",
    ]

    # Both sweeps: every plot drawn, no note; the count-mode runs leave device, hit rule, ... empty,
    # and their legend entry leaves those settings out instead of printing `device=nan`.
    out = tmp_path / "both.html"
    p = bufsim_cli("report", db, "-o", out)
    assert p.returncode == 0, p.stderr
    notes, figs = notes_and_plots(out)
    assert notes == []
    names = {s["name"] for f in figs if not f["id"].startswith("seqcdf") for s in f["series"]}
    assert "fifo timing=False" in names and len(names) == 2, names
    assert all("nan" not in n for n in names) and all("nan" not in f["title"] for f in figs), names
    assert "sequence-size CDF: fifo, timing=False" in [f["title"] for f in figs]

    # A trace whose runs are all count-mode gets no empty plot of time, and a note says why.
    add_runs(db, MD5GREP, "-p", "lru", "-c", "64blocks")
    out = tmp_path / "two.html"
    p = bufsim_cli("report", db, "-o", out)
    assert p.returncode == 0, p.stderr
    notes, figs = notes_and_plots(out)
    assert notes[0] == (
        "execution time (s): `exec_time_s` is empty for every selected run of md5grep.csv.gz "
        "(runs made without --timing?); its plot is left out"
    )
    assert len(notes) == 3, notes
    titles = [f["title"] for f in figs]
    assert "execution time (s) vs cache size: grep.csv.gz" in titles
    assert not any(t.startswith("execution time") and "md5grep" in t for t in titles), titles
    assert all(f["series"] for f in figs)


def test_sequence_cdfs_one_plot_per_policy_or_a_chosen_few(sweep_db):
    df = plots.load(sweep_db)
    figs, notes = report._plot_data(df)
    cdfs = [f for f in figs if f["id"].startswith("seqcdf")]
    assert [f["title"].split(": ")[1] for f in cdfs] == sorted(SWEEP_POLICIES)
    assert not any("sequence-size" in n for n in notes), notes
    figs, _ = report._plot_data(df, cdf_policies=["fifo"])
    assert [f["title"] for f in figs if f["id"].startswith("seqcdf")] == ["sequence-size CDF: fifo"]
    # More policies than MAX_CDF_POLICIES: the first are drawn and a note says how to pick others.
    many = pd.concat(
        [df.assign(policy=f"{p}(n={i})") for i in range(4) for p in ["lru"]]
        + [df.assign(policy=f"lfu(n={i})") for i in range(12)]
    )
    figs, notes = report._plot_data(many)
    assert sum(f["id"].startswith("seqcdf") for f in figs) == report.MAX_CDF_POLICIES
    assert any("16 policies, showing the first 12" in n for n in notes), notes


def test_every_figure_marker_has_a_shape_in_the_page():
    assert set(report.MARKER_SHAPES) == set(plots.MARKERS)
    js = (Path(report.__file__).parent / "report.js").read_text()
    for shape in report.MARKER_SHAPES.values():
        assert f'"{shape}"' in js, shape


def test_miss_ratio_panel_is_one_minus_hit_ratio(sweep_db):
    df = plots.load(sweep_db)
    figs, _ = report._plot_data(df)
    hit = {s["name"]: [p[1] for p in s["points"]] for s in figs[0]["series"]}
    miss = {s["name"]: [p[1] for p in s["points"]] for s in figs[1]["series"]}
    assert figs[1]["ylabel"] == "miss ratio" and hit.keys() == miss.keys()
    for name in hit:
        assert all(abs(h + m - 1.0) < 1e-9 for h, m in zip(hit[name], miss[name]))


def region_counts(png: bytes, rect: dict, colours: dict[str, str], tol: int = 24) -> dict[str, int]:
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    x0, y0 = int(rect["x"]), int(rect["y"])
    crop = img[y0 : y0 + int(rect["height"]), x0 : x0 + int(rect["width"])]
    out = {}
    for name, c in colours.items():
        rgb = np.array([int(c[i : i + 2], 16) for i in (1, 3, 5)])
        out[name] = int((np.abs(crop - rgb).max(axis=2) <= tol).sum())
    return out


RECTS = """Array.from(document.querySelectorAll('figure.plot .canvas > svg')).map(s => {
  const r = s.getBoundingClientRect();
  return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height};
})"""


def test_report_in_headless_chromium(page, tmp_path):
    if chromium_path() is None:
        pytest.fail("chromium is missing: `make test-python` installs Debian's chromium package")
    colours = {p: plots.policy_colour(p) for p in SWEEP_POLICIES}
    with Chromium(width=1400, height=1000) as b:
        b.open(page.as_uri())
        assert b.eval("document.body.dataset.bufsimStatus") == "ok", b.errors()
        assert b.errors() == []
        # Three plots (hit ratio, miss ratio, disk requests) of 8 series (4 policies x 2 read-ahead)
        # of 8 points, then one sequence-size CDF per policy (every run records its disk request
        # sizes), each with its 16 runs (8 sizes x 2 read-ahead settings).
        figs = b.eval(
            "Array.from(document.querySelectorAll('figure.plot')).map("
            "f => [f.querySelector('figcaption').textContent, f.querySelectorAll('g.series').length])"
        )
        assert [n for _, n in figs] == [8, 8, 8, 16, 16, 16, 16], figs
        assert [t.split(" vs")[0] for t, _ in figs[:3]] == ["hit ratio", "miss ratio", "disk requests"]
        assert [t.split(": ")[1] for t, _ in figs[3:]] == sorted(SWEEP_POLICIES)
        assert int(b.eval("document.body.dataset.bufsimPoints")) > 3 * 64
        # Each policy keeps its figure marker in the page (one shape each, none falls back).
        marks = b.eval(
            "Array.from(document.querySelectorAll('figure.plot')[0].querySelectorAll('g.series'))"
            ".map(g => [g.dataset.name, g.dataset.marker, g.querySelector('polygon, rect, circle').tagName])"
        )
        want = {p: report.MARKER_SHAPES[plots.policy_marker(p)] for p in SWEEP_POLICIES}
        assert {name: m for name, m, _ in marks if name in want} == want and len(set(want.values())) == 4
        assert all((tag == "circle") == (m == "circle") for _, m, tag in marks), marks
        # Every policy's colour is painted inside every metric plot.
        rects = b.eval(RECTS)
        shot = b.screenshot()
        (tmp_path / "report.png").write_bytes(shot)
        for rect in rects[:3]:
            counts = region_counts(shot, rect, colours)
            assert all(n > 150 for n in counts.values()), counts
        # Each CDF draws its cache sizes in the colours of the dark-to-light ramp.
        ramp = plots.cache_size_colours(8)
        for rect in rects[3:]:
            counts = region_counts(shot, rect, dict(enumerate(ramp)), tol=12)
            assert sum(counts.values()) > 400 and sum(n > 20 for n in counts.values()) >= 4, counts
        # Small multiples keep their type readable: a CDF's tick labels are no smaller than 9 px.
        px = b.eval(
            "(() => { const f = document.querySelectorAll('figure.plot')[3];"
            "return f.querySelector('.axes text').getBoundingClientRect().height; })()"
        )
        assert px >= 10, px
        before = region_counts(shot, rects[0], colours)

        # Legend: clicking both LRU entries of the first plot hides LRU's lines there only.
        b.eval(
            "Array.from(document.querySelectorAll('figure.plot')[0].querySelectorAll('.legend li'))"
            ".filter(li => li.textContent.split(' ')[0] === 'lru').forEach(li => li.click())"
        )
        shot2 = b.screenshot()
        after = region_counts(shot2, rects[0], colours)
        assert after["lru"] < before["lru"] / 20, (before, after)
        assert after["fifo"] > before["fifo"] * 0.8
        assert region_counts(shot2, rects[1], colours)["lru"] > 150
        assert region_counts(shot2, rects[2], colours)["lru"] > 150
        assert b.eval("document.querySelectorAll('figure.plot')[0].querySelectorAll('.legend li.off').length") == 2

        # Hover: a pointer over a point shows its tooltip.
        tip = b.eval("""(() => {
            const f = document.querySelectorAll('figure.plot')[2], svg = f.querySelector('.canvas > svg');
            const c = svg.querySelector('g.series circle, g.series rect, g.series polygon');
            const r = c.getBoundingClientRect();
            svg.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + r.width / 2,
                              clientY: r.top + r.height / 2, bubbles: true}));
            const t = f.querySelector('.tip');
            return [getComputedStyle(t).display, t.textContent];
        })()""")
        assert tip[0] == "block" and "disk requests" in tip[1], tip

        # Sorting: click the `misses` header twice, then read the table back from the DOM.
        col = b.eval(
            "Array.from(document.querySelectorAll('#runs-table th')).findIndex(t => t.textContent === 'misses')"
        )
        b.eval(f"document.querySelectorAll('#runs-table th')[{col}].click()")
        dom_up = b.eval("document.documentElement.outerHTML")
        b.eval(f"document.querySelectorAll('#runs-table th')[{col}].click()")
        dom_down = b.eval("document.documentElement.outerHTML")
        assert b.errors() == []
    up, down = column_values(dom_up, col), column_values(dom_down, col)
    assert len(up) == 64 and up == sorted(up) and up != column_values(page.read_text(), col)
    assert down == sorted(up, reverse=True)
    assert 'aria-sort="descending"' in dom_down


def column_values(html: str, col: int) -> list[float]:
    """The `col`-th cell of every row of the runs table, as numbers, in document order."""
    table = html[html.index('id="runs-table"') :]
    table = table[: table.index("</table>")]
    out = []
    for row in re.findall(r"<tr>(.*?)</tr>", table[table.index("<tbody>") :], re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        out.append(float(cells[col].replace(",", "")))
    return out
