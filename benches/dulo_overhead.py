#!/usr/bin/env python3
"""DULO's cost against its base, CLOCK, in count mode (the goal: overhead stays proportional
to misses).

DULO only does extra work on misses (§3.4: a hit marks a block young; sequencing and merging
happen when blocks enter the bank), so its time over CLOCK's should grow with the misses, not the
accesses. For each cache size the script times both policies on the same trace (best of N, the
simulation only: the trace is decoded once into memory beforehand) and prints the extra time per
miss.

    python3 benches/dulo_overhead.py [TRACE] [--prefetch linux] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bufsim import _core

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TRACE = ROOT.parent / "shared" / "traces" / "cloudphysics_vscsi.csv"
SIZES = ["4MiB", "16MiB", "64MiB", "256MiB", "1GiB"]


def best(trace: "_core.Trace", policy: str, cache: str, prefetch: str, repeat: int) -> tuple[float, dict]:
    times, row = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        [row] = trace.run([policy], [cache], prefetches=[prefetch], jobs=1)
        times.append(time.perf_counter() - t0)
    return min(times), row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?", default=str(DEFAULT_TRACE))
    ap.add_argument("--prefetch", default="linux")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    trace = _core.Trace(args.trace)
    print(f"trace {Path(args.trace).name}, read-ahead {args.prefetch}, best of {args.repeat}")
    print(
        f"{'cache':>7} {'accesses':>9} {'clock ms':>9} {'dulo ms':>8} {'ratio':>6} "
        f"{'clock miss':>10} {'dulo miss':>9} {'extra ns/miss':>13}"
    )
    for size in SIZES:
        (tc, rc), (td, rd) = (best(trace, p, size, args.prefetch, args.repeat) for p in ("clock", "dulo"))
        extra = (td - tc) / max(rd["misses"], 1) * 1e9
        print(
            f"{size:>7} {rc['accesses']:>9} {tc * 1e3:9.1f} {td * 1e3:8.1f} {td / tc:6.2f} "
            f"{rc['misses']:>10} {rd['misses']:>9} {extra:13.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
