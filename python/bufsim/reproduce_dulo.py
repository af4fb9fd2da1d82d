"""DULO's main evaluation on the workload suite: Figures 3 and 4 of Jiang, Ding, Chen, Xiang and
Zhang, "DULO: an effective buffer cache management scheme to exploit both temporal and spatial
locality" (FAST 2005, §4.1.2), and every finding its text states, checked one by one.

CLOCK (the paper's "LRU") against DULO (its §4.1.1 sizes: 8 MB bank and 64 MB evicting section,
or 4 MB and 16 MB under 80 MB of memory, bufsim's defaults scale them down further for smaller
caches), in timed mode on the Cheetah 9LP behind the Deadline scheduler, as the paper's
simulator ran (§4.1.1), with Linux 2.6 read-ahead (windows of at most 32 blocks) and the default
64 KiB clusters. A sequence is what the disk serves without a seek: consecutive device requests,
each starting where the one before it ended (`sequence_sizes`); read-ahead windows served back to
back make one sequence, so sequences grow past the 40 and 120 blocks the paper's CDFs discuss
although no request holds more than 32 blocks.
"""

from __future__ import annotations

import os
from pathlib import Path

from bufsim.findings import Finding

POLICIES = [("CLOCK", "clock"), ("DULO", "dulo")]
READ_AHEAD = "linux-ondemand"
# I/O-bound, in trace order: no think time and one merged stream (the paper's execution times are
# I/O times; our traces' think times hold a modern CPU's compile and query work).
OPTIONS = dict(device="st39102lw", io_scheduler="deadline", think=0, single_stream=True)
# The suite's applications, with the paper's trace each stands for.
APPS = {
    "unxz": "sequential (the paper's viewperf, Fig. 3)",
    "tpch-mysql": "random (tpc-h on MySQL's MyISAM, Fig. 3)",
    "glimpse": "mixed (glimpse, Fig. 4)",
    "multi5": "mixed (multi5 for multi1: cscope + gcc + viewperf, Fig. 4)",
    "multi4": "mixed (multi4 for multi2: glimpse + tpc-h on MySQL's MyISAM, Fig. 4)",
}
KIND = {"unxz": "sequential", "tpch-mysql": "random", "glimpse": "mixed", "multi5": "mixed", "multi4": "mixed"}
# The paper's multi1 is cscope, gcc and viewperf at once: the suite's multi5 (cscope, a kernel
# build and unxz; the suite's multi1 is the prefetching paper's, cscope and gcc alone). Its multi2
# is glimpse beside its random tpc-h (16% sequential references): the suite's multi4, glimpse
# beside tpch-mysql (the suite's multi2 pairs glimpse with TPC-H on PostgreSQL, whose table scans
# make it a sequential mix).
MIX1 = "multi5"
MIX2 = "multi4"
LABEL = {MIX1: f"{MIX1} for multi1", MIX2: f"{MIX2} for multi2"}
FRACTIONS = [0.25, 0.5, 1.0]
# --quick: every application at the smallest and the largest size, so that every finding is
# checked.
QUICK_APPS = list(APPS)
QUICK_FRACTIONS = [0.25, 1.0]

SETTING = (
    "the paper's traces (Linux 2.4/2.6, 2005) are not public: the suite's applications recorded on Linux 6.x; "
    "xz decompressing large archives (unxz) stands for viewperf (sequential, read whole); tpc-h runs on MariaDB's MyISAM tables, which read a record "
    "with a call of its own as the paper's MySQL did (our TPC-H on PostgreSQL scans tables instead); multi1 is multi5 (cscope, a kernel "
    "build and unxz at once), multi2 is multi4 (glimpse and tpch-mysql at once); no think time, one merged stream; memory sizes are "
    "fractions of each working set; bufsim's Cheetah 9LP model and Deadline scheduler, not DiskSim 3.0; "
    "read-ahead is Linux 2.6.23+ on-demand (32-block windows); a sequence is a run of device requests the "
    "disk serves without a seek"
)


def _per_app(app: str, quick: bool) -> list[float]:
    return QUICK_FRACTIONS if quick else FRACTIONS


def dulo_figures(quick: bool = False) -> list[dict]:
    """DULO (Jiang et al., FAST 2005) §4.1.2, Figures 3 and 4: execution time, hit ratio and the
    sequence-size CDF of CLOCK and DULO against memory size, for sequential, random and mixed
    applications of the suite (--quick: at two of the three sizes).

    Each row is one application, memory size and policy; `in_40`/`in_120` are the percentages of
    blocks read or written in disk access sequences (runs of device requests served without a
    seek) longer than 40 and 120 blocks, `mean_sequence` the blocks per sequence, and
    `sequence_sizes` holds the whole distribution (size: blocks). Figures: `--out DIR` draws them."""
    from bufsim.api import run
    from bufsim.options import Options
    from bufsim.reproduce_prefetch import _manifest, _trace

    manifest = _manifest()
    rows: list[dict] = []
    for app in QUICK_APPS if quick else list(APPS):
        entry = manifest[app]
        ws = int(entry.get("working_set_blocks") or entry["footprint_blocks"])
        fractions = _per_app(app, quick)
        sizes = [max(256, int(ws * f)) for f in fractions]
        results = run(
            _trace(entry),
            [spec for _, spec in POLICIES],
            [f"{b}blocks" for b in sizes],
            Options(**OPTIONS),
            prefetches=[READ_AHEAD],
        )
        names = {spec: name for name, spec in POLICIES}
        for r in results:
            hist = {int(k): int(v) for k, v in (r.sequence_sizes or {}).items()}
            blocks = sum(hist.values()) or 1
            rows.append(
                {
                    "app": app,
                    "kind": KIND[app],
                    "fraction": fractions[sizes.index(r.cache_blocks)],
                    "cache_blocks": r.cache_blocks,
                    "policy": names.get(r.policy, r.policy),
                    "exec_time_s": round(r.exec_time_s, 2),
                    "hit_ratio": round(r.hit_ratio, 4),
                    "disk_requests": r.disk_requests,
                    "in_40": round(100.0 * sum(v for k, v in hist.items() if k > 40) / blocks, 1),
                    "in_120": round(100.0 * sum(v for k, v in hist.items() if k > 120) / blocks, 1),
                    "mean_sequence": round(_mean_sequence(hist), 1),
                    "sequence_sizes": hist,
                }
            )
    return rows


def format_dulo_figures(rows: list[dict]) -> str:
    from bufsim.tables import format_table

    headers = [h for h in rows[0] if h != "sequence_sizes"]
    numeric = [isinstance(rows[0][h], (int, float)) for h in headers]
    return format_table(headers, [[r[h] for h in headers] for r in rows], numeric)


# ------------------------------------------------------------------------------------------
# Findings


def _by(rows: list[dict], app: str) -> list[tuple[dict, dict]]:
    """(CLOCK row, DULO row) per memory size of one application, smallest first."""
    clock = {r["cache_blocks"]: r for r in rows if r["app"] == app and r["policy"] == "CLOCK"}
    dulo = {r["cache_blocks"]: r for r in rows if r["app"] == app and r["policy"] == "DULO"}
    return [(clock[b], dulo[b]) for b in sorted(clock) if b in dulo]


def _cut(c: dict, d: dict) -> float:
    """DULO's execution-time reduction over CLOCK, percent."""
    return 100.0 * (c["exec_time_s"] - d["exec_time_s"]) / c["exec_time_s"] if c["exec_time_s"] else 0.0


def dulo_figures_findings(rows: list[dict]) -> list[Finding]:
    apps = list(dict.fromkeys(r["app"] for r in rows))
    out: list[Finding] = []
    cuts = {a: [_cut(c, d) for c, d in _by(rows, a)] for a in apps}
    best = {a: max(v) for a, v in cuts.items() if v}
    if "unxz" in apps:
        pairs = _by(rows, "unxz")
        seq = [c["in_120"] for c, _ in pairs]
        out += [
            Finding(
                "sequential: most requested blocks sit in sequences longer than 120 blocks",
                "over 80% (viewperf)",
                f"{_span(seq)}% with CLOCK",
                min(seq) > 50,
            ),
            Finding(
                "sequential: DULO's influence is limited",
                "4.4% less time on average (at most 8.0%)",
                f"{sum(cuts['unxz']) / len(cuts['unxz']):.1f}% on average (at most {best['unxz']:.1f}%)",
                abs(sum(cuts["unxz"]) / len(cuts["unxz"])) <= 10 and best["unxz"] <= 15,
            ),
        ]
    if "tpch-mysql" in apps:
        pairs = _by(rows, "tpch-mysql")
        dh = [100 * (d["hit_ratio"] - c["hit_ratio"]) for c, d in pairs]
        out += [
            Finding(
                "random (tpch-mysql for tpc-h): DULO equals CLOCK: almost no improvement in execution time",
                "almost no improvement",
                f"{_span(cuts['tpch-mysql'], '{:+.1f}')}% less time",
                all(abs(v) <= 5 for v in cuts["tpch-mysql"]),
            ),
            Finding(
                "random (tpch-mysql for tpc-h): DULO cannot create sequential requests: the sequence sizes stay as CLOCK's",
                "no change",
                "share of blocks in sequences > 40: " + ", ".join(f"{c['in_40']}% / {d['in_40']}%" for c, d in pairs),
                all(abs(d["in_40"] - c["in_40"]) <= 5 for c, d in pairs),
            ),
            Finding(
                "random (tpch-mysql for tpc-h): hit ratios of DULO and CLOCK about equal",
                "about equal",
                f"{_span(dh, '{:+.1f}')} points",
                all(abs(v) <= 3 for v in dh),
            ),
        ]
    mixed = [a for a in ("glimpse", MIX1, MIX2) if a in apps]
    for app in mixed:
        out.append(
            Finding(
                f"mixed ({LABEL.get(app, app)}): DULO reduces execution time",
                "substantial improvements (multi1: 8.5% at 80 MB, 55.3% at 160 MB)",
                f"{_span(cuts[app], '{:+.1f}')}% less time",
                best[app] >= 3 and min(cuts[app]) > -3,
            )
        )
    for app in mixed:
        pairs = _by(rows, app)
        i = max(range(len(pairs)), key=lambda k: cuts[app][k])
        j = min(range(len(pairs)), key=lambda k: cuts[app][k])
        grow = [d["in_40"] - c["in_40"] for c, d in pairs]
        out.append(
            Finding(
                f"mixed ({LABEL.get(app, app)}): the size with the larger time gap also has the larger gain in "
                "sequences > 40 blocks",
                "multi1: +2.4 points at 80 MB (8.5%), +10.9 at 160 MB (55.3%)",
                f"{grow[j]:+.1f} points at {pairs[j][0]['fraction']}x ({cuts[app][j]:.1f}%), "
                f"{grow[i]:+.1f} at {pairs[i][0]['fraction']}x ({cuts[app][i]:.1f}%)",
                i == j or grow[i] >= grow[j],
            )
        )
    if MIX1 in apps:
        pairs = _by(rows, MIX1)
        i = max(range(len(pairs)), key=lambda k: cuts[MIX1][k])
        c, d = pairs[i]
        out.append(
            Finding(
                f"mixed ({LABEL[MIX1]}): where DULO saves most time it also raises the hit ratio",
                "+29.5% hit ratio with 55.3% less time",
                f"{100 * (d['hit_ratio'] - c['hit_ratio']):+.1f} points with {cuts[MIX1][i]:.1f}% less time",
                d["hit_ratio"] > c["hit_ratio"],
            )
        )
    if MIX2 in apps:
        pairs = _by(rows, MIX2)
        dh = [100 * (d["hit_ratio"] - c["hit_ratio"]) for c, d in pairs]
        out.append(
            Finding(
                f"mixed ({LABEL[MIX2]}): DULO hardly changes the hit ratio but still cuts execution time",
                "hit ratio hardly improves; time considerably lower",
                f"hit ratio {_span(dh, '{:+.1f}')} points, time {best[MIX2]:.1f}% lower at best",
                max(abs(v) for v in dh) <= 5 and best[MIX2] > 0,
            )
        )
        for app in ("glimpse", MIX1):
            if app in apps:
                out.append(
                    Finding(
                        f"DULO does better for {LABEL.get(app, app)} (more sequential) than for {MIX2} "
                        "(the paper's multi2, 16% sequential)",
                        "glimpse and multi1 gain more",
                        f"best {best[app]:.1f}% vs {best[MIX2]:.1f}%",
                        best[app] > best[MIX2],
                    )
                )
    if "glimpse" in apps and MIX1 in apps:
        out.append(
            Finding(
                f"{LABEL[MIX1]} gains more from DULO than glimpse (its looping pattern)",
                "multi1 more pronounced",
                f"best {best[MIX1]:.1f}% vs {best['glimpse']:.1f}%",
                best[MIX1] > best["glimpse"],
            )
        )
    # "The sequence size increases are directly correlated to the execution time ... improvements
    # ... DULO makes its contributions through increasing the sequence size": said of the mixed
    # workloads (shown on multi1), so judged on each.
    for app in mixed:
        pairs = _by(rows, app)
        i = max(range(len(pairs)), key=lambda k: cuts[app][k])
        c, d = pairs[i]
        out.append(
            Finding(
                f"mixed ({LABEL.get(app, app)}): DULO saves time through longer sequences where it gains most",
                "sequence size is the critical factor",
                f"{c['mean_sequence']:.1f} blocks per sequence with CLOCK, {d['mean_sequence']:.1f} with DULO "
                f"({cuts[app][i]:.1f}% less time)",
                d["mean_sequence"] > c["mean_sequence"],
            )
        )
    worse = [
        f"{a}@{c['fraction']}" for a in apps for c, d in _by(rows, a) if d["exec_time_s"] > 1.05 * c["exec_time_s"]
    ]
    out.append(
        Finding(
            "DULO is never much slower than CLOCK",
            "never slower (Figures 3 and 4)",
            "slower by over 5%: " + (", ".join(worse) if worse else "none"),
            not worse,
        )
    )
    return out


def _mean_sequence(hist: dict[int, int]) -> float:
    """Blocks per sequence, from blocks by sequence size (the last size, 1024 and longer, counts
    as 1024 blocks each: a bound from below)."""
    n = sum(v / k for k, v in hist.items())
    return sum(hist.values()) / n if n else 0.0


def _span(values: list[float], fmt: str = "{:.0f}") -> str:
    return (fmt + " to " + fmt).format(min(values), max(values)) if values else "-"


# ------------------------------------------------------------------------------------------
# Figures


def draw_dulo_figures(rows: list[dict], out_dir: str | os.PathLike) -> list[Path]:
    """Per application: execution time and hit ratio against memory size (CLOCK and DULO), and
    the sequence-size CDFs at each size (the paper's Figures 3 and 4)."""
    import pandas as pd

    from bufsim.plots import EXEC_TIME, HIT_RATIO, metric_grid, sequence_cdf

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    df = pd.DataFrame(rows)
    for app, g in df.groupby("app", sort=False):
        g = g.assign(policy=g["policy"].str.lower(), prefetch=READ_AHEAD, block_size=4096)
        p = metric_grid(g, out / f"dulo-{app}.png", [EXEC_TIME, HIT_RATIO], title=f"{APPS[app]}: CLOCK and DULO")
        if p.out:
            paths.append(p.out)
        # The CDF weighs each size by its blocks: sequences of a size = its blocks / the size.
        long = [
            {"policy": r["policy"], "cache_blocks": r["cache_blocks"], "size_blocks": k, "requests": v / k}
            for r in g.to_dict("records")
            for k, v in r["sequence_sizes"].items()
        ]
        p = sequence_cdf(pd.DataFrame(long), out / f"dulo-{app}-cdf.png", title=f"{APPS[app]}: sequence sizes")
        if p.out:
            paths.append(p.out)
    return paths
