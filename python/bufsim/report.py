"""The HTML report of a results database: one self-contained file (no network, no third-party
code) with a summary of the sweep, interactive plots and sortable tables.

The plots are drawn in the browser by the small script in ``report.js`` (hand-written for
bufsim: SVG, hover tooltips, legend entries that toggle their series); the data travels in the
page as JSON. Plots whose columns are absent (execution time without timed mode, sequence sizes
without a DULO run) are listed as notes instead. docs/report.md describes the page.
"""

from __future__ import annotations

import html
import json
import math
import os
from dataclasses import replace
from importlib import resources
from typing import TYPE_CHECKING, Any, Sequence

from bufsim import plots
from bufsim._core import SpecError
from bufsim.display import NOT_TABULAR
from bufsim.errors import check_not_input, check_output, writing

if TYPE_CHECKING:
    import pandas

# Metrics plotted against cache size when some run has them, in this order; the timed ones are
# worded as `bufsim plot` words execution time (how to get them, why they may be empty).
METRICS = [
    plots.HIT_RATIO,
    plots.MISS_RATIO,
    plots.DISK_REQUESTS,
    plots.EXEC_TIME,
    replace(plots.EXEC_TIME, column="io_time_s", label="I/O time (s)"),
    replace(plots.EXEC_TIME, column="stall_time_s", label="stall time (s)"),
]
# What to do when a metric is empty in every selected run: the report's own filters.
SELECT_OTHER_RUNS = "select runs that have it (--trace, --policy, --prefetch, --bufsim-version)"
# Columns of the runs table shown first in the table, when present; the other scalar columns
# follow in table order.
TABLE_FIRST = [
    "trace",
    "policy",
    "prefetch",
    "cache_blocks",
    "cache",
    "accesses",
    "hits",
    "misses",
    "hit_ratio",
    "disk_requests",
    "sync_requests",
    "async_requests",
    "blocks_read",
    "prefetched",
    "prefetched_unused",
    "exec_time_s",
    "io_time_s",
    "stall_time_s",
]
TABLE_HIDDEN = NOT_TABULAR
# The report's name for each matplotlib marker of plots.MARKERS (report.js draws each shape), so
# a series has the same marker in the figures and in the page.
MARKER_SHAPES = {
    "o": "circle",
    "s": "square",
    "^": "triangle",
    "D": "diamond",
    "v": "triangle-down",
    "P": "plus",
    "X": "cross",
    "<": "triangle-left",
    ">": "triangle-right",
    "p": "pentagon",
    "h": "hexagon",
    "*": "star",
    "d": "thin-diamond",
    "H": "hexagon-flat",
}
# Sequence-size CDFs: one small plot per policy (its runs: cache sizes x read-ahead), at most
# this many policies unless the caller names them.
MAX_CDF_POLICIES = 12


def _esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _block_size(v: Any) -> int | None:
    """A run's block size; ``None`` when not recorded (a NULL, or an empty cell of a CSV file)."""
    f = _num(v)
    return int(f) if f else None


def _cache_label(blocks: int, block_size: int | None) -> str:
    if not block_size:
        return f"{blocks} blocks"
    b = blocks * block_size
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:g} {unit}"
    return f"{b} B"


def _plot_data(df: "pandas.DataFrame", cdf_policies: Sequence[str] = ()) -> tuple[list[dict], list[str]]:
    """The interactive plots: each metric against cache size per trace, then one sequence-size
    CDF per policy (those of ``cdf_policies`` when given) when the runs carry them."""
    figs: list[dict] = []
    notes: list[str] = []
    if df.empty or "cache_blocks" not in df.columns:
        return figs, ["no runs with a cache size to plot"]
    if "miss_ratio" not in df.columns and "hit_ratio" in df.columns:
        df = df.assign(miss_ratio=1.0 - df["hit_ratio"])
    cols = plots.series_columns(df)
    styles = plots._prefetch_style(df["prefetch"].astype(str)) if "prefetch" in df.columns else {}
    dashes = {"-": "", "--": "6 4", ":": "2 3", "-.": "7 3 2 3"}
    for m in METRICS:
        column, label, scale = m.column, m.label, m.scale
        # Hit ratio and the timed metrics get a note when they cannot be drawn (miss ratio
        # follows from hit ratio); the wording is bufsim plot's (plots.metric_note).
        noted = m.hint or m is plots.HIT_RATIO
        note = plots.metric_note(m, df, SELECT_OTHER_RUNS)
        if note:
            notes += [note] if noted else []
            continue
        idents = [ident for ident, _ in plots._series(df, cols)]
        line_styles = dict(zip((plots._label(i) for i in idents), plots.series_styles(idents, styles)))
        for trace, tdf in plots._trace_panels(df):
            if tdf[column].isna().all():
                # A count-mode sweep of one trace beside a timed sweep of another: no empty plot.
                notes += [f"{plots.empty_metric(m, trace)}; its plot is left out"] if noted else []
                continue
            x_all, xlabel = plots._cache_axis(tdf)
            series = []
            for ident, g in plots._series(tdf, cols):
                g = g[g[column].notna()].sort_values("cache_blocks")
                if g.empty:
                    continue
                x, _ = plots._cache_axis(g)
                bs = g["block_size"] if "block_size" in g.columns else [None] * len(g)
                points = [
                    [float(xv), float(yv) * scale, _cache_label(int(cb), _block_size(b))]
                    for xv, yv, cb, b in zip(x, g[column], g["cache_blocks"], bs)
                ]
                style = line_styles[plots._label(ident)]
                series.append(
                    {
                        "name": plots._label(ident),
                        "colour": style["color"],
                        "dash": dashes.get(style["linestyle"], ""),
                        "marker": MARKER_SHAPES[style["marker"]],
                        "hollow": style["markerfacecolor"] == "white",
                        "points": points,
                    }
                )
            figs.append(
                {
                    "id": f"{column}-{len(figs)}",
                    "title": f"{label} vs cache size" + (f": {trace}" if trace else ""),
                    "xlabel": xlabel,
                    "ylabel": label,
                    "xlog": True,
                    "ymin0": column.endswith("_ratio"),
                    "series": series,
                }
            )
    if "request_sizes" in df.columns and df["request_sizes"].notna().any():
        # Runs that differ in another setting (a seed, a bufsim version) get plots of their own.
        settings = plots.setting_columns(df)
        long = plots.sequence_sizes(df)
        sizes = sorted(long["cache_blocks"].unique())
        ramp = plots.cache_size_colours(len(sizes))
        dashes = {"-": "", "--": "6 4", ":": "2 3", "-.": "7 3 2 3"}
        pf_dash = plots._prefetch_style(long["prefetch"].astype(str))
        several_traces = "trace" in long.columns and long["trace"].nunique() > 1
        for trace, tdf in plots._trace_panels(long):
            policies = list(dict.fromkeys(tdf["policy"]))
            chosen = [p for p in policies if p in cdf_policies] if cdf_policies else policies
            if len(chosen) > MAX_CDF_POLICIES and not cdf_policies:
                notes.append(
                    f"sequence-size CDF{': ' + trace if trace else ''}: {len(chosen)} policies, showing the "
                    f"first {MAX_CDF_POLICIES}; narrow the report with --policy, or pass "
                    "cdf_policies= to bufsim.report.write"
                )
                chosen = chosen[:MAX_CDF_POLICIES]
            panels = [((p,), tdf[tdf["policy"] == p]) for p in chosen]
            if settings:
                panels = [
                    ((p, *(k if isinstance(k, tuple) else (k,))), g)
                    for (p,), pdf in panels
                    for k, g in pdf.groupby(settings, sort=True, dropna=False)
                ]
            for (policy, *values), pdf in panels:
                series = []
                runs = pdf.groupby(["prefetch", "cache_blocks"], sort=True)
                for (prefetch, cb), g in sorted(runs, key=lambda kv: (kv[0][0] != "none", kv[0])):
                    x, cdf = plots.sequence_cdf_points(g.groupby("size_blocks")["requests"].sum())
                    if not len(x):
                        continue
                    pts, prev = [], 0.0
                    for xv, yv in zip(x.tolist(), cdf.tolist()):  # a step curve: up at each size
                        pts.append([float(xv), prev, ""])
                        pts.append([float(xv), yv, f"{int(xv)} blocks"])
                        prev = yv
                    bs = _block_size(g["block_size"].iloc[0]) if "block_size" in g.columns else None
                    name = f"{_cache_label(int(cb), bs)}{'' if prefetch == 'none' else ' + ' + prefetch}"
                    series.append(
                        {
                            "name": name,
                            "colour": ramp[sizes.index(cb)],
                            "dash": dashes.get(pf_dash.get(str(prefetch), "-"), ""),
                            "marker": "none",
                            "hollow": False,
                            "points": pts,
                        }
                    )
                figs.append(
                    {
                        "id": f"seqcdf-{len(figs)}",
                        "small": True,
                        "title": f"sequence-size CDF: {policy}"
                        + "".join(f", {t}" for t in (plots.setting_label(k, v) for k, v in zip(settings, values)) if t)
                        + (f" ({trace})" if several_traces else ""),
                        "xlabel": "sequence size (blocks per disk request)",
                        "ylabel": "share of blocks in sequences ≤ x",
                        "xlog": True,
                        "ymin0": True,
                        "series": series,
                    }
                )
    return figs, notes


def _summary(df: "pandas.DataFrame", source: str) -> tuple[list[tuple[str, str]], list[list[str]]]:
    def values(col: str) -> str:
        if col not in df.columns:
            return "(not recorded)"
        vals = [v for v in dict.fromkeys(df[col].dropna().tolist())]
        return ", ".join(str(v) for v in vals) if vals else "(none)"

    rows = [("source", os.path.basename(source)), ("runs", str(len(df)))]
    rows.append(("bufsim version", values("bufsim_version")))
    rows.append(("traces", str(df["trace"].nunique()) if "trace" in df.columns else "(not recorded)"))
    rows.append(("policies", values("policy")))
    rows.append(("read-ahead", values("prefetch")))
    if "cache_blocks" in df.columns and len(df):
        bs = int(df["block_size"].iloc[0]) if "block_size" in df.columns and df["block_size"].nunique() == 1 else None
        sizes = sorted(df["cache_blocks"].unique())
        rows.append(
            ("cache sizes", f"{len(sizes)}: {_cache_label(int(sizes[0]), bs)} to {_cache_label(int(sizes[-1]), bs)}")
        )
    for col, label in (
        ("block_size", "block size (bytes)"),
        ("seed", "seeds"),
        ("reads_only", "reads only"),
        ("cluster", "largest disk request"),
    ):
        if col in df.columns:
            rows.append((label, values(col)))
    if "seconds" in df.columns and df["seconds"].notna().any():
        rows.append(("simulation time", f"{df['seconds'].sum():.1f} s over all runs"))
    if "finished_at" in df.columns:
        import pandas as pd

        # A database gives timestamps, an exported CSV or JSON file their text.
        stamps = pd.to_datetime(df["finished_at"], errors="coerce").dropna()
        if len(stamps):
            rows.append(("finished", f"{stamps.min():%Y-%m-%d %H:%M:%S} to {stamps.max():%Y-%m-%d %H:%M:%S}"))
    traces = []
    if "trace" in df.columns:
        for t, g in df.groupby("trace", sort=True):
            traces.append(
                [
                    str(t),
                    str(g["trace_hash"].iloc[0]) if "trace_hash" in g.columns else "",
                    str(g["format"].iloc[0]) if "format" in g.columns else "",
                    str(int(g["requests"].iloc[0])) if "requests" in g.columns else "",
                    str(len(g)),
                ]
            )
    return rows, traces


def _table(df: "pandas.DataFrame", table_id: str) -> str:
    cols = [c for c in TABLE_FIRST if c in df.columns or c == "cache"]
    cols += [c for c in df.columns if c not in cols and c not in TABLE_HIDDEN]
    if "cache_blocks" not in df.columns:
        cols.remove("cache")
    out = [f'<table class="sortable" id="{table_id}"><thead><tr>']
    for c in cols:
        out.append(f'<th scope="col" data-col="{_esc(c)}" aria-sort="none" title="click to sort">{_esc(c)}</th>')
    out.append("</tr></thead><tbody>")
    for _, r in df.iterrows():
        out.append("<tr>")
        for c in cols:
            if c == "cache":
                bs = _block_size(r["block_size"]) if "block_size" in df.columns else None
                text, key = _cache_label(int(r["cache_blocks"]), bs), int(r["cache_blocks"]) * (bs or 1)
            else:
                v = r[c]
                key = _num(v) if not isinstance(v, (bool, str)) else None
                if c == "trace":
                    text = os.path.basename(str(v))
                elif v is None or (isinstance(v, float) and math.isnan(v)):
                    text = ""  # a column another mode fills (e.g. a time in count mode)
                elif isinstance(v, float):
                    text = f"{v:.4f}" if abs(v) < 10 else f"{v:,.2f}"
                else:
                    text = str(v)
            attr = f' data-value="{key!r}"' if key is not None else ""
            cls = ' class="num"' if key is not None else ""
            out.append(f"<td{cls}{attr}>{_esc(text)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _kv_table(rows: Sequence[tuple[str, str]]) -> str:
    return (
        '<table class="kv">'
        + "".join(f'<tr><th scope="row">{_esc(k)}</th><td>{_esc(v)}</td></tr>' for k, v in rows)
        + "</table>"
    )


def render(df: "pandas.DataFrame", source: str = "results", *, cdf_policies: Sequence[str] = ()) -> str:
    """The report page of the runs in ``df`` (the runs table, or any frame of that shape);
    ``cdf_policies`` picks the policies whose sequence-size CDFs are drawn (default: the first
    :data:`MAX_CDF_POLICIES`)."""
    # Runs of one path that held different contents are shown as different traces.
    df = plots.trace_contents(df)
    figs, notes = _plot_data(df, cdf_policies)
    notes += plots.version_notes(df)
    summary, traces = _summary(df, source)
    trace_table = ""
    if traces:
        import pandas as pd

        trace_table = _table(
            pd.DataFrame(traces, columns=["path", "sha256", "format", "requests", "runs"]), "traces-table"
        )
    plot_html = "".join(
        f'<figure class="plot{" small" if f.get("small") else ""}" id="plot-{_esc(f["id"])}" data-plot="{i}"><figcaption>{_esc(f["title"])}</figcaption>'
        f'<div class="canvas"></div><ul class="legend"></ul></figure>'
        for i, f in enumerate(figs)
    )
    notes_html = ('<ul class="notes">' + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>") if notes else ""
    data = json.dumps({"plots": figs}, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    script = resources.files("bufsim").joinpath("report.js").read_text()
    style = resources.files("bufsim").joinpath("report.css").read_text()
    title = f"bufsim report: {len(df)} runs"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # No network: the page loads nothing, and says so to the browser.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{_esc(title)}</title><style>{style}</style></head><body>"
        f"<header><h1>{_esc(title)}</h1><p>Generated by bufsim from <code>{_esc(os.path.basename(source))}</code>. "
        "Hover over a plot for values; click a legend entry to hide or show its series; click a column "
        "header to sort.</p></header>"
        f'<section id="summary"><h2>Sweep</h2>{_kv_table(summary)}'
        + (f"<h3>Traces</h3>{trace_table}" if trace_table else "")
        + f'</section><section id="plots"><h2>Plots</h2>{plot_html}{notes_html}</section>'
        f'<section id="runs"><h2>Runs</h2>{_table(df, "runs-table")}</section>'
        f'<script type="application/json" id="bufsim-data">{data}</script>'
        f"<script>{script}</script></body></html>\n"
    )


def write(
    source: str | os.PathLike,
    out: str | os.PathLike,
    *,
    traces: Sequence[str] = (),
    policies: Sequence[str] = (),
    prefetches: Sequence[str] = (),
    cdf_policies: Sequence[str] = (),
    versions: Sequence[str] = (),
) -> int:
    """Writes the report of a results database (or Parquet file) to ``out``; returns the
    number of runs in it. ``cdf_policies``: see :func:`render`. A bar of its steps shows on a
    terminal (:mod:`bufsim.progress`)."""
    from bufsim.progress import bar

    check_output(out, "-o")
    check_not_input(out, source, "the results file the report reads", "-o")
    if os.path.splitext(os.fspath(out))[1].lower() not in (".html", ".htm"):
        raise SpecError(f"{out}: the report is an HTML page; give -o a name ending in .html")
    with bar(total=3, desc="report", unit="step") as steps:
        df = plots.select(
            plots.load(source), traces=traces, policies=policies, prefetches=prefetches, versions=versions
        )
        steps.update(1)
        page = _page(df, source, cdf_policies)
        steps.update(1)
        with writing(out), open(out, "w", encoding="utf-8") as f:
            f.write(page)
        steps.update(1)
    return len(df)


def _page(df: "pandas.DataFrame", source: str | os.PathLike, cdf_policies: Sequence[str]) -> str:
    if "policy" not in df.columns or not {"hits", "misses", "hit_ratio", "miss_ratio"} & set(df.columns):
        raise SpecError(
            f"{os.fspath(source)}: not bufsim runs (it needs a `policy` column and hits, misses or their "
            "ratio); give a results database or a file `bufsim results export` wrote"
        )
    if df.empty:
        raise SpecError(f"{os.fspath(source)}: no runs to report (empty, or the filters match nothing)")
    unknown = [p for p in cdf_policies if p not in set(df["policy"])] if "policy" in df.columns else list(cdf_policies)
    if unknown:
        raise SpecError(
            f"--cdf-policy {unknown[0]}: no such policy in these runs; give one of "
            f"{', '.join(dict.fromkeys(df['policy'])) if 'policy' in df.columns else '(none recorded)'}"
        )
    return render(df, os.fspath(source), cdf_policies=cdf_policies)
