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
import math
import os
import re
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from bufsim._core import SpecError
from bufsim.errors import duckdb_text, not_utf8, refuse_under_a_file, writing

if TYPE_CHECKING:
    import pandas

FORMATS = (".png", ".pdf", ".svg")

# Line styles that survive grayscale printing and colour-vision deficiencies: the Okabe-Ito
# hues (its yellow darkened for lines on white) plus greys and browns, each policy family a
# fixed colour AND marker, so that two series of one figure never rely on hue alone. Among the
# series of one figure, :func:`series_styles` then changes the marker of any series whose
# (grey level, marker, dash) a previous series already has.
PALETTE = [
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#8C564B",
    "#B8860B",
    "#7F7F7F",
    "#332288",
    "#882255",
]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*", "d", "H"]
# family: (palette index, marker index). LRU, ARC and MQ, often drawn together, get three
# different hues (blue, vermillion, green) and three different markers; the markers are what
# keeps them apart in grayscale, where those hues are close.
POLICY_STYLES = {
    "lru": (0, 0),
    "arc": (1, 1),
    "mq": (2, 2),
    "lirs": (3, 3),
    "2q": (4, 4),
    "clock": (5, 5),
    "fifo": (7, 6),
    "lfu": (8, 7),
    "opt": (6, 11),
    "mru": (11, 8),
    "random": (9, 9),
    "lru-k": (10, 10),
    "lru-2": (10, 10),
    "lrfu": (10, 12),
    "static": (9, 1),
    "eager-lru": (0, 5),
    "lazy-lru": (1, 6),
    "lazy-clock": (5, 7),
    "fbr": (7, 13),
    "car": (1, 12),
    "clock-pro": (5, 3),
    "dulo": (11, 0),
    "amp": (10, 1),
    "gds": (8, 2),
    "landlord": (8, 2),
    "linux-2list": (7, 4),
    "pcc": (3, 6),
    "dear": (4, 7),
}
# Read-ahead off is solid with filled markers; each read-ahead setting gets its own dash.
PREFETCH_STYLES = ["-", "--", ":", "-."]
# Two series are told apart in grayscale when their grey levels (0 black .. 1 white) differ by
# at least this much, or their markers or dashes differ.
MIN_GREY_STEP = 0.12

# Columns that say what a run was, not what it measured; any that vary within a plot split
# its series (block size, seeds, and whatever the timed mode adds, e.g. device).
IDENTITY_SKIP = {
    "key",
    "bufsim_version",
    "trace",
    "trace_hash",
    "format",
    "cache_blocks",
    "config",
    "seconds",
    "finished_at",
}

MIB = 1 << 20


@dataclass
class Plot:
    """What a plot function did: the file it wrote (``None`` when nothing could be drawn) and
    notes about what it left out."""

    out: Path | None
    notes: list[str] = field(default_factory=list)
    panels: int = 0
    #: The matplotlib Figure that was saved (to re-save in another format, or inspect).
    figure: Any = field(default=None, repr=False, compare=False)

    # Jupyter shows the file that was written (PNG or SVG; a PDF has no inline form).
    def _repr_png_(self) -> bytes | None:
        return self.out.read_bytes() if self.out is not None and self.out.suffix.lower() == ".png" else None

    def _repr_svg_(self) -> str | None:
        return self.out.read_text() if self.out is not None and self.out.suffix.lower() == ".svg" else None


# What to do when a metric's column is there but empty (NULL) in every run drawn, for a metric
# without advice of its own (`bufsim report` gives its own options: report.SELECT_OTHER_RUNS).
SELECT_OTHER_RUNS = "select runs that have it (--trace, --policy, --prefetch, --cache) or plot another kind"


@dataclass(frozen=True)
class Metric:
    column: str
    label: str
    scale: float = 1.0
    hint: str = ""  # how to get the column, when it is absent
    log_y: bool = False
    empty: str = ""  # what to do when it is empty in every run drawn ("": select other runs)
    why_empty: str = ""  # the likely reason for that


# Ratios are fractions from 0 to 1 everywhere (tables, JSON, databases, figures; docs/index.md).
HIT_RATIO = Metric("hit_ratio", "hit ratio")
MISS_RATIO = Metric("miss_ratio", "miss ratio")
DISK_REQUESTS = Metric("disk_requests", "disk requests")
EXEC_TIME = Metric(
    "exec_time_s",
    "execution time (s)",
    hint="run the sweep in timed mode (--timing)",
    empty="select timed runs, or run the sweep in timed mode (--timing)",
    why_empty="runs made without --timing?",
)


def metric_note(m: Metric, df: "pandas.DataFrame", select: str = SELECT_OTHER_RUNS) -> str | None:
    """Why metric ``m`` cannot be drawn from ``df``, or ``None`` when some run has it: its column
    is absent (with how to get it), or there but empty (NULL) in every run, as count-mode runs
    leave ``exec_time_s`` beside timed ones (with the likely reason and what to do; ``select``
    says how the caller's command picks other runs). ``bufsim plot`` and ``bufsim report`` both
    word their notes with it."""
    if m.column not in df.columns:
        return f"{m.label}: no `{m.column}` column in these results" + (f"; {m.hint}" if m.hint else "")
    if df[m.column].isna().all():
        return f"{empty_metric(m)}; {m.empty or select}"
    return None


def empty_metric(m: Metric, of: str = "") -> str:
    """The start of the note on metric ``m`` empty in every selected run (``of`` one trace)."""
    return (
        f"{m.label}: `{m.column}` is empty for every selected run"
        + (f" of {of}" if of else "")
        + (f" ({m.why_empty})" if m.why_empty else "")
    )


def policy_colour(spec: str) -> str:
    """The colour of a policy in every plot: its family's (the spec's name before any
    parameters), or one chosen by a stable hash for families without a fixed colour."""
    family = _family(spec)
    fixed = POLICY_STYLES.get(family)
    return PALETTE[fixed[0] if fixed else zlib.crc32(family.encode()) % len(PALETTE)]


def policy_marker(spec: str) -> str:
    """The bare family name has its family's marker; variants with parameters get one by hash
    (:func:`series_styles` keeps them apart within a figure)."""
    family = _family(spec)
    if spec.strip().lower() == family and family in POLICY_STYLES:
        return MARKERS[POLICY_STYLES[family][1]]
    return MARKERS[zlib.crc32(spec.strip().encode()) % len(MARKERS)]


def grey_level(colour: str) -> float:
    """The grey a colour prints as (0 black, 1 white): ITU-R BT.601 luma, what a grayscale
    conversion (PIL's mode "L", most printer drivers) computes."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return (0.299 * r + 0.587 * g + 0.114 * b) / 255.0


def distinct_in_grey(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two line styles (``color``, ``marker``, ``linestyle``) stay apart when printed
    in grayscale."""
    return (
        abs(grey_level(a["color"]) - grey_level(b["color"])) >= MIN_GREY_STEP
        or a["marker"] != b["marker"]
        or a["linestyle"] != b["linestyle"]
    )


def series_styles(idents: Sequence[dict[str, Any]], styles: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The line style of each series of one figure, in order: the policy's colour and marker,
    a dash per read-ahead setting, hollow markers when read-ahead is on. A series that a
    previous one would shadow in grayscale takes the first marker unused in the figure, so
    the result is the same for the same series list."""
    styles = styles or {}
    out: list[dict[str, Any]] = []
    for ident in idents:
        policy = str(ident.get("policy", "all"))
        prefetch = str(ident.get("prefetch", "none"))
        colour = policy_colour(policy)
        # A sampled curve (SHARDS) is dashed against the exact one it estimates.
        dash = "--" if "shards" in policy.lower() and prefetch == "none" else styles.get(prefetch, "-")
        style = {
            "color": colour,
            "marker": policy_marker(policy),
            "linestyle": dash,
            "markerfacecolor": "white" if prefetch != "none" else colour,
            "markeredgecolor": colour,
        }
        if any(not distinct_in_grey(style, o) for o in out):
            used = {o["marker"] for o in out}
            style["marker"] = next((m for m in MARKERS if m not in used), style["marker"])
        out.append(style)
    return out


def _family(spec: str) -> str:
    # "lirs(hir=1%)" and "LRU, SHARDS rate 0.01" both belong to their first word's family.
    return re.split(r"[(,\s]", str(spec).strip(), maxsplit=1)[0].lower()


# ---------------------------------------------------------------------------------------------
# Loading and filtering


def load(source: str | os.PathLike, table: str = "runs") -> "pandas.DataFrame":
    """Reads a results database (``.duckdb``: its ``runs`` table), a Parquet, CSV or JSON
    (records or lines) file into a DataFrame. Every number of the core's result table it holds
    is checked (:func:`check_numbers`): a count is a whole number, a ratio a fraction from 0 to
    1, and every run has its cache size."""
    import pandas as pd

    from bufsim.errors import path_of

    path = path_of(source, "the results file")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file; give a results database, Parquet, CSV or JSON file")
    if os.path.isdir(path):
        raise SpecError(f"{path}: is a directory; give a results database, Parquet, CSV or JSON file")
    suffix = Path(path).suffix.lower()
    if suffix in (".duckdb", ".db"):
        from bufsim.sweeps import database_errors, read_only_results

        con = read_only_results(path, table)
        try:
            with database_errors(path):
                df = con.execute(f'SELECT * FROM "{table}"').df()
        finally:
            con.close()
        return check_numbers(df, lambda i: f"{path}: row {i + 1}").pipe(_runs_order)
    if suffix == ".parquet":
        import duckdb  # reads Parquet without pyarrow

        try:
            df = duckdb.connect().execute("SELECT * FROM read_parquet(?)", [path]).df()
        except duckdb.Error as e:
            raise SpecError(f"{path}: not a readable Parquet file ({duckdb_text(e)})") from None
        return check_numbers(df, lambda i: f"{path}: row {i + 1}").pipe(_runs_order)
    if suffix == ".csv":
        try:
            df = pd.read_csv(path, encoding="utf-8")
        except UnicodeDecodeError as e:
            raise SpecError(f"{path}: not a CSV table ({not_utf8(e)})") from None
        except (ValueError, pd.errors.ParserError) as e:  # EmptyDataError is a ValueError
            raise SpecError(f"{path}: not a readable CSV table ({str(e).splitlines()[0]})") from None
        # Line 1 is the header.
        return check_numbers(df, lambda i: f"{path}:{i + 2}")
    if suffix in (".json", ".jsonl"):
        what = "not JSON records, JSON lines, `bufsim mrc --json` or `bufsim analyze --json` output"
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError as e:
            raise SpecError(f"{path}: {what} ({not_utf8(e)})") from None
        report = _json_object(text)
        for keys, shape, item in (
            ({"sizes", "miss_ratio", "shards"}, mrc_curves, "curve point"),
            ({"temporal_distance", "footprint"}, temporal_distances, "bin"),
        ):
            if report is not None and keys <= report.keys():
                try:
                    df = shape(report)
                except SpecError as e:
                    raise SpecError(f"{path}: {e}") from None
                return check_numbers(df, lambda i, item=item: f"{path}: {item} {i + 1}")
        lines = suffix == ".jsonl" or not text.lstrip().startswith("[")
        import io

        try:
            df = pd.read_json(io.StringIO(text), lines=lines, precise_float=True)
        except ValueError as e:
            raise SpecError(f"{path}: {what} ({str(e).splitlines()[0]})") from None
        return check_numbers(df, (lambda i: f"{path}:{i + 1}") if lines else (lambda i: f"{path}: record {i + 1}"))
    raise SpecError(f"{path}: unknown file type `{suffix}`; give .duckdb, .parquet, .csv or .json")


# Columns every run has, at least 1: without them no point has a place on the cache axis.
_SIZE_COLUMNS = ("cache_blocks", "block_size")

# Numbers of the long shapes the figures also draw from (a histogram's bins, a heatmap's
# windows, a timeline's samples; docs/plots.md): when the column is there, every row has one.
_SHAPE_FIELDS = tuple(
    {"name": name, "kind": kind}
    for name, kind in (
        ("distance", "int"),
        ("count", "int"),
        ("size_blocks", "int"),
        ("window", "int"),
        ("first_request", "int"),
        ("last_request", "int"),
        ("time", "float"),
        ("time_s", "float"),
    )
)


def check_numbers(df: "pandas.DataFrame", where: Callable[[int], str]) -> "pandas.DataFrame":
    """Checks the numbers of the core's result table among ``df``'s columns and returns ``df``
    with them as numbers: a count is a whole number of zero or more, a ratio (``*_ratio``) a
    fraction from 0 to 1 (what bufsim draws, docs/plots.md), any other a finite number of zero
    or more; an empty cell is a NULL (a timing column of a count-mode run), except that every
    run needs its ``cache_blocks`` (and ``block_size``, when the column is filled at all).
    ``where(i)`` names the ``i``-th row (0-based) for the SpecError that refuses the first
    wrong cell, such as ``runs.csv:7``."""
    import numpy as np
    import pandas as pd

    from bufsim.results import RESULT_FIELDS

    shape = {f["name"] for f in _SHAPE_FIELDS}
    for f in (*RESULT_FIELDS, *_SHAPE_FIELDS):
        name = f["name"]
        if name not in df.columns or f["kind"] not in ("int", "float"):
            continue
        col = df[name]
        given = col.notna() & (col.astype(str).str.strip() != "")
        num = pd.to_numeric(col.where(given), errors="coerce")
        values = num.to_numpy(dtype=float, na_value=np.nan)
        low = 1 if name in _SIZE_COLUMNS else 0
        problems = [
            (
                ~given if name in ("cache_blocks", *shape) or (name == "block_size" and given.any()) else None,
                "is empty",
            ),
            (given & num.isna(), "must be a number"),
            (given & ~np.isfinite(values), "must be a finite number"),
            (values < low, f"must be {low} or more"),
            # The remainder of an infinite value is NaN (with a warning): taken over finite ones only.
            (
                np.isfinite(values) & (np.mod(values, 1, where=np.isfinite(values), out=np.zeros_like(values)) != 0)
                if f["kind"] == "int"
                else None,
                "must be a whole number",
            ),
            (values > 1 if name.endswith("_ratio") else None, "must be a fraction from 0 to 1"),
        ]
        # The first wrong row, and the first thing wrong with it.
        found = [
            (int(rows[0]), k)
            for k, (mask, _) in enumerate(problems)
            if mask is not None and len(rows := np.flatnonzero(np.asarray(mask, dtype=bool)))
        ]
        if found:
            i, k = min(found)
            value = col.iloc[i]
            value = value.item() if hasattr(value, "item") else value
            shown = f", not {value!r}" if isinstance(value, str) else f", not {value}" if given.iloc[i] else ""
            raise SpecError(
                f"{where(i)}: {name} {problems[k][1]}{shown}; correct the file, or export the runs again "
                "(`bufsim results export`)"
            )
        if col.dtype == object:
            df = df.assign(**{name: num})
    check_shapes(df, where)
    return df


def _histogram(h: Any) -> bool:
    """Whether ``h`` is a histogram as the core writes it: whole number -> whole number."""
    if not isinstance(h, dict):
        return False
    for k, n in h.items():
        if not (str(k).strip().isdigit() and isinstance(n, int) and not isinstance(n, bool) and n >= 0):
            return False
    return True


def _timeline(t: Any) -> bool:
    """Whether ``t`` is a partition timeline: ``{"unit": ..., "samples": [[time, partition,
    size_blocks], ...]}`` with finite times and sizes of zero or more."""
    if not isinstance(t, dict) or not isinstance(t.get("samples"), list):
        return False
    return all(
        isinstance(s, list) and len(s) == 3 and _numbers([s[0], s[2]]) and math.isfinite(s[0]) and s[2] >= 0
        for s in t["samples"]
    )


# What a JSON column of the runs table must hold, and how to say it.
_JSON_SHAPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "config": (lambda c: isinstance(c, dict), "a JSON object"),
    "partition_timeline": (_timeline, 'a JSON object {"unit": ..., "samples": [[time, partition, size_blocks], ...]}'),
}
_HISTOGRAM = (_histogram, "a JSON object of whole numbers (size -> count)")


def check_shapes(df: "pandas.DataFrame", where: Callable[[int], str]) -> None:
    """Refuses, naming the row, a text column holding a list or object (``policy: [1]``) and
    a JSON column whose cell is not what bufsim writes there (:data:`_JSON_SHAPES`)."""
    from bufsim.results import RESULT_FIELDS

    text = [f["name"] for f in RESULT_FIELDS if f["kind"] == "str"] + ["trace", "key", "bufsim_version"]
    for name in text:
        if name not in df.columns or df[name].dtype != object:
            continue
        for i, v in enumerate(df[name]):
            if isinstance(v, (list, dict)):
                raise SpecError(
                    f"{where(i)}: {name} must be text, not {json.dumps(v)[:60]}; correct the file, or export "
                    "the runs again (`bufsim results export`)"
                )
    shapes = {**_JSON_SHAPES, **{f["name"]: _HISTOGRAM for f in RESULT_FIELDS if f["kind"] == "histogram"}}
    for name, (ok, shape) in shapes.items():
        if name not in df.columns:
            continue
        for i, v in enumerate(df[name]):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            try:
                data = json.loads(v) if isinstance(v, (str, bytes)) else v
            except ValueError:
                data = ok  # not JSON: refused below
            if not ok(data):
                shown = v if isinstance(v, str) else json.dumps(v, default=str)
                raise SpecError(
                    f"{where(i)}: {name} must be {shape}, not {shown[:60]!r}; correct the file, or export the "
                    "runs again (`bufsim results export`)"
                )


def _json_object(text: str) -> dict[str, Any] | None:
    """The one JSON object a file holds (what `bufsim mrc --json` and `bufsim analyze --json`
    print), or None for JSON lines, arrays and anything else."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None  # JSON lines: one object per line
    return value if isinstance(value, dict) else None


def mrc_curves(report: dict[str, Any]) -> "pandas.DataFrame":
    """The long shape of a `bufsim mrc --json` report (or :func:`bufsim.analysis.mrc_report`):
    one row per cache size and curve, ``method`` naming the curve (``LRU, exact`` from
    Mattson's stack algorithm, ``LRU, SHARDS rate R`` or ``LRU, SHARDS <= N blocks``), with
    ``cache_blocks``, ``miss_ratio`` (a fraction), ``block_size`` and ``trace``, ready for
    :func:`mrc`, which draws the SHARDS curve dashed against the exact one."""
    import pandas as pd

    what = "not `bufsim mrc --json` output"
    sizes = report.get("sizes")
    if not _numbers(sizes):
        raise SpecError(f"{what}: `sizes` must be a list of cache sizes")
    s = report.get("shards")
    if s is not None and not isinstance(s, dict):
        raise SpecError(f"{what}: `shards` must be an object (or null)")
    for name, curve in (("miss_ratio", report.get("miss_ratio")), ("shards.miss_ratio", s and s.get("miss_ratio", []))):
        if curve is not None and not (_numbers(curve) and len(curve) == len(sizes)):
            raise SpecError(f"{what}: `{name}` must be a list of {len(sizes)} miss ratios, one per size")
    if s is not None and s.get("mode") == "fixed-rate" and not _numbers([s.get("rate")]):
        raise SpecError(f"{what}: `shards.rate` must be a number")
    rows = []
    base = {"trace": report.get("trace"), "block_size": report.get("block_size")}
    if report.get("miss_ratio") is not None:
        rows += [
            {**base, "method": "LRU, exact", "cache_blocks": c, "miss_ratio": m}
            for c, m in zip(report["sizes"], report["miss_ratio"])
        ]
    s = report.get("shards")
    if s is not None:
        name = (
            f"LRU, SHARDS rate {s['rate']:g}"
            if s.get("mode") == "fixed-rate"
            else f"LRU, SHARDS ≤ {s.get('blocks')} blocks"
        )
        rows += [
            {**base, "method": name, "cache_blocks": c, "miss_ratio": m}
            for c, m in zip(report["sizes"], s["miss_ratio"])
        ]
    df = pd.DataFrame(rows, columns=["trace", "block_size", "method", "cache_blocks", "miss_ratio"])
    if s is not None and s.get("error") is not None:
        df.attrs["shards_error"] = s["error"]
    return df


def _numbers(values: Any) -> bool:
    """Whether ``values`` is a list of numbers (JSON's, not true or false)."""
    return isinstance(values, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def temporal_distances(analysis: dict[str, Any]) -> "pandas.DataFrame":
    """The temporal distance histogram of a `bufsim analyze --json` report (or
    ``Analysis.to_dict()``): ``distance`` (power-of-two bin), ``count``, ``trace``; the whole
    report is kept in ``df.attrs["analysis"]``."""
    import pandas as pd

    td = analysis.get("temporal_distance")
    bins = td.get("bins") if isinstance(td, dict) else None
    if not isinstance(bins, list) or not all(isinstance(b, dict) and {"distance", "count"} <= b.keys() for b in bins):
        raise SpecError(
            "not `bufsim analyze --json` output: `temporal_distance.bins` must be a list of objects with "
            "`distance` and `count`"
        )
    df = pd.DataFrame(
        [{"distance": b["distance"], "count": b["count"], "trace": analysis.get("trace")} for b in bins],
        columns=["distance", "count", "trace"],
    )
    df.attrs["analysis"] = analysis
    return df


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


def select(
    df: "pandas.DataFrame",
    *,
    traces: Sequence[str] = (),
    policies: Sequence[str] = (),
    prefetches: Sequence[str] = (),
    caches: Sequence[int] = (),
    versions: Sequence[str] = (),
) -> "pandas.DataFrame":
    """Keeps the rows matching every given filter. A trace matches by path, file name or a
    prefix of its content hash; a policy or read-ahead spec in any spelling (:func:`spellings`);
    a cache size exactly, in blocks; a bufsim version (``bufsim_version``) exactly."""
    # One name is one filter value, not its letters (`policies="lru"`).
    traces, policies, prefetches, caches, versions = (
        [v] if isinstance(v, (str, int)) else v for v in (traces, policies, prefetches, caches, versions)
    )
    out = df
    if traces:
        if "trace" not in out.columns:
            raise SpecError("--trace: these results have no `trace` column")
        want = set(traces)
        keep = out["trace"].map(lambda t: t in want or os.path.basename(str(t)) in want)
        if "trace_hash" in out.columns:
            keep |= out["trace_hash"].map(lambda h: any(str(h).startswith(w) for w in want if len(w) >= 6))
        out = out[keep]
    for col, values in (
        ("policy", policies),
        ("prefetch", prefetches),
        ("cache_blocks", caches),
        ("bufsim_version", [str(v) for v in versions]),
    ):
        if values:
            if col not in out.columns:
                raise SpecError(f"cannot filter on `{col}`: these results have no such column")
            refuse_unmatched_specs(col, values, out[col])
            out = out[out[col].isin(spellings(col, values))]
    return out


def refuse_unmatched_specs(column: str, values: Iterable[Any], present: Iterable[Any], option: str = "") -> None:
    """Refuses a policy or read-ahead spec that matches no value in ``present`` and that the
    core cannot read (``lru(``, an unknown name), with the core's reason, rather than finding
    no runs for it. A spec that matches runs is kept however it is spelled: results of another
    version may hold a policy this one does not know. ``option`` names where the spec was
    given (default: ``--policy 'SPEC'``)."""
    from bufsim import _core

    canonical = {"policy": _core.canonical_policy, "prefetch": _core.canonical_prefetch}.get(column)
    if canonical is None:
        return
    have = {str(p) for p in present}
    for v in values:
        if not isinstance(v, str) or have.intersection(str(s) for s in spellings(column, [v])):
            continue
        try:
            canonical(v)
        except SpecError as e:
            raise SpecError(f"{option or f'--{column} {v!r}'}: {e}") from None


def spellings(column: str, values: Iterable[Any]) -> list[Any]:
    """The values a filter on ``column`` matches: each as given and, for a policy or read-ahead
    spec, in the canonical spelling a sweep stores (``lirs(hir=1%)`` finds the runs of
    ``lirs``, ``LRU`` those of ``lru``). A spec the core does not know is matched as given."""
    from bufsim import _core

    canonical = {"policy": _core.canonical_policy, "prefetch": _core.canonical_prefetch}.get(column)
    values = list(values)
    out = list(values)
    for v in values:
        if canonical is not None and isinstance(v, str):
            try:
                out.append(canonical(v))
            except SpecError:
                pass
    return out


# ---------------------------------------------------------------------------------------------
# Figures


# A two-column paper: a figure of one panel fits one column, several panels span both.
SINGLE_COLUMN_IN = 3.5
DOUBLE_COLUMN_IN = 7.0
PANEL_HEIGHT_IN = 2.3
# Below this an axes is too flat to read; the figure grows instead (a long legend, a title).
MIN_AXES_HEIGHT_IN = 1.4
# Whitespace kept between any text and the figure's edge (points).
EDGE_PT = 2.0


def _figure(nrows: int, ncols: int, width: float | None = None, height: float | None = None):
    # A bare Figure draws through Agg (or the PDF/SVG backends) without pyplot, so plotting
    # never touches a user's interactive backend and is safe from threads.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if width is None:
        width = SINGLE_COLUMN_IN if ncols == 1 else DOUBLE_COLUMN_IN
    fig = Figure(figsize=(width, (height or PANEL_HEIGHT_IN) * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    fig.get_layout_engine().set(w_pad=EDGE_PT / 72, h_pad=EDGE_PT / 72)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def _style() -> dict[str, Any]:
    # 8-9 pt type: the size of a two-column paper's captions once the figure is placed at 100%.
    return {
        "font.size": 8,
        "axes.titlesize": 9,
        "figure.titlesize": 9,
        "axes.labelsize": 8.5,
        "legend.fontsize": 8,
        "xtick.labelsize": 8,
        "ytick.labelsize": 8,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "grid.linewidth": 0.5,
        "lines.linewidth": 1.2,
        "lines.markersize": 4,
        "legend.handlelength": 2.6,
        "legend.columnspacing": 1.2,
        "legend.borderaxespad": 0.2,
        "svg.hashsalt": "bufsim",
        "svg.fonttype": "path",
        "pdf.fonttype": 42,
    }


def wrap_label(text: str, width: int) -> str:
    """Breaks a label into lines of at most ``width`` characters where it can: after commas,
    at spaces, or before an opening parenthesis (a policy spec's parameters)."""
    if width < 4 or len(text) <= width:
        return text
    pieces = re.findall(r"[^,\s(]*(?:\(|,\s*|\s+|$)", text)
    pieces = [p for p in pieces if p]
    if len(pieces) > 1 and pieces[0].endswith("("):
        pieces[0:2] = [pieces[0][:-1], "(" + pieces[1]]
    lines, line = [], ""
    for p in pieces:
        if line and len(line) + len(p.rstrip()) > width:
            lines.append(line.rstrip())
            line = p.lstrip() if p.strip() else ""
        else:
            line += p
    if line.strip():
        lines.append(line.rstrip())
    return "\n".join(lines)


def _texts(fig, renderer, room: float) -> list:
    """The texts that must stay on the canvas, each with the width it may take: the figure's
    for its title, its axes' for an axes title (so neighbouring panels' titles never collide)
    and axis labels."""
    out = [(t, room) for t in (fig._suptitle,) if t is not None and t.get_text()]
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        width = ax.get_window_extent(renderer).width
        out += [(t, width) for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label) if t.get_text()]
    return out


def fit_layout(fig, handles: dict[str, Any] | None = None, rounds: int = 10):
    """Makes every text of ``fig`` fit on its canvas, with the legend of ``handles`` (label ->
    artist) below the panels: fewer legend columns, then wrapped legend labels and titles
    where a line is wider than the figure, and a taller figure where the legend and titles
    would leave the axes too flat. Measures with the Agg renderer at the figure's dpi; the
    PDF and SVG backends use the same font metrics. Returns the legend (or ``None``)."""
    labels = list(handles or {})
    artists = list((handles or {}).values())
    ncols = min(len(labels), 3 if fig.get_figwidth() <= SINGLE_COLUMN_IN else 5)
    legend = None
    for _ in range(rounds):
        if legend is not None:
            legend.remove()
        # A legend's columns are laid out when it is made, so each round makes a new one.
        legend = fig.legend(artists, labels, loc="outside lower center", ncols=ncols, frameon=False) if labels else None
        with warnings.catch_warnings():
            # A first draw may find the panels too flat ("constrained_layout not applied"):
            # the height check below is what fixes that.
            warnings.simplefilter("ignore", UserWarning)
            fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        room = fig.bbox.width - 2 * EDGE_PT * fig.dpi / 72
        changed = False
        if legend is not None and legend.get_window_extent(renderer).width > room:
            if ncols > 1:
                ncols -= 1
            else:
                for i, t in enumerate(legend.get_texts()):
                    if t.get_window_extent(renderer).width > room * 0.75:
                        longest = max(len(line) for line in labels[i].split("\n"))
                        labels[i] = wrap_label(labels[i].replace("\n", ""), max(8, int(longest * 0.7)))
            changed = True
        for t, width in _texts(fig, renderer, room):
            if t.get_window_extent(renderer).width > width:
                longest = max(len(line) for line in t.get_text().split("\n"))
                t.set_text(wrap_label(t.get_text().replace("\n", " "), max(8, int(longest * 0.75))))
                changed = True
        # Height: the legend and title take what they need, each row of panels keeps at least
        # MIN_AXES_HEIGHT_IN plus room for its tick and axis labels (about 0.55 in at 8-9 pt).
        rows = (
            len(
                {
                    round(ax.get_subplotspec().rowspan.start)
                    for ax in fig.axes
                    if ax.get_visible() and ax.get_subplotspec() is not None
                }
            )
            or 1
        )
        extra = (legend.get_window_extent(renderer).height if legend is not None else 0.0) / fig.dpi
        if fig._suptitle is not None:
            extra += fig._suptitle.get_window_extent(renderer).height / fig.dpi + 0.05
        needed = rows * (MIN_AXES_HEIGHT_IN + 0.55) + extra
        if fig.get_figheight() < needed - 0.01:
            fig.set_figheight(needed)
            changed = True
        if not changed:
            break
    return legend


def _finish(fig, handles: dict[str, Any], title: str | None) -> None:
    """Title above, legend below the panels (outside them, so it never hides a curve), then
    :func:`fit_layout`."""
    if title:
        fig.suptitle(title)
    fit_layout(fig, handles)


def _auto_title(what: str, df: "pandas.DataFrame", title: str | None) -> str | None:
    """The default title says what is drawn: ``Miss ratio vs cache size — grep, 4 policies``.
    ``title=""`` draws none (a paper's caption usually says it)."""
    if title is not None:
        return title or None
    parts = []
    if "trace" in df.columns and df["trace"].nunique() > 0:
        n = df["trace"].nunique()
        parts.append(_stem(df["trace"].iloc[0]) if n == 1 else f"{n} traces")
    if "policy" in df.columns and df["policy"].nunique() > 1:
        parts.append(f"{df['policy'].nunique()} policies")
    return what + (" — " + ", ".join(parts) if parts else "")


def _stem(path: Any) -> str:
    text = str(path)
    tag = _CONTENT_TAG.search(text)
    if tag:
        return _stem(text[: tag.start()]) + tag.group(0)
    name = os.path.basename(text)
    for suffix in (".gz", ".zst", ".xz", ".bz2"):
        name = name[: -len(suffix)] if name.endswith(suffix) else name
    return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name


# What :func:`trace_contents` adds to a path that held several contents.
_CONTENT_TAG = re.compile(r" \(sha256 [0-9a-f]{8}\)$")


def trace_contents(df: "pandas.DataFrame") -> "pandas.DataFrame":
    """``df`` with the runs of one trace path that held different contents told apart: a
    trace file changed between two sweeps into one database leaves runs of both under one
    path, and drawn as one trace they would zigzag between the two. Such rows get
    ``PATH (sha256 12345678)`` (the start of their ``trace_hash``) as ``trace``; every other
    row keeps its path."""
    if "trace" not in df.columns or "trace_hash" not in df.columns or df.empty:
        return df
    several = df.groupby("trace", dropna=False)["trace_hash"].transform("nunique") > 1
    if not several.any():
        return df
    tagged = df["trace"].astype(str) + " (sha256 " + df["trace_hash"].astype(str).str[:8] + ")"
    return df.assign(trace=df["trace"].where(~several, tagged))


def check_figure_path(out: str | os.PathLike, option: str = "--out") -> Path:
    """Refuses a figure name matplotlib cannot save to (empty, an extension other than .png,
    .pdf or .svg, a directory, a name in a directory that does not exist or under a file); a
    command checks it before its work, not after. ``option`` names where it was given."""
    from bufsim.errors import refuse_empty

    path = Path(refuse_empty(out, option, "a figure file name (.png, .pdf or .svg)"))
    suffix = path.suffix.lower()
    if os.path.isdir(path):
        raise SpecError(f"{path}: is a directory; give a figure file name (.png, .pdf or .svg)")
    if suffix not in FORMATS:
        raise SpecError(f"{path}: unknown figure format `{suffix or '(none)'}`; end the name with .png, .pdf or .svg")
    refuse_under_a_file(path)
    if not path.parent.exists():
        raise FileNotFoundError(f"{path.parent}: no such directory for the figure")
    return path


def _save(fig, out: str | os.PathLike) -> Path:
    path = check_figure_path(out)
    suffix = path.suffix.lower()
    import matplotlib

    # Dates and random ids would make two renderings of the same data differ.
    metadata = {
        ".png": {"Software": None},
        ".pdf": {"CreationDate": None, "ModDate": None, "Producer": None},
        ".svg": {"Date": None},
    }[suffix]
    with matplotlib.rc_context(_style()), warnings.catch_warnings():
        # A name in a script the font lacks (a trace named in CJK, in DejaVu Sans) is drawn
        # with boxes for those characters; matplotlib's warning for each glyph is only noise
        # on a command's standard error.
        warnings.filterwarnings("ignore", message=r"Glyph .* missing from font", category=UserWarning)
        with writing(path):
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
        if hi / lo > 2**12:  # too many ticks: every other power of two
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
            if configs.map(lambda c, k=k: json.dumps(c.get(k), sort_keys=True)).nunique() > 1 and k in df.columns:
                cols.append(k)
    # Runs of two bufsim versions are two results, not one curve: each version is its own
    # series, labelled with it (`--bufsim-version` keeps one).
    if "bufsim_version" in df.columns and df["bufsim_version"].astype(str).nunique() > 1:
        cols.append("bufsim_version")
    return cols


def setting_columns(df: "pandas.DataFrame") -> list[str]:
    """The columns besides policy and read-ahead that split series (:func:`series_columns`):
    what a figure that draws runs by policy and read-ahead must still keep apart."""
    return [c for c in series_columns(df) if c not in ("policy", "prefetch")]


def version_notes(df: "pandas.DataFrame") -> list[str]:
    """A note when ``df`` holds runs of several bufsim versions (drawn apart, not merged)."""
    if "bufsim_version" not in df.columns:
        return []
    versions = sorted(df["bufsim_version"].dropna().astype(str).unique())
    if len(versions) < 2:
        return []
    return [
        f"these runs come from {len(versions)} bufsim versions ({', '.join(versions)}); each version's runs "
        "are drawn apart, labelled with it (--bufsim-version VERSION keeps one)"
    ]


def setting_label(k: str, v: Any) -> str:
    """How a series setting reads in a legend or title: ``bufsim 0.1.0``, ``seed=7``; ``""``
    for a setting the runs left empty (NULL: count-mode runs have no ``device``), which labels
    leave out rather than print ``device=nan``."""
    if _missing(v):
        return ""
    return f"bufsim {v}" if k == "bufsim_version" else f"{k}={v}"


def _missing(v: Any) -> bool:
    import pandas as pd

    return pd.api.types.is_scalar(v) and bool(pd.isna(v))


def _series(df: "pandas.DataFrame", cols: list[str]):
    """Groups ``df`` into series in a fixed order: by policy in order of first appearance,
    read-ahead off first, then the remaining settings sorted."""
    if not cols:
        yield {}, df
        return
    first_seen = {p: i for i, p in enumerate(dict.fromkeys(df["policy"]))} if "policy" in cols else {}

    def order(key: tuple) -> tuple:
        d = dict(zip(cols, key))
        return (first_seen.get(d.get("policy"), 0), d.get("prefetch", "none") != "none", tuple(str(d[c]) for c in cols))

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
    parts += [setting_label(k, v) for k, v in ident.items() if k not in ("policy", "prefetch")]
    return " ".join(p for p in parts if p) or "all runs"


def _trace_panels(df: "pandas.DataFrame") -> list[tuple[str, "pandas.DataFrame"]]:
    if "trace" not in df.columns:
        return [("", df)]
    # One panel per trace content (a path that held several gets one per content).
    df = trace_contents(df)
    return [(os.path.basename(str(t)), g) for t, g in df.groupby("trace", sort=True)]


def metric_grid(
    df: "pandas.DataFrame",
    out: str | os.PathLike,
    metrics: Sequence[Metric],
    *,
    title: str | None = None,
    what: str | None = None,
) -> Plot:
    """Plots each metric against cache size (log x), one row of panels per trace, one line
    per series (see :func:`series_columns`). Needs ``cache_blocks`` and the metric columns;
    a metric whose column is missing, or empty (NULL) in every run, is left out with a note
    that says which and what to do. ``title=None`` titles the figure from its content
    (``what`` and the trace and policy counts); ``""`` for none."""
    notes: list[str] = []
    if df.empty:
        return Plot(None, ["no runs to plot (empty input or filters match nothing)"])
    if "cache_blocks" not in df.columns:
        return Plot(None, ["no `cache_blocks` column: cannot plot against cache size"])
    df = trace_contents(df)
    present = []
    for m in metrics:
        note = metric_note(m, df)
        if note:
            notes.append(note)
        else:
            present.append(m)
    if not present:
        return Plot(None, notes)
    panels = _trace_panels(df)
    cols = series_columns(df)
    prefetch = _prefetch_style(df["prefetch"].astype(str)) if "prefetch" in df.columns else {}
    idents = [ident for ident, _ in _series(df, cols)]
    styles = dict(zip((_label(i) for i in idents), series_styles(idents, prefetch)))
    if what is None:
        what = " and ".join(m.label.split(" (")[0] for m in present).capitalize() + " vs cache size"
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig, axes = _figure(len(panels), len(present))
        handles: dict[str, Any] = {}
        for r, (trace, tdf) in enumerate(panels):
            x_all, xlabel = _cache_axis(tdf)
            for c, m in enumerate(present):
                ax = axes[r][c]
                if tdf[m.column].isna().all():
                    # Only with several traces: one of them (a count-mode sweep beside a timed
                    # one) leaves its panel blank, which the figure alone does not explain.
                    notes.append(f"{empty_metric(m, trace)}; its panel is blank")
                for ident, g in _series(tdf, cols):
                    g = g[g[m.column].notna()].sort_values("cache_blocks")
                    if g.empty:
                        continue
                    x, _ = _cache_axis(g)
                    label = _label(ident)
                    # A dense curve (an MRC at every size) keeps about a dozen markers.
                    (line,) = ax.plot(
                        x.to_numpy(),
                        (g[m.column] * m.scale).to_numpy(),
                        label=label,
                        markevery=max(1, len(g) // 12),
                        **styles[label],
                    )
                    handles.setdefault(label, line)
                _log2_axis(ax, x_all)
                ax.set_xlabel(xlabel)
                ax.set_ylabel(m.label)
                if m.column in ("disk_requests",):
                    _count_axis(ax)
                if m.column in ("hit_ratio", "miss_ratio"):
                    ax.set_ylim(bottom=0)
                if len(panels) > 1 and c == 0:
                    ax.set_title(_stem(trace), loc="left")
        _finish(fig, handles, _auto_title(what, df, title))
        return Plot(_save(fig, out), notes + version_notes(df), len(panels) * len(present), fig)


def hit_ratio(df: "pandas.DataFrame", out: str | os.PathLike, *, title: str | None = None) -> Plot:
    """Hit ratio (0 to 1) against cache size (log x), one line per policy and read-ahead setting,
    one panel per trace. Shape: the ``runs`` table, or any frame with ``cache_blocks``,
    ``hit_ratio`` (a fraction) and optionally ``policy``, ``prefetch``, ``trace``,
    ``block_size``."""
    return metric_grid(df, out, [HIT_RATIO], title=title, what="Hit ratio vs cache size")


def prefetch_panels(df: "pandas.DataFrame", out: str | os.PathLike, *, title: str | None = None) -> Plot:
    """The three panels of the prefetching paper's figures (§5): hit ratio, disk requests and
    execution time against cache size, one line per policy, read-ahead off solid and on dashed.
    Execution time needs ``exec_time_s`` (timed mode); without it the panel is left out."""
    return metric_grid(df, out, [HIT_RATIO, DISK_REQUESTS, EXEC_TIME], title=title, what="Read-ahead and cache size")


def mrc(df: "pandas.DataFrame", out: str | os.PathLike, *, title: str | None = None) -> Plot:
    """Miss ratio curves: miss ratio against cache size (log x). Shape: ``cache_blocks`` and
    ``miss_ratio`` (a fraction; derived from ``hit_ratio`` when only that is there), with
    optional series columns ``policy`` (or ``method``, e.g. ``mattson``/``shards``) and
    ``trace``."""
    df = df.copy()
    if "miss_ratio" not in df.columns and "hit_ratio" in df.columns:
        df["miss_ratio"] = 1.0 - df["hit_ratio"]
    what = "Miss ratio vs cache size"
    if "policy" not in df.columns:
        for alt in ("method", "series"):
            if alt in df.columns:
                df["policy"] = df[alt].astype(str)
                if title is None:  # curves of one trace's analysis, not policies
                    stem = _stem(df["trace"].iloc[0]) if "trace" in df.columns and len(df) else ""
                    title = "LRU miss ratio curve" + (f" — {stem}" if stem else "") if alt == "method" else None
                break
    return metric_grid(df, out, [MISS_RATIO], title=title, what=what)


# ---------------------------------------------------------------------------------------------
# Histogram- and timeline-shaped data


def explode_json(df: "pandas.DataFrame", column: str, rows: Callable[[Any], list[dict]]) -> "pandas.DataFrame":
    """Turns a JSON column of the runs table into a long table: one row per element that
    ``rows`` yields, keeping the run's identity columns beside it (and the settings that
    tell its runs apart, :func:`setting_columns`)."""
    import pandas as pd

    keep = [c for c in ("key", "trace", "policy", "prefetch", "cache_blocks", "block_size") if c in df.columns]
    keep += [c for c in setting_columns(df) if c not in keep]
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
    return explode_json(
        df, "request_sizes", lambda h: [{"size_blocks": int(k), "requests": int(v)} for k, v in h.items()]
    )


def sequence_cdf(
    df: "pandas.DataFrame", out: str | os.PathLike, *, title: str | None = None, max_panels: int = 12
) -> Plot:
    """DULO §5 (Figures 3 and 4): for each run, the share (0 to 1) of requested blocks that sit in
    disk requests (sequences) of at most x blocks, against x (log x). One panel per policy (and
    trace), at most ``max_panels`` (a note names the rest); in a panel, cache sizes go from dark
    to light along a ramp whose grey level rises steadily, read-ahead settings differ by dash.

    Shape: a long table with ``size_blocks`` (blocks in one disk request) and ``requests``
    (how many disk requests had that size), plus series columns (``policy``, ``prefetch``,
    ``cache_blocks``, ``trace``); or the runs table with a ``request_sizes`` column."""
    notes: list[str] = []
    df = trace_contents(df)
    settings = setting_columns(df)
    if "size_blocks" not in df.columns:
        if "request_sizes" not in df.columns:
            return Plot(
                None,
                [
                    "sequence-size CDF: no `request_sizes` column (disk request sizes) in these "
                    "results, and no `size_blocks`/`requests` columns"
                ],
            )
        df = sequence_sizes(df)
        if df.empty:
            return Plot(None, ["sequence-size CDF: `request_sizes` is empty in every run"])
    missing = [c for c in ("size_blocks", "requests") if c not in df.columns]
    if missing:
        return Plot(None, [f"sequence-size CDF: missing column(s) {', '.join(missing)}"])
    # Runs that differ in another setting (a seed, a bufsim version) get panels of their own:
    # summed into one curve they would make a run that never was.
    panel_cols = [c for c in ("trace", "policy") if c in df.columns] + [c for c in settings if c in df.columns]
    panels = [((), df)] if not panel_cols else list(df.groupby(panel_cols, sort=False, dropna=False))
    if len(panels) > max_panels:
        notes.append(
            f"sequence-size CDF: {len(panels)} policies; drew the first {max_panels} (choose others with --policy)"
        )
        panels = panels[:max_panels]
    sizes = sorted(df["cache_blocks"].unique()) if "cache_blocks" in df.columns else []
    ramp = cache_size_colours(len(sizes))
    prefetches = (
        sorted(df["prefetch"].astype(str).unique(), key=lambda v: (v != "none", v))
        if "prefetch" in df.columns
        else ["none"]
    )
    dashes = _prefetch_style(prefetches)
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig, axes = _figure(nrows, ncols, height=2.0 if ncols > 1 else PANEL_HEIGHT_IN)
        handles: dict[str, Any] = {}
        for i, (key, pdf) in enumerate(panels):
            ax = axes[i // ncols][i % ncols]
            key = key if isinstance(key, tuple) else (key,)
            run_cols = [c for c in ("prefetch", "cache_blocks") if c in pdf.columns]
            runs = [((), pdf)] if not run_cols else list(pdf.groupby(run_cols, sort=True))
            for rkey, g in sorted(runs, key=lambda kv: _run_order(kv[0], run_cols)):
                ident = dict(zip(run_cols, rkey if isinstance(rkey, tuple) else (rkey,)))
                x, cdf = sequence_cdf_points(g.groupby("size_blocks")["requests"].sum())
                if not len(x):
                    continue
                colour = ramp[sizes.index(ident["cache_blocks"])] if "cache_blocks" in ident else PALETTE[0]
                dash = dashes.get(str(ident.get("prefetch", "none")), "-")
                # One size alone (every disk request one block long) is a point: a step line
                # through a single point draws nothing.
                marker = "o" if len(x) == 1 else None
                (line,) = ax.step(x, cdf, where="post", color=colour, linestyle=dash, marker=marker)
                if "cache_blocks" in ident:
                    handles.setdefault(_cdf_label("cache_blocks", ident["cache_blocks"], g), (colour, "-"))
                if len(prefetches) > 1:
                    pf = str(ident.get("prefetch", "none"))
                    handles.setdefault("read-ahead off" if pf == "none" else f"+ {pf}", ("#000000", dash))
            _log2_axis(ax, df["size_blocks"])
            ax.set_ylim(0, 1.005)
            ident = dict(zip(panel_cols, key))
            if len(panels) > 1 or "policy" in ident:
                labels = (_cdf_label(k, v, pdf) for k, v in ident.items() if k != "trace" or df["trace"].nunique() > 1)
                ax.set_title(", ".join(t for t in labels if t), loc="left")
            if i // ncols == nrows - 1 or i + ncols >= len(panels):
                ax.set_xlabel("sequence size (blocks)")
            if i % ncols == 0:
                ax.set_ylabel("share of blocks in\nsequences ≤ this size")
        for j in range(len(panels), nrows * ncols):
            axes[j // ncols][j % ncols].set_visible(False)
        # One legend entry per cache size (its colour) and per read-ahead setting (its dash).
        from matplotlib.lines import Line2D

        order = sorted(handles, key=lambda k: handles[k][0] == "#000000")  # sizes, then read-ahead
        proxies = {k: Line2D([], [], color=handles[k][0], linestyle=handles[k][1]) for k in order}
        _finish(fig, proxies, _auto_title("Sequence-size CDF", df, title))
        return Plot(_save(fig, out), notes + version_notes(df), len(panels), fig)


def cache_size_colours(n: int) -> list[str]:
    """``n`` colours from dark to light (viridis up to its green, before the yellow that
    vanishes on white): grey level rises with cache size, so the order survives grayscale."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps["viridis"]
    return [to_hex(cmap(0.78 * i / max(1, n - 1))) for i in range(n)]


def _run_order(key: Any, cols: list[str]) -> tuple:
    d = dict(zip(cols, key if isinstance(key, tuple) else (key,)))
    return (str(d.get("prefetch", "none")) != "none", str(d.get("prefetch", "")), d.get("cache_blocks", 0))


def sequence_cdf_points(requests_by_size: "pandas.Series"):
    """DULO's CDF of one run: for each sequence size x (blocks), the fraction of requested
    blocks that sit in sequences of at most x blocks. ``requests_by_size`` maps a size to the
    number of disk requests of that size."""
    h = requests_by_size.sort_index()
    sizes = h.index.to_numpy()
    blocks = sizes * h.to_numpy()
    total = blocks.sum()
    if total == 0:
        return sizes[:0], blocks[:0].astype(float)
    return sizes, blocks.cumsum() / total


def _cdf_label(k: str, v: Any, g: "pandas.DataFrame") -> str:
    if k not in ("cache_blocks", "trace", "prefetch", "policy"):
        return setting_label(k, v)
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


def partition_timeline(
    df: "pandas.DataFrame", out: str | os.PathLike, *, stacked: bool = True, max_runs: int = 8, title: str | None = None
) -> Plot:
    """Partition sizes over time (AMP §4.3 Figure 13, stacked areas; storage-aware caching's
    per-device partitions, ``stacked=False`` for lines), one panel per run.

    Shape: a long table with ``time`` (logical time: accesses so far) or ``time_s`` (seconds,
    timed mode), ``partition`` (name) and ``size_blocks``; optional run columns (``key``,
    ``policy``, ``cache_blocks``, ``trace``) split panels. Or the runs table with a
    ``partition_timeline`` column."""
    notes: list[str] = []
    df = trace_contents(df)
    settings = setting_columns(df)
    if "partition" not in df.columns:
        if "partition_timeline" not in df.columns:
            return Plot(
                None,
                [
                    "partition timeline: no `partition_timeline` column in these results, and no "
                    "`time`/`partition`/`size_blocks` columns"
                ],
            )
        df = partition_sizes(df)
        if df.empty:
            return Plot(None, ["partition timeline: `partition_timeline` is empty in every run"])
    tcol = "time" if "time" in df.columns else "time_s" if "time_s" in df.columns else None
    if tcol is None or "size_blocks" not in df.columns:
        return Plot(None, ["partition timeline: need `time` (or `time_s`), `partition` and `size_blocks`"])
    if (df["partition"].isna() | (df["partition"].astype(str).str.strip() == "")).any():
        return Plot(None, ["partition timeline: a sample has no partition name"])
    run_cols = [c for c in ("key", "trace", "policy", "prefetch", "cache_blocks") if c in df.columns]
    run_cols += [c for c in settings if c in df.columns and c not in run_cols]
    runs = [((), df)] if not run_cols else list(df.groupby(run_cols, sort=True, dropna=False))
    if len(runs) > max_runs:
        notes.append(f"partition timeline: {len(runs)} runs; drew the first {max_runs} (filter with --policy/--cache)")
        runs = runs[:max_runs]
    names = sorted(df["partition"].astype(str).unique())
    colours = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(names)}
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig, axes = _figure(
            len(runs),
            1,
            width=DOUBLE_COLUMN_IN if len(runs) > 2 else SINGLE_COLUMN_IN,
            height=1.8 if len(runs) > 1 else PANEL_HEIGHT_IN,
        )
        handles: dict[str, Any] = {}
        for ax, (key, g) in zip((a[0] for a in axes), runs):
            key = key if isinstance(key, tuple) else (key,)
            wide = (
                g.pivot_table(index=tcol, columns="partition", values="size_blocks", aggfunc="last")
                .sort_index()
                .ffill()
                .fillna(0)
            )
            cols = [p for p in names if p in wide.columns]
            t = wide.index.to_numpy(dtype=float)
            if stacked:
                areas = ax.stackplot(
                    t,
                    *[wide[p].to_numpy() for p in cols],
                    labels=cols,
                    colors=[colours[p] for p in cols],
                    alpha=0.85,
                    step="post",
                )
                handles.update({p: a for p, a in zip(cols, areas) if p not in handles})
            else:
                for p in cols:
                    (line,) = ax.step(t, wide[p].to_numpy(), where="post", label=p, color=colours[p])
                    handles.setdefault(p, line)
            ax.set_xlabel("time (accesses)" if tcol == "time" else "time (s)")
            ax.set_ylabel("partition size\n(blocks)")
            ax.set_xlim(t.min(), t.max() if t.max() > t.min() else t.min() + 1)
            ident = dict(zip(run_cols, key))
            ident.pop("key", None)
            ax.set_title(", ".join(t for t in (_cdf_label(k, v, g) for k, v in ident.items()) if t), loc="left")
        _finish(
            fig, {p: handles[p] for p in names if p in handles}, _auto_title("Partition sizes over time", df, title)
        )
        return Plot(_save(fig, out), notes + version_notes(df), len(runs), fig)


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
        fig, axes = _figure(1, 1)
        ax = axes[0][0]
        groups = [("", df)] if series is None else list(df.groupby(series, sort=False))
        handles: dict[str, Any] = {}
        for i, (name, g) in enumerate(groups):
            h = g.groupby("bin")["count"].sum().sort_index()
            (line,) = ax.plot(
                h.index.to_numpy(),
                h.to_numpy(),
                marker=MARKERS[i % len(MARKERS)],
                color=PALETTE[i % len(PALETTE)],
                linestyle=PREFETCH_STYLES[i // len(MARKERS) % 4],
            )
            if series is not None:
                handles.setdefault(_stem(name) if series == "trace" else str(name), line)
        _log2_axis(ax, df["bin"])
        _count_axis(ax)
        ax.set_xlabel("temporal distance (references)")
        ax.set_ylabel("correlated accesses")
        ax.set_ylim(bottom=0)
        what = "Temporal distances"
        if title is None and series == "trace" and len(groups) == 1:
            title = f"{what} — {_stem(groups[0][0])}"
        _finish(fig, handles, _auto_title(what, df.drop(columns=["trace"], errors="ignore"), title))
        return Plot(_save(fig, out), [], 1, fig)


def _pow2_ceil(distance: "pandas.Series") -> "pandas.Series":
    # Exact for integers (no float log): the bit length of d-1 is the exponent of d's bin.
    return distance.astype("int64").map(lambda d: 1 << int(d - 1).bit_length())


def power_of_two_bins(df: "pandas.DataFrame") -> "pandas.Series":
    """MQ §2's grouping: counts by power-of-two bin, a distance counted in the smallest power of
    two at or above it. ``df`` has ``distance`` and ``count``."""
    d = df[df["distance"] > 0]
    return d.groupby(_pow2_ceil(d["distance"]))["count"].sum().sort_index()


def heatmap(df: "pandas.DataFrame", out: str | os.PathLike, *, title: str | None = None) -> Plot:
    """Hit ratio (0 to 1) over time (x: windows of the trace's requests) and cache size (y, log2),
    as PyMimircache drew it; colour from the viridis map, whose grey level rises steadily, so
    the figure reads in grayscale too. Shape: ``window``, ``cache_blocks``, ``hit_ratio`` (a
    fraction), optionally ``first_request``/``last_request`` and ``block_size``: what
    :func:`bufsim.heatmap.hit_ratio_over_time` returns."""
    missing = [c for c in ("window", "cache_blocks", "hit_ratio") if c not in df.columns]
    if missing:
        return Plot(
            None,
            [f"heatmap: missing column(s) {', '.join(missing)}; compute it with bufsim.heatmap.hit_ratio_over_time"],
        )
    if df.empty:
        return Plot(None, ["heatmap: no windows"])
    import numpy as np

    grid = df.pivot_table(index="cache_blocks", columns="window", values="hit_ratio", aggfunc="mean").sort_index()
    if grid.empty:
        # Every window's ratio is NaN: the requests are zero-length (or the trace only drops).
        return Plot(None, ["heatmap: no window holds a block access, so there is no hit ratio to draw"])
    sizes = grid.index.to_numpy(dtype=float)
    ylabel = "cache size (blocks)"
    if "block_size" in df.columns and df["block_size"].nunique() == 1:
        sizes, ylabel = sizes * float(df["block_size"].iloc[0]) / MIB, "cache size (MiB)"
    wins = grid.columns.to_numpy()
    if "last_request" in df.columns:
        ends = df.groupby("window")["last_request"].max().reindex(wins).to_numpy(dtype=float) + 1
        starts = np.concatenate([[0.0], ends[:-1]])
        xedges, xlabel = np.concatenate([starts[:1], ends]), "requests"
    else:
        xedges, xlabel = np.arange(len(wins) + 1, dtype=float), "window"
    # Cell edges halfway between sizes on the log axis.
    logs = np.log2(sizes)
    mids = (logs[1:] + logs[:-1]) / 2 if len(logs) > 1 else np.array([])
    step0 = (logs[1] - logs[0]) / 2 if len(logs) > 1 else 0.5
    stepn = (logs[-1] - logs[-2]) / 2 if len(logs) > 1 else 0.5
    yedges = 2 ** np.concatenate([[logs[0] - step0], mids, [logs[-1] + stepn]])
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig, axes = _figure(1, 1)
        ax = axes[0][0]
        mesh = ax.pcolormesh(
            xedges, yedges, grid.to_numpy(), cmap="viridis", vmin=0, vmax=1, shading="flat", rasterized=False
        )
        ax.set_yscale("log", base=2)
        _log2_axis(ax, sizes, axis="y")
        ax.grid(False)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if xlabel == "requests":
            _count_x(ax)
        cbar = fig.colorbar(mesh, ax=ax)
        cbar.set_label("hit ratio")
        what = "Hit ratio over time"
        policy = df.attrs.get("policy")
        trace = df.attrs.get("trace")
        if title is None:
            title = (
                what + " — " + ", ".join(x for x in (_stem(trace) if trace else "", policy or "") if x)
                if (trace or policy)
                else what
            )
        _finish(fig, {}, title or None)
        return Plot(_save(fig, out), [], 1, fig)


def _count_x(ax) -> None:
    from matplotlib.ticker import EngFormatter

    ax.xaxis.set_major_formatter(EngFormatter(sep=""))


KINDS: dict[str, Callable[..., Plot]] = {
    "hit-ratio": hit_ratio,
    "prefetch": prefetch_panels,
    "mrc": mrc,
    "seq-cdf": sequence_cdf,
    "partitions": partition_timeline,
    "tdist": temporal_distance,
    "heatmap": heatmap,
}
