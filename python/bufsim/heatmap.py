"""Hit ratio over time and cache size, the heatmap PyMimircache drew (its "hit ratio, start time
and cache size" plot with the cache warm from the trace's start), computed by repeated runs.

bufsim's engine reports totals per run, not per interval, so the windows come from runs over
prefixes of the trace: the hits of window i are hits(prefix i) - hits(prefix i-1). For a policy
that decides without looking ahead this is exactly what a per-window counter would report (a
run over a prefix makes the same decisions, random ones included, as the full run up to that
point, since the seed is the same). OPT looks ahead, so its prefix runs are not the full run's
first steps; it is refused. Cost: W windows mean W runs over prefixes, about W/2 times the work
of one full run per cache size (20 windows: about 10 full runs; sizes run in parallel).
"""

from __future__ import annotations

import numbers
import os
import struct
import tempfile
import warnings
from typing import TYPE_CHECKING, Optional, Sequence

from bufsim import _core
from bufsim._core import SpecError
from bufsim.api import run, size_text
from bufsim.options import Options, PathLike, SizeLike

if TYPE_CHECKING:
    import pandas

# docs/trace-formats.md, "bufsim's binary format": the header fields a prefix rewrites.
_HEADER = struct.Struct("<8sHHIBB6xQQI20x")
_MAGIC = b"\x89BST\r\n\x1a\n"


#: The columns of :func:`hit_ratio_over_time`'s frame (also when the trace has no request).
COLUMNS = ["window", "first_request", "last_request", "cache_blocks", "block_size", "accesses", "hits", "hit_ratio"]


def hit_ratio_over_time(
    trace: PathLike,
    *,
    policy: str = "lru",
    caches: Optional[Sequence[SizeLike]] = None,
    windows: int = 20,
    format: Optional[str] = None,
    block_size: Optional[SizeLike] = None,
    reads_only: Optional[bool] = None,
    seed: Optional[int] = None,
    jobs: Optional[int] = None,
    progress: Optional[bool] = None,
) -> "pandas.DataFrame":
    """Hit ratio of ``policy`` in each of ``windows`` equal slices of the trace's requests, at
    each cache size of ``caches`` (default: powers of two from 16 blocks to the trace's distinct
    blocks), the cache warm from the start of the trace. One row per window and size:
    ``window``, ``first_request``, ``last_request`` (0-based, inclusive), ``cache_blocks``,
    ``accesses``, ``hits``, ``hit_ratio`` (a fraction; NaN for a window without accesses).
    ``progress``: see :mod:`bufsim.progress` (a bar with the time left on standard error).
    ``format``, ``block_size``, ``reads_only``, ``seed`` and ``jobs`` are run options (``None``:
    the core's default, as for :func:`bufsim.run`)."""
    import pandas as pd

    from bufsim.formats import convert
    from bufsim.progress import bar

    if isinstance(windows, bool) or not isinstance(windows, numbers.Integral) or windows < 1:
        raise SpecError(f"windows must be a positive number of time slices, not {windows!r}")
    family = str(policy).split("(", 1)[0].strip().lower()
    if any(p["needs_future"] and family in (p["name"], *p["aliases"]) for p in _core.registry("policy")):
        raise SpecError(
            f"policy `{policy}` looks ahead, so runs over prefixes of the trace are not its "
            "windows; choose an online policy (lru, arc, ...) for a heatmap"
        )
    # The core's defaults and checks, as every run's (no default is written here).
    read = Options(format=format, block_size=block_size, reads_only=reads_only).resolved()
    format, bs, reads_only = read["format"], read["block_size"], read["reads_only"]
    if caches is not None:
        sizes = [size_text(c, "cache size") for c in ([caches] if isinstance(caches, (str, int)) else caches)]
        if not sizes:
            raise SpecError("caches: give at least one cache size")
    with tempfile.TemporaryDirectory(prefix="bufsim-heatmap-") as tmp:
        # The trace is read once (standard input cannot be read again): the default sizes are
        # counted on the converted copy.
        whole = os.path.join(tmp, "trace.bst")
        convert(trace, whole, format=format)
        if caches is None:
            from bufsim.analysis import mrc_report

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # an empty trace is said once, below
                distinct = mrc_report(whole, sizes=[1], format="bst", block_size=bs, reads_only=reads_only)["distinct"]
            sizes = [size_text(1 << k, "cache size") for k in range(4, max(5, int(distinct).bit_length()))]
        with open(whole, "rb") as f:
            data = f.read()
        magic, version, hlen, flags, kind, rlen, count, names_at, nnames = _HEADER.unpack_from(data)
        if magic != _MAGIC or version != 1 or hlen != _HEADER.size:
            raise SpecError(f"{os.fspath(trace)}: converted trace has an unknown layout (bst version {version})")
        names = data[names_at:]
        # No more windows than requests: a window holds at least one (and the cuts are counted
        # over the requests, not over a huge `windows`).
        slices = min(windows, count)
        cuts = sorted({round(count * i / slices) for i in range(1, slices + 1)} - {0}) if slices else []
        prefix = os.path.join(tmp, "prefix.bst")
        rows, before = [], {}
        start = requests = 0
        for w, cut in enumerate(bar(cuts, desc="heatmap windows", unit="window", show=progress)):
            with open(prefix, "wb") as f:
                f.write(_HEADER.pack(magic, version, hlen, flags, kind, rlen, cut, hlen + cut * rlen, nnames))
                f.write(memoryview(data)[hlen : hlen + cut * rlen])
                f.write(names)
            options = {"format": "bst", "block_size": bs, "reads_only": reads_only, "seed": seed, "jobs": jobs}
            with warnings.catch_warnings():
                # A prefix without requests is warned about below, by the trace's own name.
                warnings.simplefilter("ignore")
                results = run(prefix, [str(policy)], sizes, {k: v for k, v in options.items() if v is not None})
            for r in results:
                requests = r.requests
                h0, a0 = before.get(r.cache_blocks, (0, 0))
                hits, acc = r.hits - h0, r.accesses - a0
                rows.append(
                    {
                        "window": w,
                        "first_request": start,
                        "last_request": cut - 1,
                        "cache_blocks": r.cache_blocks,
                        "block_size": bs,
                        "accesses": acc,
                        "hits": hits,
                        "hit_ratio": hits / acc if acc else float("nan"),
                    }
                )
                before[r.cache_blocks] = (r.hits, r.accesses)
            start = cut
    if requests == 0:
        warnings.warn(f"{os.fspath(trace)}: the trace holds no requests; every count is 0", stacklevel=2)
    df = pd.DataFrame(rows, columns=COLUMNS)
    df.attrs.update({"trace": os.fspath(trace), "policy": str(policy), "requests": requests})
    return df
