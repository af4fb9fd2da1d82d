"""AMP's simulation study (Zhou, von Behren, Brewer, UCB/CSD-05-1379, §4.2 and §4.3): miss rates
of AMP, ARC, LRU, PCC*, DEAR and OPT against cache size (Figures 6-12) and the partition
timeline of Figure 13, on the workload suite's recordings of the paper's applications."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bufsim.bst import head_bst
from bufsim.errors import writing
from bufsim.findings import Finding

POLICIES = [("AMP", "amp"), ("ARC", "arc"), ("LRU", "lru"), ("PCC*", "pcc"), ("DEAR", "dear"), ("OPT", "opt")]

# Recordings with program contexts (strace call stacks, traces/README.md) standing for the
# paper's traces (Table 2): grep's searches for cscope and glimpse (Figures 6 and 10), a build
# (gcc, Figure 9), TPC-H on SQLite (dbt3, Figure 12), both at once (multi) and the two-loop
# md5sum + grep run.
TRACES = [("grep", "6/10"), ("gcc", "9"), ("tpch", "12"), ("multi", "multi"), ("md5grep", "md5grep")]
# The workload suite's recordings of the paper's applications (traces/kernel), recorded without
# call stacks: every context is 0, so AMP, PCC* and DEAR are their default, ARC, exactly.
SUITE = ["cscope", "glimpse", "gcc", "tpch", "multi1", "randread"]
FRACTIONS = [0.1, 0.25, 0.5, 0.75, 1.0]
QUICK_FRACTIONS = [0.1, 0.5, 1.0]
QUICK_SUITE_REQUESTS = 50_000


def _bundled(name: str, directory: str) -> Path:
    import gzip

    src = Path(__file__).resolve().parents[2] / "traces" / f"{name}.csv.gz"
    if not src.exists():
        raise FileNotFoundError(f"{src}: the bundled trace is missing; traces/README.md says how to record it")
    out = Path(directory) / f"{name}.csv"
    out.write_bytes(gzip.decompress(src.read_bytes()))
    return out


def _footprint(trace: Path) -> int:
    from bufsim.analysis import analyze

    return analyze(trace, working_set=False, contexts=0).footprint["blocks"]


def _curves(trace: Path, name: str, figure: str, fractions: list[float], source: str) -> list[dict]:
    from bufsim.api import run
    from bufsim.options import Options

    footprint = _footprint(trace)
    sizes = [max(8, round(footprint * f)) for f in fractions]
    results = run(trace, [spec for _, spec in POLICIES], sizes, Options())
    by = {(r.policy, r.cache_blocks): r for r in results}
    rows = []
    for f, size in zip(fractions, sizes):
        row: dict = {"figure": figure, "trace": name, "source": source, "fraction": f, "blocks": size}
        for col, spec in POLICIES:
            row[col] = round(100 * by[(spec, size)].miss_ratio, 2)
        rows.append(row)
    return rows


def amp_figures(quick: bool = False) -> list[dict]:
    """AMP (Zhou, von Behren, Brewer, UCB/CSD-05-1379) §4.2, Figures 6-12: miss rates (percent)
    of AMP, ARC, LRU, PCC*, DEAR and OPT at cache sizes from a tenth of each trace's footprint
    to all of it; §4.3, Figure 13: AMP's partition sizes over time (second half of the run) on
    the TPC-H trace at half its footprint.

    Traces with program contexts are the bundled strace recordings (traces/README.md): grep
    (the paper's cscope and glimpse searches), gcc, tpch (SQLite), multi and md5grep. The
    workload suite's cscope, glimpse, gcc, tpch, multi1 and randread (traces/kernel) were
    recorded without call stacks, so every context is 0 and the AMP family equals ARC there
    (--quick: three sizes, the suite's first 50k requests)."""
    from bufsim.amp import partition_timeline

    fractions = QUICK_FRACTIONS if quick else FRACTIONS
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as d:
        for name, figure in TRACES:
            trace = _bundled(name, d)
            rows += _curves(trace, name, figure, fractions, "strace, stacks")
            if name == "tpch":
                cache = max(8, round(_footprint(trace) * 0.5))
                df = partition_timeline(trace, "amp(timeline=500)", f"{cache}blocks")
                late = df[df["time"] > df["time"].max() / 2]
                means = late.groupby("partition")["blocks"].mean()
                mru = sum(v for k, v in means.items() if k.startswith("mru"))
                rows.append(
                    {
                        "figure": "13",
                        "trace": name,
                        "source": "strace, stacks",
                        "fraction": 0.5,
                        "blocks": cache,
                        "mru_share": round(mru / cache, 3),
                        "default_share": round(means.get("default", 0.0) / cache, 3),
                        "mru_partitions": int(sum(1 for k, v in means.items() if k.startswith("mru") and v > 0)),
                    }
                )
        root = Path(__file__).resolve().parents[2] / "traces" / "kernel"
        for name in SUITE:
            src = root / f"{name}.bst.zst"
            if not src.exists():
                raise FileNotFoundError(f"{src}: the workload suite is missing; `bufsim workloads` lists it")
            trace = head_bst(src, Path(d) / f"{name}.bst", QUICK_SUITE_REQUESTS) if quick else src
            rows += _curves(trace, name, "suite", fractions, "kernel, no stacks")
    return rows


def format_amp_figures(rows: list[dict]) -> str:
    from bufsim.tables import format_table

    out = []
    for part in (False, True):
        sub = [r for r in rows if (r["figure"] == "13") == part]
        if not sub:
            continue
        headers = list(sub[0])
        numeric = [any(isinstance(r.get(h), (int, float)) for r in sub) for h in headers]
        out.append("figure 13 (second half of the run, mean shares of the cache):" if part else "miss rate (%):")
        out.append(
            format_table(headers, [["-" if r.get(h) is None else r.get(h) for h in headers] for r in sub], numeric)
        )
        out.append("")
    return "\n".join(out).rstrip()


def amp_figures_findings(rows: list[dict]) -> list[Finding]:
    """What §4.2, §4.3 and §7 state about Figures 6-13, each judged by a stated rule."""
    curves = [r for r in rows if r["figure"] not in ("13",)]
    stacks = [r for r in curves if r["figure"] != "suite"]
    suite = [r for r in curves if r["figure"] == "suite"]

    def of(name: str) -> list[dict]:
        return [r for r in stacks if r["trace"] == name]

    def count(rs: list[dict], test) -> tuple[int, int]:
        return sum(bool(test(r)) for r in rs), len(rs)

    def below(rs: list[dict]) -> list[dict]:
        return [r for r in rs if r["fraction"] < 1.0]

    f: list[Finding] = []
    k, n = count(stacks, lambda r: r["AMP"] <= r["ARC"] * 1.02)
    f.append(
        Finding(
            "§7: AMP minimally matches ARC (misses at most 2% above), every trace with contexts and size",
            "every case",
            f"{k} of {n}",
            k == n,
        )
    )
    k, n = count(suite, lambda r: r["AMP"] == r["ARC"] == r["PCC*"] == r["DEAR"])
    f.append(
        Finding(
            "§3: with no context to optimize AMP performs identically to its default (suite, no stacks)",
            "identical",
            f"{k} of {n}",
            k == n,
        )
    )
    k, n = count(curves, lambda r: r["OPT"] <= min(r[c] for c in ("AMP", "ARC", "LRU", "PCC*", "DEAR")))
    f.append(Finding("OPT has the lowest miss rate everywhere", "every case", f"{k} of {n}", k == n))
    g = below(of("grep"))
    k, n = count(g, lambda r: r["ARC"] >= 0.95 * r["LRU"])
    f.append(
        Finding(
            "Figure 6: ARC and LRU see no improvement until the cache holds the index (grep's searches)",
            "ARC ~ LRU below the footprint",
            f"ARC within 5% of LRU at {k} of {n}",
            k == n,
        )
    )
    k, n = count(g, lambda r: r["AMP"] < r["ARC"])
    f.append(
        Finding(
            "Figure 6: AMP performs very well on the looping searches (grep)",
            "AMP below ARC",
            f"at {k} of {n} sizes",
            k == n,
        )
    )
    k, n = count(g, lambda r: abs(r["AMP"] - r["PCC*"]) <= 0.05 * r["AMP"])
    f.append(
        Finding(
            "Figure 6: AMP and PCC* perform identically (grep; within 5%)", "identical", f"at {k} of {n} sizes", k == n
        )
    )
    gc = of("gcc")
    k, n = count(gc, lambda r: r["AMP"] <= 1.02 * min(r["ARC"], r["LRU"]))
    f.append(
        Finding(
            "Figure 9: on a build AMP at least matches LRU and ARC (2%)",
            "slight improvement",
            f"at {k} of {n} sizes",
            k == n,
        )
    )
    tp = below(of("tpch"))
    k, n = count(tp, lambda r: r["AMP"] < min(r["ARC"], r["LRU"]))
    f.append(
        Finding(
            "Figure 12: AMP significantly outperforms ARC and LRU on TPC-H below the footprint",
            "every size",
            f"{k} of {n}",
            k == n,
        )
    )
    cuts = {}
    for name in dict.fromkeys(r["trace"] for r in stacks):
        cuts[name] = max((1 - r["AMP"] / r["ARC"] for r in below(of(name)) if r["ARC"] > 0), default=0.0)
    big = [n for n, c in cuts.items() if c >= 0.25]
    f.append(
        Finding(
            "§7: AMP regularly beats ARC by 25% (best size per trace)",
            "regularly",
            ", ".join(f"{n} {c:.0%}" for n, c in cuts.items()),
            2 * len(big) >= len(cuts),
        )
    )
    mono = [n for n in cuts if all(a["AMP"] >= b["AMP"] - 0.05 for a, b in zip(of(n), of(n)[1:]))]
    f.append(
        Finding(
            "§7: AMP's miss rate falls steadily with cache size",
            "every trace",
            f"{len(mono)} of {len(cuts)}",
            len(mono) == len(cuts),
        )
    )
    mean = {c: sum(r[c] for r in stacks) / max(len(stacks), 1) for c in ("AMP", "PCC*", "DEAR")}
    f.append(
        Finding(
            "§4.2: AMP incurs fewer misses than the other detection schemes (mean over traces and sizes)",
            "AMP below PCC* and DEAR",
            ", ".join(f"{c} {v:.1f}%" for c, v in mean.items()),
            mean["AMP"] <= min(mean["PCC*"], mean["DEAR"]),
        )
    )
    mg = below(of("md5grep"))
    k, n = count(mg, lambda r: r["AMP"] < r["ARC"])
    f.append(
        Finding(
            "§3.2: partitions reach equal marginal gain with two loops (md5sum + grep): AMP below ARC",
            "AMP below ARC",
            f"at {k} of {n} sizes",
            k == n,
        )
    )
    tl = next((r for r in rows if r["figure"] == "13"), None)
    if tl is not None:
        f.append(
            Finding(
                "Figure 13: most of the cache goes to the MRU partitions (TPC-H, half the footprint)",
                "MRU partitions hold most of the cache",
                f"{tl['mru_share']:.0%} in {tl['mru_partitions']} MRU partitions",
                tl["mru_share"] > 0.5,
            )
        )
    return f


def plot_amp_figures(rows: list[dict], directory: Path) -> list[Path]:
    """One miss-rate curve figure per trace (the paper's Figures 6-12)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    curves = [r for r in rows if r["figure"] != "13"]
    for name, figure in dict.fromkeys((r["trace"], r["figure"]) for r in curves):
        rs = sorted((r for r in curves if r["trace"] == name and r["figure"] == figure), key=lambda r: r["blocks"])
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for col, _ in POLICIES:
            ax.plot([r["blocks"] for r in rs], [r[col] for r in rs], marker="o", label=col)
        ax.set_xlabel("cache size (blocks)")
        ax.set_ylabel("miss rate (%)")
        ax.set_title(f"{name} ({rs[0]['source']}; AMP Figure {rs[0]['figure']})")
        ax.legend(fontsize="small")
        fig.tight_layout()
        path = Path(directory) / f"amp-figure-{name}-{rs[0]['figure'].replace('/', '-')}.png"
        with writing(path):
            fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths
