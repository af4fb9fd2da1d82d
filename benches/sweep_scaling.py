"""Sweep throughput on 1 and on 2 cores (the goal: a sweep on 2 cores at least 1.7x faster).

    .venv/bin/python benches/sweep_scaling.py [--trace PATH] [--repeat 3] [--force]

Runs the same sweep (4 policies x 8 cache sizes x 2 read-ahead settings, 64 runs, the grid of
the kill-and-resume test) into a fresh DuckDB file with ``jobs=1`` and with ``jobs=2``, best of
``--repeat`` each, interleaved so that a change in machine load hits both alike. The time is
the whole ``run_sweep`` call: hashing and decoding the trace, spec checks, simulation, and one
committed row per run. It checks that both give identical rows, and prints a Markdown table for
docs/performance.md. The machine must be idle: it refuses to start when the 1-minute load
average is 0.5 or more, unless ``--force``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TRACE = ROOT.parent / "shared" / "traces" / "cloudphysics_vscsi.csv"
POLICIES = ["lru", "fifo", "clock", "lfu"]
CACHES = ["1024blocks:131072blocks:x2"]
PREFETCHES = ["none", "linux"]
STATS = ["key", "hits", "misses", "disk_requests", "blocks_read", "prefetched", "prefetched_unused"]


def one(spec, jobs: int, directory: str, n: int):
    from bufsim.sweeps import run_sweep

    db = os.path.join(directory, f"j{jobs}-{n}.duckdb")
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    df = run_sweep(spec, db, jobs=jobs, progress=False)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, df


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=str(DEFAULT_TRACE))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--force", action="store_true", help="run even on a busy machine")
    args = ap.parse_args()

    from bufsim.sweeps import SweepSpec

    load = os.getloadavg()[0]
    if load >= 0.5 and not args.force:
        print(
            f"load average {load:.2f} >= 0.5: the machine is busy; rerun when it is idle (or --force)", file=sys.stderr
        )
        return 1
    cores = os.cpu_count()
    spec = SweepSpec([args.trace], POLICIES, CACHES, PREFETCHES)
    times: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    frames = {}
    with tempfile.TemporaryDirectory() as d:
        for n in range(args.repeat):
            for jobs in (1, 2):
                wall, cpu, df = one(spec, jobs, d, n)
                times[jobs].append((wall, cpu))
                frames[jobs] = df
                print(f"run {n + 1}/{args.repeat}, jobs={jobs}: {wall:.2f} s wall, {cpu:.2f} s CPU", file=sys.stderr)
    a = frames[1][STATS].sort_values("key").reset_index(drop=True)
    b = frames[2][STATS].sort_values("key").reset_index(drop=True)
    if not a.equals(b):
        print("jobs=1 and jobs=2 gave different rows", file=sys.stderr)
        return 1
    (best1, cpu1), (best2, cpu2) = min(times[1]), min(times[2])
    sim = frames[1]["seconds"].sum()
    end_load = os.getloadavg()[0]
    runs = len(frames[1])
    print(
        f"trace: {os.path.basename(args.trace)}; {runs} runs; {cores} cores; load average "
        f"{load:.2f} at start, {end_load:.2f} at end; best of {args.repeat}"
    )
    print()
    print("| jobs | wall (s) | CPU (s) | cores busy | runs/s | speedup |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| 1 | {best1:.2f} | {cpu1:.2f} | {cpu1 / best1:.2f} | {runs / best1:.1f} | 1.00x |")
    print(f"| 2 | {best2:.2f} | {cpu2:.2f} | {cpu2 / best2:.2f} | {runs / best2:.1f} | {best1 / best2:.2f}x |")
    print()
    print(
        f"Sum of the runs' own simulation times at jobs=1: {sim:.2f} s "
        f"(the rest of the wall time is hashing, decoding, checks and writes: {best1 - sim:.2f} s)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
