"""AMP (program-context adaptive multi-policy caching) from Python: partition timelines
(Figure 13), per-context access-pattern detection, and the synthetic streams of Table 1."""

from __future__ import annotations

import numbers
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from bufsim import _core
from bufsim._core import SpecError
from bufsim.errors import writing

if TYPE_CHECKING:
    import pandas

from bufsim.options import Options, PathLike, SizeLike, size_text


def partition_timeline(
    trace: PathLike, policy: str = "amp", cache: SizeLike = "64MiB", **options: Any
) -> "pandas.DataFrame":
    """Runs a partitioned policy (``amp``, ``pcc``, ``dear``, with any parameters) over
    ``trace`` and returns its partition sizes over virtual time, one row per partition per
    sample: ``time`` (demand block accesses so far), ``partition`` (``default``, ``one-shot``,
    ``mru1``...), ``ctx`` (program context an MRU partition serves, 0 otherwise) and ``blocks``.
    The policy's ``timeline=N`` parameter sets the sampling interval (default every 1000
    accesses; past 2048 samples every other one is dropped and the interval doubles). Other
    keywords are run options (``block_size``, ``seed``...)."""
    import pandas as pd

    # The one timeline binding (bufsim.storage uses it too); for AMP's partitions the tag is
    # the program context and there is no per-sample value.
    _, rows = _core.run_timeline(
        os.fspath(trace), str(policy), size_text(cache, "cache size"), "none", Options(options).to_json()
    )
    return pd.DataFrame([r[:4] for r in rows], columns=["time", "partition", "ctx", "blocks"])


def plot_partition_timeline(df: "pandas.DataFrame", path: Optional[PathLike] = None, *, title: str = "") -> Any:
    """Stacked areas of partition sizes over time, as AMP's Figure 13 (MRU partitions on top,
    the default partition at the bottom). Saves to ``path`` if given; returns the figure."""
    import matplotlib

    if path is not None:
        from bufsim.plots import check_figure_path

        check_figure_path(path, "path")
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    missing = [c for c in ("time", "partition", "ctx", "blocks") if c not in getattr(df, "columns", ())]
    if missing:
        raise SpecError(f"the timeline lacks column(s) {', '.join(missing)}; give what partition_timeline() returned")
    wide = df.pivot_table(index="time", columns="partition", values="blocks", aggfunc="sum").fillna(0)
    order = [c for c in ["default", "one-shot"] if c in wide.columns]
    mru = sorted((c for c in wide.columns if c.startswith("mru")), key=lambda c: int(c[3:]))
    used = [c for c in order + mru if wide[c].any()]
    # Label MRU partitions with the program context they served last.
    last = df[df["time"] == df["time"].max()].set_index("partition")["ctx"]
    labels = [f"{c} (ctx {last[c]})" if c.startswith("mru") and last.get(c, 0) else c for c in used]
    fig, ax = plt.subplots(figsize=(8, 4))
    if used:
        # A trace without block accesses has no sample (or only empty partitions): empty axes.
        ax.stackplot(wide.index, [wide[c] for c in used], labels=labels)
        ax.legend(loc="upper left", fontsize="small")
    ax.set_xlabel("virtual time (block accesses)")
    ax.set_ylabel("blocks")
    ax.set_title(title or "partition sizes")
    fig.tight_layout()
    if path is not None:
        with writing(path):
            fig.savefig(os.fspath(path))
    return fig


def detect(
    trace: PathLike,
    detector: str = "amp",
    *,
    format: str = "auto",
    block_size: SizeLike = 4096,
    reads_only: bool = False,
) -> "pandas.DataFrame":
    """Classifies every program context of ``trace`` (its ``ctx`` column; 0 means unknown and
    is left out) with the detector of ``detector`` (``amp``, ``pcc`` or ``dear``, with their
    parameters, e.g. ``"amp(threshold=0.3,sampling=1/4)"``), in one detection over the whole
    trace. One row per context: ``ctx``, ``pattern`` (loop, one-shot, other, undetected),
    ``r_bar`` (AMP's average reference recency), ``accesses``, ``unique_blocks``, ``loop_size``,
    ``loop_time`` and ``loop_time_dev`` (virtual time per loop)."""
    import pandas as pd

    # Checked as every run's options are (a wrong type is a SpecError, not the binding's TypeError).
    read = Options(format=format, block_size=block_size, reads_only=reads_only).resolved()
    rows = _core.detect(
        os.fspath(trace),
        str(detector),
        format=read["format"],
        block_size=read["block_size"],
        reads_only=read["reads_only"],
    )
    cols = ["ctx", "pattern", "r_bar", "accesses", "unique_blocks", "loop_size", "loop_time", "loop_time_dev"]
    return pd.DataFrame(rows, columns=cols)


def generate(spec: str, seed: int = 1, out: Optional[PathLike] = None) -> Path:
    """Writes the synthetic trace ``spec`` (``"amp-a"`` to ``"amp-g"``: AMP's Table 1 streams;
    ``"amp-mix(loop1=1500,loop1-share=0.5)"``: looping and clustered contexts; see
    :func:`generators`) generated from ``seed`` to ``out`` (default ``<name>-<seed>.csv``) as
    interchange CSV with a ``ctx`` column, and returns the path."""
    from bufsim.errors import check_output

    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 1 << 64:
        raise SpecError(f"seed must be a whole number from 0 to 2^64-1, not {seed!r}")
    # The generator's name as the core reads it (trimmed, lower case): ` AMP-C` writes amp-c-1.csv.
    name = str(spec).split("(")[0].strip().lower()
    if out is not None and not str(out).strip():
        raise SpecError("--out: an empty path; give the output file's name, such as amp-a.csv")
    path = Path(out) if out is not None else Path(f"{name}-{seed}.csv")
    # Another format's name would hold plain CSV under it, unremarked.
    if path.name.lower().endswith((".bst", ".gz", ".zst", ".zstd", ".oraclegeneral", ".parquet")):
        raise SpecError(
            f"{path}: generate writes interchange CSV; name the output .csv, then convert it "
            f"(`bufsim convert {path.stem}.csv -o {path.stem}.bst`)"
        )
    check_output(path, "--out")
    _core.generate(str(spec), os.fspath(path), seed=seed)
    return path


def generators() -> list[dict[str, Any]]:
    """The synthetic trace generators: see :func:`bufsim.api.registry`."""
    return _core.registry("generator")
