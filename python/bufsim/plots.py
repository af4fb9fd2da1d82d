"""Publication-quality figures of sweep results and trace analyses (matplotlib, Agg only).

Every function takes a plain pandas DataFrame of the shape its docstring documents (the
``runs`` table of a results database is one such shape) and an output path whose suffix picks
the format (``.png``, ``.pdf``, ``.svg``). Columns that are absent are not an error: the panel
or plot that needs them is left out and a note says why, so results of other modes (timed runs
add ``exec_time_s``; DULO runs add ``request_sizes``; partitioned policies add
``partition_timeline``) appear as soon as they are there. The same inputs give byte-identical
files. docs/plots.md describes every shape.
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from bufsim._core import SpecError

if TYPE_CHECKING:
    import pandas

FORMATS = (".png", ".pdf", ".svg")

# One colour per policy family, the same in every figure and in the HTML report (Okabe-Ito
# first, with its yellow darkened for lines on white: distinguishable with the common colour-
# vision deficiencies), then tab10 colours.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#B8860B", "#8C564B", "#7F7F7F", "#BCBD22", "#17BECF", "#9467BD", "#1F77B4",
           "#2CA02C", "#D62728"]
POLICY_COLOURS = {
    "lru": 0, "fifo": 1, "clock": 2, "lfu": 3, "opt": 6, "mru": 4, "random": 9, "arc": 5,
    "lirs": 8, "2q": 10, "mq": 11, "lru-2": 12, "lru-k": 12, "lrfu": 13, "fbr": 14, "lfru": 15,
    "dulo": 7, "amp": 15, "clock-pro": 14, "landlord": 13,
}
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*"]
POLICY_MARKERS = {"lru": 0, "fifo": 1, "clock": 2, "lfu": 3, "opt": 11, "mru": 4, "random": 9,
                  "arc": 5, "lirs": 6, "2q": 7, "mq": 8, "lru-2": 10, "lrfu": 6, "dulo": 5, "amp": 7}
# Read-ahead off is solid with filled markers; each read-ahead setting gets its own dash.
PREFETCH_STYLES = ["-", "--", ":", "-."]

# Columns that say what a run was, not what it measured; any that vary within a plot split
# its series (block size, seeds, and whatever the timed mode adds, e.g. device).
IDENTITY_SKIP = {"key", "bufsim_version", "trace", "trace_hash", "format", "cache_blocks",
                 "config", "seconds", "finished_at"}

MIB = 1 << 20


@dataclass
class Plot:
    """What a plot function did: the file it wrote (``None`` when nothing could be drawn) and
    notes about what it left out."""

    out: Path | None
    notes: list[str] = field(default_factory=list)
    panels: int = 0


@dataclass(frozen=True)
class Metric:
    column: str
    label: str
    scale: float = 1.0
    hint: str = ""
    log_y: bool = False


HIT_RATIO = Metric("hit_ratio", "hit ratio (%)", 100.0)
MISS_RATIO = Metric("miss_ratio", "miss ratio", 1.0)
DISK_REQUESTS = Metric("disk_requests", "disk requests")
EXEC_TIME = Metric("exec_time_s", "execution time (s)", hint="run the sweep in timed mode (--timing)")


def policy_colour(spec: str) -> str:
    """The colour of a policy in every plot: its family's (the spec's name before any
    parameters), or one chosen by a stable hash for families without a fixed colour."""
    family = _family(spec)
    i = POLICY_COLOURS.get(family)
    return PALETTE[i if i is not None else zlib.crc32(family.encode()) % len(PALETTE)]


def policy_marker(spec: str) -> str:
    """The bare family name has its own marker; variants with parameters get one by hash."""
    family = _family(spec)
    if spec.strip() == family and family in POLICY_MARKERS:
        return MARKERS[POLICY_MARKERS[family]]
    return MARKERS[zlib.crc32(spec.strip().encode()) % len(MARKERS)]


def _family(spec: str) -> str:
    return str(spec).split("(", 1)[0].strip().lower()


# ---------------------------------------------------------------------------------------------
# Loading and filtering


def load(source: str | os.PathLike, table: str = "runs") -> "pandas.DataFrame":
    """Reads a results database (``.duckdb``: its ``runs`` table), a Parquet, CSV or JSON
    (records or lines) file into a DataFrame."""
    import pandas as pd

    path = os.fspath(source)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file; give a results database, Parquet, CSV or JSON file")
    suffix = Path(path).suffix.lower()
    if suffix in (".duckdb", ".db"):
        import duckdb

        try:
            con = duckdb.connect(path, read_only=True)
        except duckdb.Error as e:
            raise SpecError(f"{path}: cannot open the results database (is a sweep still writing to it?): "
                            f"{str(e).splitlines()[0]}") from None
        try:
            tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            if table not in tables:
                raise SpecError(f"{path}: no `{table}` table; is this a bufsim results database?")
            return con.execute(f'SELECT * FROM "{table}"').df().pipe(_runs_order)
        finally:
            con.close()
    if suffix == ".parquet":
        import duckdb  # reads Parquet without pyarrow

        return duckdb.connect().execute("SELECT * FROM read_parquet(?)", [path]).df().pipe(_runs_order)
    if suffix == ".csv":
        return pd.read_csv(path)
    if suffix in (".json", ".jsonl"):
        with open(path) as f:
            text = f.read()
        lines = suffix == ".jsonl" or not text.lstrip().startswith("[")
        return pd.read_json(path, lines=lines)
    raise SpecError(f"{path}: unknown file type `{suffix}`; give .duckdb, .parquet, .csv or .json")


def _runs_order(df: "pandas.DataFrame") -> "pandas.DataFrame":
    """A database has no grid order; sort its rows by trace, policy, read-ahead (off first)
    and cache size so figures and tables come out the same every time."""
    cols = [c for c in ("trace", "policy", "prefetch", "cache_blocks", "key") if c in df.columns]
    keyed = df.assign(_prefetching=df["prefetch"] != "none") if "prefetch" in df.columns else df
    if "prefetch" in cols:
        cols.insert(cols.index("prefetch"), "_prefetching")
    if not cols:
        return df
    return keyed.sort_values(cols, kind="stable").drop(columns=["_prefetching"], errors="ignore").reset_index(drop=True)


def select(df: "pandas.DataFrame", *, traces: Sequence[str] = (), policies: Sequence[str] = (),
           prefetches: Sequence[str] = (), caches: Sequence[int] = ()) -> "pandas.DataFrame":
    """Keeps the rows matching every given filter. A trace matches by path, file name or a
    prefix of its content hash; the others match exactly (caches in blocks)."""
    out = df
    if traces:
        if "trace" not in out.columns:
            raise SpecError("--trace: these results have no `trace` column")
        want = set(traces)
        keep = out["trace"].map(lambda t: t in want or os.path.basename(str(t)) in want)
        if "trace_hash" in out.columns:
            keep |= out["trace_hash"].map(lambda h: any(str(h).startswith(w) for w in want if len(w) >= 6))
        out = out[keep]
    for col, values in (("policy", policies), ("prefetch", prefetches), ("cache_blocks", caches)):
        if values:
            if col not in out.columns:
                raise SpecError(f"cannot filter on `{col}`: these results have no such column")
            out = out[out[col].isin(list(values))]
    return out


# ---------------------------------------------------------------------------------------------
# Figures


def _figure(nrows: int, ncols: int, width: float = 3.4, height: float = 2.7):
    # A bare Figure draws through Agg (or the PDF/SVG backends) without pyplot, so plotting
    # never touches a user's interactive backend and is safe from threads.
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height * nrows + 0.6), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def _style() -> dict[str, Any]:
    return {
        "font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "legend.fontsize": 8,
        "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.grid": True, "grid.alpha": 0.3,
        "grid.linewidth": 0.5, "lines.linewidth": 1.4, "lines.markersize": 4.5,
        "svg.hashsalt": "bufsim", "svg.fonttype": "path", "pdf.fonttype": 42,
    }


def _save(fig, out: str | os.PathLike) -> Path:
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise SpecError(f"{path}: unknown figure format `{suffix or '(none)'}`; end the name with .png, .pdf or .svg")
    if path.parent and not path.parent.exists():
        raise FileNotFoundError(f"{path.parent}: no such directory for the figure")
    import matplotlib

    # Dates and random ids would make two renderings of the same data differ.
    metadata = {".png": {"Software": None}, ".pdf": {"CreationDate": None, "ModDate": None, "Producer": None},
                ".svg": {"Date": None}}[suffix]
    with matplotlib.rc_context(_style()):
        fig.savefig(path, dpi=200, metadata=metadata)
    return path


def _cache_axis(df: "pandas.DataFrame"):
    """Cache size in MiB when the block size is known, else in blocks."""
    if "block_size" in df.columns and df["block_size"].notna().all():
        return df["cache_blocks"] * df["block_size"] / MIB, "cache size (MiB)"
    return df["cache_blocks"].astype(float), "cache size (blocks)"


def _log2_axis(ax, values: Iterable[float], axis: str = "x") -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    getattr(ax, f"set_{axis}scale")("log", base=2)
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(LogLocator(base=2))
    target.set_major_formatter(FuncFormatter(_pow2_label))
    target.set_minor_formatter(NullFormatter())
    vals = [v for v in values if v > 0]
    if vals:
        lo, hi = min(vals), max(vals)
        if hi / lo > 2 ** 12:  # too many ticks: every other power of two
            target.set_major_locator(LogLocator(base=4))


def _pow2_label(v: float, _pos=None) -> str:
    if v >= 1:
        return f"{v:g}" if v < 1e5 else f"{v:.0e}"
    return f"1/{1 / v:g}"


def _count_axis(ax) -> None:
    from matplotlib.ticker import EngFormatter

    ax.yaxis.set_major_formatter(EngFormatter(sep=""))


def series_columns(df: "pandas.DataFrame") -> list[str]:
    """The columns that split a plot's series: policy and read-ahead, plus every other run
    setting that varies in ``df`` (block size, seed, device, ...). From the ``config`` JSON
    when present, so settings added later are taken into account without a change here."""
    cols = [c for c in ("policy", "prefetch") if c in df.columns]
    if "config" in df.columns and df["config"].notna().all():
        configs = df["config"].map(lambda s: json.loads(s) if isinstance(s, str) else dict(s))
        keys = sorted({k for c in configs for k in c} - IDENTITY_SKIP - set(cols))
        for k in keys:
            if configs.map(lambda c: json.dumps(c.get(k), sort_keys=True)).nunique() > 1 and k in df.columns:
                cols.append(k)
    return cols


def _series(df: "pandas.DataFrame", cols: list[str]):
    """Groups ``df`` into series in a fixed order: by policy in order of first appearance,
    read-ahead off first, then the remaining settings sorted."""
    if not cols:
        yield {}, df
        return
    first_seen = {p: i for i, p in enumerate(dict.fromkeys(df["policy"]))} if "policy" in cols else {}

    def order(key: tuple) -> tuple:
        d = dict(zip(cols, key))
        return (first_seen.get(d.get("policy"), 0), d.get("prefetch", "none") != "none",
                tuple(str(d[c]) for c in cols))

    groups = {k if isinstance(k, tuple) else (k,): g for k, g in df.groupby(cols, sort=False, dropna=False)}
    for key in sorted(groups, key=order):
        yield dict(zip(cols, key)), groups[key]


def _prefetch_style(values: Sequence[str]) -> dict[str, str]:
    ordered = sorted(set(values), key=lambda v: (v != "none", v))
    return {v: PREFETCH_STYLES[i % len(PREFETCH_STYLES)] for i, v in enumerate(ordered)}


def _label(ident: dict[str, Any]) -> str:
    parts = [str(ident.get("policy", ""))] if "policy" in ident else []
    if ident.get("prefetch", "none") != "none":
        parts.append(f"+ {ident['prefetch']}")
    parts += [f"{k}={v}" for k, v in ident.items() if k not in ("policy", "prefetch")]
    return " ".join(p for p in parts if p) or "all runs"


def _trace_panels(df: "pandas.DataFrame") -> list[tuple[str, "pandas.DataFrame"]]:
    if "trace" not in df.columns:
        return [("", df)]
    return [(os.path.basename(str(t)), g) for t, g in df.groupby("trace", sort=True)]


def _line_style(ident: dict[str, Any], styles: dict[str, str]) -> dict[str, Any]:
    policy = str(ident.get("policy", "all"))
    prefetch = str(ident.get("prefetch", "none"))
    colour = policy_colour(policy)
    dashed = prefetch != "none"
    return {"color": colour, "marker": policy_marker(policy), "linestyle": styles.get(prefetch, "-"),
            "markerfacecolor": "white" if dashed else colour, "markeredgecolor": colour}


def metric_grid(df: "pandas.DataFrame", out: str | os.PathLike, metrics: Sequence[Metric], *,
                title: str | None = None) -> Plot:
    """Plots each metric against cache size (log x), one row of panels per trace, one line
    per series (see :func:`series_columns`). Needs ``cache_blocks`` and the metric columns;
    a metric whose column is missing or empty is left out with a note."""
    notes: list[str] = []
    if df.empty:
        return Plot(None, ["no runs to plot (empty input or filters match nothing)"])
    if "cache_blocks" not in df.columns:
        return Plot(None, ["no `cache_blocks` column: cannot plot against cache size"])
    present = []
    for m in metrics:
        if m.column not in df.columns or df[m.column].isna().all():
            why = f"{m.label}: no `{m.column}` column in these results"
            notes.append(why + (f"; {m.hint}" if m.hint else ""))
        else:
            present.append(m)
    if not present:
        return Plot(None, notes)
    panels = _trace_panels(df)
    cols = series_columns(df)
    styles = _prefetch_style(df["prefetch"].astype(str)) if "prefetch" in df.columns else {}
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig, axes = _figure(len(panels), len(present))
        handles: dict[str, Any] = {}
        for r, (trace, tdf) in enumerate(panels):
            x_all, xlabel = _cache_axis(tdf)
            for c, m in enumerate(present):
                ax = axes[r][c]
                for ident, g in _series(tdf, cols):
                    g = g[g[m.column].notna()].sort_values("cache_blocks")
                    if g.empty:
                        continue
                    x, _ = _cache_axis(g)
                    (line,) = ax.plot(x.to_numpy(), (g[m.column] * m.scale).to_numpy(),
                                      label=_label(ident), **_line_style(ident, styles))
                    handles.setdefault(_label(ident), line)
                _log2_axis(ax, x_all)
                ax.set_xlabel(xlabel)
                ax.set_ylabel(m.label)
                if m.column in ("disk_requests",):
                    _count_axis(ax)
                if m.column == "hit_ratio":
                    ax.set_ylim(bottom=0)
                ax.set_title(trace if len(present) == 1 or c == 0 and trace else "", loc="left")
        if title:
            fig.suptitle(title)
        fig.legend(list(handles.values()), list(handles), loc="outside lower center",
                   ncols=min(len(handles), 4), frameon=False)
        return Plot(_save(fig, out), notes, len(panels) * len(present))


def hit_ratio(df: "pandas.DataFrame", out: str | os.PathLike, *, title: str | None = None) -> Plot:
    """Hit ratio (%) against cache size (log x), one line per policy and read-ahead setting,
    one panel per trace. Shape: the ``runs`` table, or any frame with ``cache_blocks``,
    ``hit_ratio`` (a fraction) and optionally ``policy``, ``prefetch``, ``trace``,
    ``block_size``."""
    return metric_grid(df, out, [HIT_RATIO], title=title)


def prefetch_panels(df: "pandas.DataFrame", out: str | os.PathLike, *, title: str | None = None) -> Plot:
    """The three panels of the prefetching paper's figures (§5): hit ratio, disk requests and
    execution time against cache size, one line per policy, read-ahead off solid and on dashed.
    Execution time needs ``exec_time_s`` (timed mode); without it the panel is left out."""
    return metric_grid(df, out, [HIT_RATIO, DISK_REQUESTS, EXEC_TIME], title=title)


def mrc(df: "pandas.DataFrame", out: str | os.PathLike, *, title: str | None = None) -> Plot:
    """Miss ratio curves: miss ratio against cache size (log x). Shape: ``cache_blocks`` and
    ``miss_ratio`` (a fraction; derived from ``hit_ratio`` when only that is there), with
    optional series columns ``policy`` (or ``method``, e.g. ``mattson``/``shards``) and
    ``trace``."""
    df = df.copy()
    if "miss_ratio" not in df.columns and "hit_ratio" in df.columns:
        df["miss_ratio"] = 1.0 - df["hit_ratio"]
    if "policy" not in df.columns:
        for alt in ("method", "series"):
            if alt in df.columns:
                df["policy"] = df[alt].astype(str)
                break
    return metric_grid(df, out, [MISS_RATIO], title=title)


# ---------------------------------------------------------------------------------------------
# Histogram- and timeline-shaped data


def explode_json(df: "pandas.DataFrame", column: str, rows: Callable[[Any], list[dict]]) -> "pandas.DataFrame":
    """Turns a JSON column of the runs table into a long table: one row per element that
    ``rows`` yields, keeping the run's identity columns beside it."""
    import pandas as pd

    keep = [c for c in ("key", "trace", "policy", "prefetch", "cache_blocks", "block_size") if c in df.columns]
    parts = []
    for _, run in df[df[column].notna()].iterrows():
        value = run[column]
        data = json.loads(value) if isinstance(value, (str, bytes)) else value
        part = pd.DataFrame(rows(data))
        for c in keep:
            part[c] = run[c]
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def sequence_sizes(df: "pandas.DataFrame") -> "pandas.DataFrame":
    """The long shape of sequence-size data from the runs table's ``request_sizes`` column
    (a JSON object: disk request size in blocks -> number of disk requests of that size)."""
    return explode_json(df, "request_sizes",
                        lambda h: [{"size_blocks": int(k), "requests": int(v)} for k, v in h.items()])


def sequence_cdf(df: "pandas.DataFrame", out: str | os.PathLike, *, title: str | None = None) -> Plot:
    """DULO §5 (Figures 3 and 4): for each run, the percentage of requested blocks that sit in
    disk requests (sequences) of at most x blocks, against x (log x).

    Shape: a long table with ``size_blocks`` (blocks in one disk request) and ``requests``
    (how many disk requests had that size), plus series columns (``policy``, ``prefetch``,
    ``cache_blocks``, ``trace``); or the runs table with a ``request_sizes`` column."""
    if "size_blocks" not in df.columns:
        if "request_sizes" not in df.columns:
            return Plot(None, ["sequence-size CDF: no `request_sizes` column (disk request sizes) in these "
                               "results, and no `size_blocks`/`requests` columns"])
        df = sequence_sizes(df)
        if df.empty:
            return Plot(None, ["sequence-size CDF: `request_sizes` is empty in every run"])
    missing = [c for c in ("size_blocks", "requests") if c not in df.columns]
    if missing:
        return Plot(None, [f"sequence-size CDF: missing column(s) {', '.join(missing)}"])
    series = [c for c in ("trace", "policy", "prefetch", "cache_blocks") if c in df.columns and df[c].nunique() > 1]
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig, axes = _figure(1, 1, width=4.2, height=3.0)
        ax = axes[0][0]
        groups = [((), df)] if not series else list(df.groupby(series, sort=True))
        styles = _prefetch_style(df["prefetch"].astype(str)) if "prefetch" in df.columns else {}
        for i, (key, g) in enumerate(groups):
            key = key if isinstance(key, tuple) else (key,)
            ident = dict(zip(series, key))
            x, cdf = sequence_cdf_points(g.groupby("size_blocks")["requests"].sum())
            if not len(x):
                continue
            label = ", ".join(_cdf_label(k, v, g) for k, v in ident.items()) or "all runs"
            policy = str(ident.get("policy", g["policy"].iloc[0] if "policy" in g else "all"))
            style = _line_style({"policy": policy, "prefetch": str(ident.get("prefetch", "none"))}, styles)
            if "cache_blocks" in ident:  # the same policy at several sizes: vary the dash
                style["linestyle"] = PREFETCH_STYLES[sorted(df["cache_blocks"].unique()).index(ident["cache_blocks"]) % 4]
            style.pop("marker")
            ax.step(x, cdf, where="post", label=label,
                    **{k: v for k, v in style.items() if not k.startswith("marker")})
        _log2_axis(ax, df["size_blocks"])
        ax.set_xlabel("sequence size (blocks per disk request)")
        ax.set_ylabel("requested blocks in sequences\nof at most this size (%)")
        ax.set_ylim(0, 100.5)
        ax.legend(loc="upper left", frameon=False)
        if title:
            fig.suptitle(title)
        return Plot(_save(fig, out), [], 1)


def sequence_cdf_points(requests_by_size: "pandas.Series"):
    """DULO's CDF of one run: for each sequence size x (blocks), the percentage of requested
    blocks that sit in sequences of at most x blocks. ``requests_by_size`` maps a size to the
    number of disk requests of that size."""
    h = requests_by_size.sort_index()
    sizes = h.index.to_numpy()
    blocks = sizes * h.to_numpy()
    total = blocks.sum()
    if total == 0:
        return sizes[:0], blocks[:0].astype(float)
    return sizes, blocks.cumsum() / total * 100.0


def _cdf_label(k: str, v: Any, g: "pandas.DataFrame") -> str:
    if k == "cache_blocks":
        bs = int(g["block_size"].iloc[0]) if "block_size" in g.columns else 0
        return f"{v * bs / MIB:g} MiB" if bs else f"{v} blocks"
    if k == "trace":
        return os.path.basename(str(v))
    return f"+ {v}" if k == "prefetch" else str(v)


def partition_sizes(df: "pandas.DataFrame") -> "pandas.DataFrame":
    """The long shape from the runs table's ``partition_timeline`` column: a JSON object
    ``{"unit": "accesses" | "s", "samples": [[time, partition, size_blocks], ...]}``."""
    def rows(data):
        unit = data.get("unit", "accesses")
        col = "time_s" if unit == "s" else "time"
        return [{col: t, "partition": str(p), "size_blocks": s} for t, p, s in data["samples"]]

    return explode_json(df, "partition_timeline", rows)


def partition_timeline(df: "pandas.DataFrame", out: str | os.PathLike, *, stacked: bool = True,
                       max_runs: int = 8, title: str | None = None) -> Plot:
    """Partition sizes over time (AMP §4.3 Figure 13, stacked areas; storage-aware caching's
    per-device partitions, ``stacked=False`` for lines), one panel per run.

    Shape: a long table with ``time`` (logical time: accesses so far) or ``time_s`` (seconds,
    timed mode), ``partition`` (name) and ``size_blocks``; optional run columns (``key``,
    ``policy``, ``cache_blocks``, ``trace``) split panels. Or the runs table with a
    ``partition_timeline`` column."""
    notes: list[str] = []
    if "partition" not in df.columns:
        if "partition_timeline" not in df.columns:
            return Plot(None, ["partition timeline: no `partition_timeline` column in these results, and no "
                               "`time`/`partition`/`size_blocks` columns"])
        df = partition_sizes(df)
        if df.empty:
            return Plot(None, ["partition timeline: `partition_timeline` is empty in every run"])
    tcol = "time" if "time" in df.columns else "time_s" if "time_s" in df.columns else None
    if tcol is None or "size_blocks" not in df.columns:
        return Plot(None, ["partition timeline: need `time` (or `time_s`), `partition` and `size_blocks`"])
    run_cols = [c for c in ("key", "trace", "policy", "prefetch", "cache_blocks") if c in df.columns]
    runs = [((), df)] if not run_cols else list(df.groupby(run_cols, sort=True))
    if len(runs) > max_runs:
        notes.append(f"partition timeline: {len(runs)} runs; drew the first {max_runs} (filter with --policy/--cache)")
        runs = runs[:max_runs]
    names = sorted(df["partition"].astype(str).unique())
    colours = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(names)}
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig, axes = _figure(len(runs), 1, width=5.5, height=2.4)
        for ax, (key, g) in zip((a[0] for a in axes), runs):
            key = key if isinstance(key, tuple) else (key,)
            wide = (g.pivot_table(index=tcol, columns="partition", values="size_blocks", aggfunc="last")
                    .sort_index().ffill().fillna(0))
            cols = [p for p in names if p in wide.columns]
            t = wide.index.to_numpy(dtype=float)
            if stacked:
                ax.stackplot(t, *[wide[p].to_numpy() for p in cols], labels=cols,
                             colors=[colours[p] for p in cols], alpha=0.85, step="post")
            else:
                for p in cols:
                    ax.step(t, wide[p].to_numpy(), where="post", label=p, color=colours[p])
            ax.set_xlabel("time (accesses)" if tcol == "time" else "time (s)")
            ax.set_ylabel("partition size (blocks)")
            ax.set_xlim(t.min(), t.max() if t.max() > t.min() else t.min() + 1)
            ident = dict(zip(run_cols, key))
            ident.pop("key", None)
            ax.set_title(", ".join(_cdf_label(k, v, g) for k, v in ident.items()), loc="left")
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        if title:
            fig.suptitle(title)
        return Plot(_save(fig, out), notes, len(runs))


def temporal_distance(df: "pandas.DataFrame", out: str | os.PathLike, *, title: str | None = None) -> Plot:
    """Temporal distance histograms (MQ §2, Figures 2 and 3): how many correlated accesses
    (re-references of a block) lie at each temporal distance, distances grouped into power-of-
    two bins (a distance is counted in the smallest power of two at or above it, as MQ does).

    Shape: ``distance`` (a positive int; raw distances are rounded up to the next power of two)
    and ``count``; optional series columns ``trace`` or ``series``."""
    missing = [c for c in ("distance", "count") if c not in df.columns]
    if missing:
        return Plot(None, [f"temporal distance histogram: missing column(s) {', '.join(missing)}"])
    df = df[df["distance"] > 0].copy()
    if df.empty:
        return Plot(None, ["temporal distance histogram: no positive distances"])
    df["bin"] = _pow2_ceil(df["distance"])
    series = next((c for c in ("trace", "series", "policy") if c in df.columns), None)
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig, axes = _figure(1, 1, width=4.6, height=3.0)
        ax = axes[0][0]
        groups = [("", df)] if series is None else list(df.groupby(series, sort=True))
        for i, (name, g) in enumerate(groups):
            h = g.groupby("bin")["count"].sum().sort_index()
            ax.plot(h.index.to_numpy(), h.to_numpy(), marker=MARKERS[i % len(MARKERS)],
                    color=PALETTE[i % len(PALETTE)], label=os.path.basename(str(name)) or None)
        _log2_axis(ax, df["bin"])
        _count_axis(ax)
        ax.set_xlabel("temporal distance (references, power-of-two bins)")
        ax.set_ylabel("correlated accesses")
        ax.set_ylim(bottom=0)
        if series is not None:
            ax.legend(frameon=False)
        if title:
            fig.suptitle(title)
        return Plot(_save(fig, out), [], 1)


def _pow2_ceil(distance: "pandas.Series") -> "pandas.Series":
    # Exact for integers (no float log): the bit length of d-1 is the exponent of d's bin.
    return distance.astype("int64").map(lambda d: 1 << int(d - 1).bit_length())


def power_of_two_bins(df: "pandas.DataFrame") -> "pandas.Series":
    """MQ §2's grouping: counts by power-of-two bin, a distance counted in the smallest power of
    two at or above it. ``df`` has ``distance`` and ``count``."""
    d = df[df["distance"] > 0]
    return d.groupby(_pow2_ceil(d["distance"]))["count"].sum().sort_index()


KINDS: dict[str, Callable[..., Plot]] = {
    "hit-ratio": hit_ratio,
    "prefetch": prefetch_panels,
    "mrc": mrc,
    "seq-cdf": sequence_cdf,
    "partitions": partition_timeline,
    "tdist": temporal_distance,
}
