"""Results as HTML tables in Jupyter: one run (``Result``) as a two-column table grouped by what
the numbers are, and a sweep's DataFrame as a compact table with cache sizes in units and
ratios as fractions (0 to 1), the lowest miss ratio at each cache size in bold.

``bufsim.Result`` renders itself with :func:`result_html`; :func:`table` wraps a sweep's
DataFrame (or a list of results) in an object Jupyter renders the same way.
"""

from __future__ import annotations

import dataclasses
import html
import math
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    import pandas

# Sections of a run's table: (heading, fields). Fields that are absent or None are skipped, so
# count-mode runs show no timing section.
SECTIONS = [
    ("run", ["policy", "prefetch", "cache_blocks", "block_size"]),
    (
        "cache",
        [
            "requests",
            "accesses",
            "hits",
            "misses",
            "hit_ratio",
            "miss_ratio",
            "evictions",
            "write_accesses",
            "write_misses",
        ],
    ),
    (
        "disk",
        [
            "disk_requests",
            "sync_requests",
            "async_requests",
            "blocks_read",
            "prefetched",
            "prefetch_hits",
            "prefetched_unused",
        ],
    ),
    ("timing", ["device", "scheduler", "think", "single_stream", "exec_time_s", "io_time_s", "stall_time_s"]),
]
# A sweep's table: these columns first when present, then the other scalar ones.
SWEEP_FIRST = [
    "trace",
    "policy",
    "prefetch",
    "cache",
    "accesses",
    "hits",
    "misses",
    "hit_ratio",
    "miss_ratio",
    "disk_requests",
    "exec_time_s",
]
# Columns no table shows: identities and whole distributions (the plots draw those).
NOT_TABULAR = frozenset(
    {"key", "config", "trace_hash", "bufsim_version", "request_sizes", "sequence_sizes", "partition_timeline"}
)
SWEEP_HIDDEN = NOT_TABULAR | {
    "policy_metrics",
    "cache_blocks",
    "block_size",
    "finished_at",
}
NUM = ' class="num"'
STYLE = (
    "<style>.bufsim-table td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".bufsim-table th.section{text-align:left;background:#f4f4f4}</style>"
)


def _fields(obj: Any) -> dict[str, Any]:
    if isinstance(obj, Mapping):
        return dict(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"cannot show {type(obj).__name__} as a table: give a Result, a dict or a DataFrame")


def size_text(n_bytes: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:g} {unit}"
    return f"{n_bytes:g} B"


def _cell(name: str, v: Any) -> tuple[str, bool]:
    """The text of one value and whether it is a number (right-aligned)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "", False
    if name.endswith("_ratio") and isinstance(v, (int, float)):
        return f"{v:.4f}", True  # one convention everywhere: ratios are fractions (docs/index.md)
    if isinstance(v, bool):
        return str(v).lower(), False
    if isinstance(v, int):
        return f"{v:,}", True
    if isinstance(v, float):
        return (f"{v:.4g}" if abs(v) < 1000 else f"{v:,.1f}"), True
    return str(v), False


def result_html(result: Any) -> str:
    """One run as an HTML table (the ``_repr_html_`` of ``bufsim.Result``)."""
    d = _fields(result)
    if "miss_ratio" not in d and isinstance(d.get("hit_ratio"), (int, float)):
        d["miss_ratio"] = 1.0 - d["hit_ratio"]
    rows = []
    for heading, names in SECTIONS:
        cells = []
        for name in names:
            if name not in d or d[name] is None:
                continue
            if name == "cache_blocks" and d.get("block_size"):
                text = f"{d[name]:,} blocks ({size_text(d[name] * d['block_size'])})"
                num = True
            else:
                text, num = _cell(name, d[name])
            cells.append(f"<tr><th>{html.escape(name)}</th><td{NUM if num else ''}>{html.escape(text)}</td></tr>")
        if cells:
            rows.append(f'<tr><th class="section" colspan="2">{heading}</th></tr>' + "".join(cells))
    metrics = d.get("policy_metrics") or {}
    if metrics:
        rows.append(
            '<tr><th class="section" colspan="2">policy</th></tr>'
            + "".join(
                f"<tr><th>{html.escape(str(k))}</th><td{NUM}>{html.escape(_cell(str(k), v)[0])}</td></tr>"
                for k, v in metrics.items()
            )
        )
    title = html.escape(f"{d.get('policy', 'run')}, {d.get('cache_blocks', '?')} blocks")
    return f'{STYLE}<table class="bufsim-table"><caption>{title}</caption>{"".join(rows)}</table>'


def sweep_html(df: "pandas.DataFrame", max_rows: int = 100) -> str:
    """A sweep's runs (the DataFrame of ``bufsim.sweep``, the ``runs`` table of a results
    database) as a compact HTML table: cache size in units, ratios as fractions, the lowest miss
    ratio at each cache size (and trace) in bold; at most ``max_rows`` rows, then a count."""
    df = df.copy()
    if "miss_ratio" not in df.columns and "hit_ratio" in df.columns:
        df["miss_ratio"] = 1.0 - df["hit_ratio"]
    if "cache_blocks" in df.columns:
        bs = df["block_size"] if "block_size" in df.columns else None
        df["cache"] = [
            size_text(c * b) if bs is not None and b == b else f"{c} blocks"
            for c, b in zip(df["cache_blocks"], bs if bs is not None else [float("nan")] * len(df))
        ]
    best: set[int] = set()
    if "miss_ratio" in df.columns and "cache_blocks" in df.columns:
        keys = [c for c in ("trace", "cache_blocks") if c in df.columns]
        best = set(df.index[df["miss_ratio"] == df.groupby(keys)["miss_ratio"].transform("min")])
    cols = [c for c in SWEEP_FIRST if c in df.columns and df[c].notna().any()]
    # Columns another mode fills (timing in count mode) are left out when empty in every run.
    cols += [
        c
        for c in df.columns
        if c not in cols
        and c not in SWEEP_HIDDEN
        and df[c].notna().any()
        and not isinstance(df[c].iloc[0] if len(df) else None, (dict, list))
    ]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = []
    for i, row in df.head(max_rows).iterrows():
        cells = []
        for c in cols:
            v = row[c]
            if c == "trace":
                v = str(v).rsplit("/", 1)[-1]
            text, num = _cell(c, v)
            text = html.escape(text)
            if c == "miss_ratio" and i in best:
                text = f"<b>{text}</b>"
            cells.append(f"<td{NUM if num else ''}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f"<p>{len(df) - max_rows} more runs not shown</p>" if len(df) > max_rows else ""
    return (
        f'{STYLE}<table class="bufsim-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{more}'
    )


class Table:
    """A sweep's runs or a list of results that Jupyter shows as :func:`sweep_html` renders it."""

    def __init__(self, data: Any, max_rows: int = 100):
        self.data = data
        self.max_rows = max_rows

    def _frame(self) -> "pandas.DataFrame":
        import pandas as pd

        if isinstance(self.data, pd.DataFrame):
            return self.data
        return pd.DataFrame([_fields(r) for r in self.data])

    def _repr_html_(self) -> str:
        return sweep_html(self._frame(), self.max_rows)

    def __repr__(self) -> str:
        return repr(self._frame())


def table(data: "pandas.DataFrame | Sequence[Any] | Iterable[Any]", max_rows: int = 100) -> Table:
    """Wraps a sweep's DataFrame, or results, for display in Jupyter."""
    return Table(data if hasattr(data, "columns") else list(data), max_rows)
