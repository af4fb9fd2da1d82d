"""Storage-aware caching (Forney, Arpaci-Dusseau, Arpaci-Dusseau, FAST '02) from Python: the
partition sizes and per-device wait times of a run over time (the paper's Figure 8, left),
and the paper's storage system as keyword arguments. See docs/storage-aware.md."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional

from bufsim import _core
from bufsim.errors import writing
from bufsim.options import Options, PathLike, SizeLike, size_text

if TYPE_CHECKING:
    import pandas

PAPER_STORAGE: dict[str, Any] = {
    "array": "raid0(devices=16,unit=8KiB)",
    "device": "ibm-9lzx",
    "network": "loggp",
    "closed": 64,
}
"""The storage system of the paper's experiments as bufsim runs them (§4.1, §4.4): sixteen
IBM 9LZX disks behind RAID-0, the LogGP network of a 10 Gb/s link and a closed workload. The
stripe unit and the number of outstanding requests are our choices (docs/storage-aware.md)."""


def partition_timeline(
    trace: PathLike, policy: str, cache: SizeLike, *, prefetch: str = "none", **options: Any
) -> "pandas.DataFrame":
    """Runs one partitioned policy with any run options (as :func:`bufsim.simulate`: timing,
    storage and the others) and returns its partitions over time, one row per partition per
    sample: ``time_s`` (simulated seconds; ``time`` in demand accesses for count-mode runs),
    ``partition`` (``dev0``, ``dev1``... for storage-aware policies), ``target`` (target
    blocks), ``blocks`` (blocks held) and ``wait_ms`` (the time the cache waited for the
    device over the epoch that ended at the sample). Storage-aware policies sample at the end
    of every repartitioning epoch (W device requests)."""
    import pandas as pd

    opts = Options(options)
    clock, rows = _core.run_timeline(
        os.fspath(trace), str(policy), size_text(cache, "cache size"), str(prefetch), opts.to_json()
    )
    df = pd.DataFrame(rows, columns=["time", "partition", "target", "blocks", "wait_ms"])
    if clock == "ns":
        df.insert(0, "time_s", df.pop("time") / 1e9)
    return df


def plot_partition_timeline(
    df: "pandas.DataFrame", path: Optional[PathLike] = None, *, title: str = "", highlight: Optional[list[str]] = None
) -> Any:
    """Two panels over time, as the paper's Figure 8 (left): blocks held by every partition,
    and each device's wait time per epoch. ``highlight`` names partitions drawn thick (the
    faulty disk). Saves to ``path`` if given; returns the figure."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = "time_s" if "time_s" in df.columns else "time"
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for name, part in df.groupby("partition", sort=False):
        wide = 2.5 if highlight and name in highlight else 0.8
        top.plot(part[x], part["blocks"], linewidth=wide, label=name if highlight and name in highlight else None)
        bottom.plot(part[x], part["wait_ms"], linewidth=wide)
    top.set_ylabel("blocks in the partition")
    bottom.set_ylabel("wait per epoch (ms)")
    bottom.set_xlabel("simulated time (s)" if x == "time_s" else "demand accesses")
    top.set_title(title or "partition sizes and device wait times")
    if highlight:
        top.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    if path is not None:
        with writing(path):
            fig.savefig(os.fspath(path))
    return fig
