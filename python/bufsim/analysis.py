"""Trace analyses: ``analyze`` (every characterization of a trace) and ``mrc`` (LRU miss ratio
curves, exact and SHARDS). The work is done in Rust (``bufsim-analysis``); this module converts
arguments, shapes the results and renders the text tables the command line prints."""

from __future__ import annotations

import json
import numbers
import os
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from bufsim import _core
from bufsim._core import SpecError
from bufsim.options import FIELDS_BY_NAME, Options, PathLike, SizeLike, block_size_bytes, size_text

# The analyses seed as runs do (the core's default).
RUN_SEED: int = FIELDS_BY_NAME["seed"].default

if TYPE_CHECKING:
    import pandas


@dataclass(frozen=True)
class Analysis:
    """Everything ``bufsim analyze`` reports about a trace; each section is a plain dict (see
    docs/analysis.md for every field and the paper it comes from)."""

    trace: str
    format: str
    block_size: int
    reads_only: bool
    requests: dict[str, Any]
    accesses: dict[str, Any]
    footprint: dict[str, Any]
    consecutive: dict[str, Any]
    temporal_distance: dict[str, Any]
    frequency: dict[str, Any]
    working_set: Optional[dict[str, Any]]
    inter_reference_gaps: dict[str, Any]
    distance_breakdown: Optional[list[dict[str, Any]]]

    @property
    def consecutive_fraction(self) -> float:
        """Fraction of consecutive references (prefetching paper §6.1)."""
        return self.consecutive["fraction"]

    @property
    def working_set_blocks(self) -> Optional[int]:
        """Smallest OPT cache reaching 90 percent of the infinite-cache hit ratio (None if not searched)."""
        return None if self.working_set is None else self.working_set["blocks"]

    @property
    def min_dist(self) -> Optional[int]:
        hill = self.temporal_distance["hill"]
        return None if hill is None else hill["min_dist"]

    @property
    def max_dist(self) -> Optional[int]:
        hill = self.temporal_distance["hill"]
        return None if hill is None else hill["max_dist"]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: The largest whole number the core takes (its counts, seeds and sizes are 64-bit).
U64_MAX = 2**64 - 1


def check_whole(value: Any, what: str, least: int = 0) -> None:
    """Refuses anything but a whole number from `least` to 2^64 - 1, naming the range: the core
    would report one outside it only as a number it cannot convert, without saying which."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not least <= value <= U64_MAX:
        raise SpecError(f"{what} must be a whole number from {least} to 2^64 - 1, not {value!r}")


def check_jobs(jobs: int) -> None:
    """Refuses a thread count that is not 0 (all cores) or more."""
    check_whole(jobs, "jobs (0: all cores)")


def analyze(
    trace: PathLike,
    *,
    format: str = "auto",
    block_size: SizeLike = 4096,
    reads_only: bool = False,
    working_set: bool = True,
    contexts: int = 8,
    hill_fraction: float = 0.1,
    jobs: int = 0,
    breakdown: Optional[SizeLike] = None,
    policies: Optional[Sequence[str]] = None,
    seed: int = RUN_SEED,
    progress: Optional[bool] = None,
) -> Analysis:
    """Characterizes ``trace``: request and block counts, footprint, read/write mix, request sizes,
    fraction of consecutive references and working-set size (prefetching paper §6.1), temporal
    distance histogram with minDist/maxDist and frequency distribution (MQ paper §3), and
    inter-reference gap CDFs of the ``contexts`` busiest program contexts (AMP Figure 2).

    ``working_set=False`` skips the OPT runs of the working-set search (and streams the trace
    instead of loading it). A bin belongs to the temporal-distance hill while it holds at least
    ``hill_fraction`` of the peak bin's count. ``breakdown=SIZE`` adds the MQ paper's Table 3:
    each of ``policies``' hits and misses for re-references closer than SIZE blocks and at or
    beyond it (default policies: those of the paper's Table 3 that bufsim has; see
    :func:`distance_breakdown`). Progress shows on standard error when it is a terminal
    (``progress=True`` or ``False`` decides). Raises ``FileNotFoundError``, ``TraceFormatError`` or
    ``SpecError``.
    """
    check_whole(contexts, "contexts (the number of program contexts shown)")
    check_jobs(jobs)
    check_whole(seed, "seed")
    names = None
    if breakdown is not None:
        names = table3_policies() if policies is None else ([policies] if isinstance(policies, str) else list(policies))
    elif policies is not None:
        raise SpecError("policies are for the breakdown: give its cache size too (breakdown=...)")
    from bufsim.progress import track

    text = track(
        _core.analyze,
        os.fspath(trace),
        show=progress,
        format=format,
        block_size=block_size_bytes(block_size),
        reads_only=reads_only,
        working_set=working_set,
        contexts=contexts,
        hill_fraction=float(hill_fraction),
        jobs=jobs,
        breakdown_policies=names,
        breakdown_cache=None if breakdown is None else size_text(breakdown, "breakdown cache size"),
        seed=seed,
    )
    return Analysis(**json.loads(text))


#: The policies of the MQ paper's Table 3 as bufsim specs (LRU-2 is `lru-k(k=2)`), plus OPT for
#: reference.
TABLE3 = ("mq", "2q", "fbr", "lrfu", "lru-k(k=2)", "lru", "lfu", "mru", "opt")


def table3_policies() -> list[str]:
    """The policies of :data:`TABLE3` whose policy this build of bufsim registers."""
    known = set()
    for p in _core.registry("policy"):
        known.add(p["name"])
        known.update(p["aliases"])
    return [p for p in TABLE3 if p.split("(")[0] in known]


def distance_breakdown(
    trace: PathLike,
    cache: Union[SizeLike, Sequence[SizeLike]],
    policies: Optional[Sequence[str]] = None,
    *,
    first_level: Any = None,
    format: str = "auto",
    block_size: SizeLike = 4096,
    reads_only: bool = False,
    seed: int = RUN_SEED,
) -> "pandas.DataFrame":
    """The MQ paper's Table 3 (§5): for each policy at each cache size C (``cache``: one size or
    several), hits and misses of re-references whose temporal distance is below C
    (``below_hits``, ``below_misses``) and at or above C (``above_hits``, ``above_misses``);
    first references are counted apart (``first``). LRU never misses below C. Default policies:
    those of the paper's Table 3 that bufsim has. With ``first_level`` (a
    :class:`bufsim.FirstLevel`) the trace is first filtered into its second-level stream. One
    row per policy and size."""
    import pandas as pd

    names = table3_policies() if policies is None else ([policies] if isinstance(policies, str) else list(policies))
    sizes = [cache] if isinstance(cache, (str, int)) else list(cache)
    if not names:
        raise SpecError("policies: name at least one, such as 'lru', or leave it out for Table 3's")
    if not sizes:
        raise SpecError("cache: give at least one cache size, such as '64MiB'")
    options = Options(first_level=first_level, format=format, block_size=block_size, reads_only=reads_only, seed=seed)
    rows = _core.breakdown(
        os.fspath(trace), [str(p) for p in names], [size_text(c, "cache size") for c in sizes], options.to_json()
    )
    return pd.DataFrame(
        rows, columns=["policy", "cache_blocks", "below_hits", "below_misses", "above_hits", "above_misses", "first"]
    )


SizesArg = Union[None, str, Sequence[SizeLike]]


def mrc_report(
    trace: PathLike,
    *,
    sizes: SizesArg = None,
    shards: Optional[float] = None,
    shards_size: Optional[int] = None,
    exact: bool = True,
    seed: int = RUN_SEED,
    format: str = "auto",
    block_size: SizeLike = 4096,
    reads_only: bool = False,
    progress: Optional[bool] = None,
) -> dict[str, Any]:
    """The miss ratio curve report as a dict (what ``bufsim mrc --json`` prints). Progress shows
    on standard error when it is a terminal (``progress=True`` or ``False`` decides)."""
    from bufsim.progress import track

    all_sizes = isinstance(sizes, str) and sizes == "all"
    listed: Optional[list[str]] = None
    if sizes is not None and not all_sizes:
        if isinstance(sizes, (str, int)):
            sizes = [sizes]
        listed = [size_text(s, "cache size") for s in sizes]
    if shards is not None and (isinstance(shards, bool) or not isinstance(shards, (int, float))):
        raise SpecError(f"SHARDS rate must be a fraction in (0, 1], not {shards!r}")
    if shards_size is not None:
        check_whole(shards_size, "SHARDS sample size (blocks)", least=1)
    check_whole(seed, "seed")
    text = track(
        _core.mrc,
        os.fspath(trace),
        show=progress,
        sizes=listed,
        all_sizes=all_sizes,
        exact=exact,
        shards_rate=None if shards is None else float(shards),
        shards_size=shards_size,
        seed=seed,
        format=format,
        block_size=block_size_bytes(block_size),
        reads_only=reads_only,
    )
    r = json.loads(text)
    if r["shards"] is not None:
        _check_sampled(r["shards"]["sampled_refs"], r["accesses"], "SHARDS sample", "--shards or --shards-size")
    return r


def _check_sampled(sampled: int, accesses: int, what: str, larger: str) -> None:
    """Refuses an estimate from a sample that holds no access of a trace that has some: its
    curve would read 0 misses whatever the trace."""
    if sampled == 0 and accesses > 0:
        raise SpecError(
            f"the {what} holds none of the trace's {accesses} block accesses, so it estimates "
            f"nothing; give a larger rate ({larger})"
        )


def mrc(
    trace: PathLike,
    *,
    sizes: SizesArg = None,
    shards: Optional[float] = None,
    shards_size: Optional[int] = None,
    exact: bool = True,
    seed: int = RUN_SEED,
    format: str = "auto",
    block_size: SizeLike = 4096,
    reads_only: bool = False,
    progress: Optional[bool] = None,
) -> "pandas.DataFrame":
    """LRU miss ratio curve of ``trace`` in one pass, one row per cache size.

    Columns: ``cache_blocks``, ``cache_bytes``, then with ``exact`` (the default; Mattson's stack
    algorithm, equal to LRU simulation at every size) ``misses`` and ``miss_ratio``, and with
    SHARDS sampling (``shards=RATE`` such as 0.01, or ``shards_size=BLOCKS`` for the fixed-size
    variant; the hash is seeded by ``seed``) ``shards_miss_ratio`` and, beside the exact curve,
    ``abs_error``. ``sizes``: ``None`` for 1 block then four sizes per doubling up to the
    footprint, ``"all"`` for every size, or a list (ints are blocks, strings carry units).
    ``df.attrs`` holds ``accesses``, ``distinct``, ``cold`` and the SHARDS summary, whose
    ``error`` (mean and max absolute difference over every cache size) needs both curves.
    """
    r = mrc_report(
        trace,
        sizes=sizes,
        shards=shards,
        shards_size=shards_size,
        exact=exact,
        seed=seed,
        format=format,
        block_size=block_size,
        reads_only=reads_only,
        progress=progress,
    )
    return mrc_frame(r)


def miniature_mrc(
    trace: PathLike,
    policy: str,
    *,
    sample: float = 1.0,
    sizes: SizesArg = None,
    scale: Optional[str] = None,
    seed: int = RUN_SEED,
    format: str = "auto",
    block_size: SizeLike = 4096,
    reads_only: bool = False,
    jobs: int = 0,
) -> dict[str, Any]:
    """Miss ratio curve of any policy by miniature simulation (what ``bufsim mrc --policy SPEC
    --sample RATE --json`` prints): each cache size S is simulated over the blocks whose spatial
    hash falls in a sample of about ``sample`` of them (Waldspurger et al., ATC 2017), at S x the
    sample's share of the trace's blocks, its misses weighed by the blocks' access counts
    (``scale="share"``, the default; docs/analysis.md) or at S x ``sample`` with the SHARDS-adj
    correction (``scale="rate"``, the paper's rule). ``sample=1`` simulates every size in full.
    ``sizes``: ``None`` for the grid of :func:`mrc`, or a list."""
    if isinstance(sample, bool) or not isinstance(sample, (int, float)) or not 0 < sample <= 1:
        raise SpecError(f"sampling rate must be a fraction in (0, 1], e.g. 0.01, not {sample!r}")
    check_jobs(jobs)
    check_whole(seed, "seed")
    listed: Optional[list[str]] = None
    if sizes is not None:
        if isinstance(sizes, str) and sizes == "all":
            raise SpecError("miniature simulation takes a list of sizes, not `all`; give sizes or none for the grid")
        if isinstance(sizes, (str, int)):
            sizes = [sizes]
        listed = [size_text(s, "cache size") for s in sizes]
    text = _core.mrc_miniature(
        os.fspath(trace),
        policy,
        rate=float(sample),
        sizes=listed,
        scale=scale,
        seed=seed,
        format=format,
        block_size=block_size_bytes(block_size),
        reads_only=reads_only,
        jobs=jobs,
    )
    r = json.loads(text)
    r["block_size"] = block_size_bytes(block_size)
    _check_sampled(r["sampled_accesses"], r["accesses"], f"sample at rate {sample}", "--sample")
    return r


_SCALED_BY = {"share": "the sample's share of the blocks", "rate": "the nominal rate"}


def format_miniature(r: dict[str, Any]) -> str:
    """The text table of ``bufsim mrc --policy SPEC``."""
    rows = [
        [_bytes(b * r["block_size"]), b, m, f"{x:.4f}"]
        for b, m, x in zip(r["sizes"], r["simulated_sizes"], r["miss_ratio"])
    ]
    out = [_table(["cache", "blocks", "simulated", "miss ratio"], rows, indent=""), ""]
    how = (
        "full simulation"
        if r["rate"] >= 1
        else f"miniature simulation at rate {r['rate']} (sizes scaled by {r['scale']:.4f}, {_SCALED_BY[r['scaled_by']]})"
    )
    out.append(f"{r['policy']}: {how}, {r['sampled_accesses']} of {r['accesses']} block accesses simulated per size")
    return "\n".join(out)


def mrc_frame(r: dict[str, Any]) -> "pandas.DataFrame":
    import pandas as pd

    cols: dict[str, Any] = {"cache_blocks": r["sizes"], "cache_bytes": [s * r["block_size"] for s in r["sizes"]]}
    if r["misses"] is not None:
        cols["misses"] = r["misses"]
        cols["miss_ratio"] = r["miss_ratio"]
    s = r["shards"]
    if s is not None:
        cols["shards_miss_ratio"] = s["miss_ratio"]
        if r["miss_ratio"] is not None:
            cols["abs_error"] = [abs(a - b) for a, b in zip(s["miss_ratio"], r["miss_ratio"])]
    df = pd.DataFrame(cols)
    df.attrs.update({k: r[k] for k in ("trace", "block_size", "accesses", "distinct", "cold")})
    if s is not None:
        df.attrs["shards"] = {k: v for k, v in s.items() if k != "miss_ratio"}
    return df


# ---- text rendering (the command line) ----


def _bytes(n: float) -> str:
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            v = n / scale
            return f"{v:.0f}{unit}" if v == int(v) else f"{v:.1f}{unit}"
    return f"{n:.0f}B"


def _share(x: float) -> str:
    """A share as bufsim writes every ratio: a fraction from 0 to 1 (docs/index.md)."""
    return f"{x:.3f}"


def _mix(counts: dict[str, Any]) -> str:
    if counts["total"] == 0:
        return "no reads or writes"
    return f"reads {_share(1 - counts['write_share'])}, writes {_share(counts['write_share'])}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "  ") -> str:
    from bufsim.tables import format_table

    right = [True] * len(headers)
    return "\n".join(indent + line for line in format_table(headers, rows, right).splitlines())


def format_analysis(a: Analysis) -> str:
    """The text report of ``bufsim analyze``."""
    req, acc, size = a.requests, a.accesses, a.requests["size"]
    out = [
        f"trace                 {a.trace}",
        f"format                {a.format}, {_bytes(a.block_size)} blocks, "
        + ("reads only" if a.reads_only else "reads and writes"),
        "",
        f"requests              {req['total']}  ({_mix(req)}; {req['zero_length']} zero-length"
        + (f"; and {req['drops']} drops of truncated or deleted files" if req.get("drops") else "")
        + (f"; and {req['hints']} read-ahead hints" if req.get("hints") else "")
        + ")",
        f"block accesses        {acc['total']}  ({_mix(acc)})",
        f"bytes                 read {_bytes(req['read_bytes'])}, written {_bytes(req['write_bytes'])}",
        f"footprint             {a.footprint['blocks']} blocks ({_bytes(a.footprint['bytes'])})",
        f"files or devices      {req['files']}   processes {req['pids']}   duration {req['duration_s']:.4g} s",
        f"request size          min {_bytes(size['min_bytes'])}, mean {_bytes(size['mean_bytes'])}, max {_bytes(size['max_bytes'])}",
        f"consecutive refs      {a.consecutive['fraction']:.4f}  ({a.consecutive['consecutive']} of "
        f"{a.consecutive['references']}; prefetching paper §6.1)",
    ]
    w = a.working_set
    if w is None:
        out.append("working set           not searched (--no-working-set)")
    else:
        out.append(
            f"working set           {w['blocks']} blocks ({_bytes(w['bytes'])}): OPT hit ratio "
            f"{w['hit_ratio']:.4f}, 0.9 x the infinite cache's {w['max_hit_ratio']:.4f} "
            f"({len(w['probes'])} OPT runs)"
        )
    if size["histogram"]:
        out += [
            "",
            "request sizes (rounded up to powers of two)",
            _table(
                ["size", "requests", "share"],
                [[_bytes(b["bytes"]), b["requests"], _share(b["requests"] / req["total"])] for b in size["histogram"]],
            ),
        ]
    t = a.temporal_distance
    out += [
        "",
        f"temporal distance (MQ paper §3.1; {t['correlated']} correlated accesses, {t['first']} first references)",
    ]
    if t["bins"]:
        out.append(
            _table(
                ["distance <=", "accesses", "share"],
                [[b["distance"], b["count"], _share(b["share"])] for b in t["bins"]],
            )
        )
    hill = t["hill"]
    if hill is not None:
        out.append(
            f"  hill: minDist {hill['min_dist']}, maxDist {hill['max_dist']}, peak {hill['peak_distance']}; "
            f"{_share(hill['share'])} of correlated accesses (bins with at least {_share(t['hill_fraction'])} of the peak)"
        )
    f = a.frequency
    out += [
        "",
        f"frequency (MQ paper Figure 4; mean {f['mean_frequency']:.2f}, max {f['max_frequency']} accesses per block)",
    ]
    if f["points"]:
        out.append(
            _table(
                ["accessed >= f", "blocks", "accesses"],
                [[p["frequency"], _share(p["block_share"]), _share(p["access_share"])] for p in f["points"]],
            )
        )
    g = a.inter_reference_gaps
    out += [
        "",
        f"inter-reference gaps by program context (AMP Figure 2; program contexts: {g['contexts']}, the busiest shown)",
    ]
    rows = []
    for c in [g["all"]] + g["by_context"]:
        qs = [("-" if v is None else v) for _, v in c["quantiles"]]
        rows.append(["all" if c["ctx"] is None else hex(c["ctx"]), c["accesses"], c["gaps"], *qs])
    out.append(_table(["context", "accesses", "gaps", *[name for name, _ in g["all"]["quantiles"]]], rows))
    if a.distance_breakdown:
        c = a.distance_breakdown[0]["cache_blocks"]
        out += [
            "",
            f"hits and misses by temporal distance, cache of {c} blocks (MQ paper Table 3; "
            f"{a.distance_breakdown[0]['first']} first references in neither)",
        ]
        out.append(
            _table(
                ["policy", "< C hits", "< C misses", ">= C hits", ">= C misses"],
                [
                    [r["policy"], r["below_hits"], r["below_misses"], r["above_hits"], r["above_misses"]]
                    for r in a.distance_breakdown
                ],
            )
        )
    return "\n".join(out)


def format_mrc(r: dict[str, Any]) -> str:
    """The text table of ``bufsim mrc``."""
    df = mrc_frame(r)
    headers = ["cache", "blocks"]
    cols = []
    if "misses" in df:
        headers += ["misses", "miss ratio"]
        cols += ["misses", "miss_ratio"]
    if "shards_miss_ratio" in df:
        headers += ["SHARDS"]
        cols += ["shards_miss_ratio"]
    if "abs_error" in df:
        headers += ["|error|"]
        cols += ["abs_error"]
    rows = []
    for rec in df.to_dict("records"):
        row: list[object] = [_bytes(rec["cache_bytes"]), rec["cache_blocks"]]
        for c in cols:
            v = rec[c]
            row.append(v if c == "misses" else f"{v:.4f}")
        rows.append(row)
    out = [_table(headers, rows, indent=""), ""]
    summary = f"{r['accesses']} block accesses, {r['distinct']} distinct blocks"
    if r["cold"] is not None:
        summary += f", {r['cold']} cold misses"
    else:
        summary += " (estimated by SHARDS)"
    out.append(summary)
    s = r["shards"]
    if s is not None:
        how = (
            f"rate {s['rate']}"
            if s["mode"] == "fixed-rate"
            else f"at most {s['blocks']} blocks (final rate {s['final_rate']:.6f})"
        )
        line = f"SHARDS {how}, seed {s['seed']}: {s['sampled_refs']} sampled references to {s['sampled_blocks']} blocks"
        out.append(line)
        e = s["error"]
        if e is not None:
            out.append(
                f"SHARDS error over {e['sizes']} cache sizes: mean {e['mean_abs']:.4f}, "
                f"max {e['max_abs']:.4f} at {e['max_at_blocks']} blocks"
            )
    if r.get("dropped_blocks"):
        out.append(
            f"note: the trace drops data (truncated or deleted files: {r['dropped_blocks']} blocks); dropped blocks "
            "leave the LRU stack, so these curves estimate LRU's (a cache keeps a free frame after a drop, the "
            "stack closes up): bufsim run gives exact counts (docs/analysis.md)"
        )
    return "\n".join(out)
