#!/usr/bin/env python3
"""Every registered policy on the bundled traces at a few cache sizes: the table of
docs/policies/comparison.md.

Cache sizes are fractions of each trace's footprint (distinct 4 KiB blocks), so traces of very
different sizes are compared at the same relative pressure. Policies run with their defaults,
demand paging only (no read-ahead), count mode; presets are left out (they are configurations
of listed policies).

    python3 scripts/compare_policies.py                       # the page, on stdout
    python3 scripts/compare_policies.py --out docs/policies/comparison.md
    python3 scripts/compare_policies.py --trace traces/gcc.csv.gz --fraction 0.05
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import bufsim

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "traces"
TRACES = [
    SHARED / "cloudphysics_vscsi.csv",
    SHARED / "lirs" / "cpp.trace.gz",
    SHARED / "lirs" / "gli.trace.gz",
    SHARED / "lirs" / "multi3.trace.gz",
    SHARED / "lirs" / "sprite.trace.gz",
    SHARED / "arc" / "OLTP.lis.zst",
    ROOT / "traces" / "gcc.csv.gz",
    ROOT / "traces" / "grep.csv.gz",
    ROOT / "traces" / "multi.csv.gz",
    ROOT / "traces" / "tpch.csv.gz",
    # The workload suite recorded with the kernel tracer (bufsim workloads).
    ROOT / "traces" / "kernel" / "cscope.bst.zst",
    ROOT / "traces" / "kernel" / "glimpse.bst.zst",
    ROOT / "traces" / "kernel" / "randread.bst.zst",
]
FRACTIONS = [0.01, 0.1, 0.3]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", action="append", type=Path, help="trace file (default: the bundled ones)")
    ap.add_argument(
        "--fraction",
        action="append",
        type=float,
        help="cache size as a fraction of the footprint (default: 0.01, 0.1, 0.3)",
    )
    ap.add_argument("--policy", action="append", help="policy spec (default: every registered policy)")
    ap.add_argument("--out", type=Path, help="write the Markdown page here instead of stdout")
    args = ap.parse_args(argv)
    traces = [t for t in (args.trace or TRACES)]
    missing = [str(t) for t in traces if not t.exists()]
    if missing:
        print(f"error: trace not found: {', '.join(missing)}", file=sys.stderr)
        return 2
    fractions = args.fraction or FRACTIONS
    if any(not 0 < f <= 1 for f in fractions):
        print("error: --fraction must be in (0, 1]", file=sys.stderr)
        return 2
    policies = args.policy or [p["name"] for p in bufsim.policies() if not p["preset_of"]]
    lines = [
        "# Policies compared",
        "",
        "Miss ratio (a fraction, as everywhere in bufsim) of every registered policy with its defaults on the bundled traces, demand",
        "paging only, 4 KiB blocks, count mode. Cache sizes are fractions of each trace's footprint",
        "(distinct blocks); the best online policy of each column is in bold (OPT is the bound).",
        "Randomized policies use the run seed 42. Written by",
        "`python3 scripts/compare_policies.py --out docs/policies/comparison.md`; rerun it after",
        "adding a policy.",
        "",
    ]
    for trace in traces:
        footprint = bufsim.analyze(str(trace), working_set=False).footprint["blocks"]
        sizes = [max(1, int(footprint * f)) for f in fractions]
        df = bufsim.sweep(str(trace), policies, sizes)
        ratio = {(r.policy, int(r.cache_blocks)): r.misses / r.accesses for r in df.itertuples()}
        accesses = int(df["accesses"].iloc[0])
        # Paths as seen from the repository: `traces/...` inside it, `../shared/...` beside it.
        if trace.resolve().is_relative_to(ROOT):
            name = trace.resolve().relative_to(ROOT)
        elif trace.resolve().is_relative_to(ROOT.parent):
            name = Path("..") / trace.resolve().relative_to(ROOT.parent)
        else:
            name = trace
        lines += [f"## {trace.name}", "", f"`{name}`: {accesses:,} block accesses, footprint {footprint:,} blocks.", ""]
        lines.append(
            "| policy | " + " | ".join(f"{f:g} x footprint ({s:,} blocks)" for f, s in zip(fractions, sizes)) + " |"
        )
        lines.append("|---|" + "---:|" * len(sizes))
        best = {s: min(ratio[(p, s)] for p in policies if p != "opt") for s in sizes}
        for p in policies:
            cells = []
            for s in sizes:
                v = ratio[(p, s)]
                cells.append(f"**{v:.4f}**" if p != "opt" and v == best[s] else f"{v:.4f}")
            lines.append(f"| `{p}` | " + " | ".join(cells) + " |")
        lines.append("")
    text = "\n".join(lines)
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
