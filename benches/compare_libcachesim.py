#!/usr/bin/env python3
"""Side-by-side benchmark: bufsim vs libCacheSim's Python binding, whole process.

The workload: a 5-million-request oracleGeneral file, Zipf(alpha) over 1M distinct
blocks, cache of 100k blocks. Each simulator runs as a fresh process that starts, reads the file
and simulates; we time the whole process (wall clock, best of N) and read its peak RSS with
wait4. Memory per cached block = (peak RSS at 100k blocks - peak RSS at 1 block) / 100k.

libCacheSim gets hashpower 20 (~log2 of 1M distinct blocks), as its authors advise for a fair
comparison (its default of 24 allocates 16M buckets per table).

    python3 benches/compare_libcachesim.py [--requests 5000000] [--policy lru ...] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench-data"

# bufsim spec -> libCacheSim class and kwargs
PEERS = {
    "lru": ("LRU", {}),
    "fifo": ("FIFO", {}),
    "clock": ("Clock", {}),
    "arc": ("ARC", {}),
    # libCacheSim's ClockPro stops admitting blocks once its cold share is full
    # (docs/policies/clock-pro.md), so it does less work than a real CLOCK-Pro.
    "clock-pro": ("ClockPro", {}),
    # libCacheSim's MQ: 8 queues, Qout 4x, lifetime 10,000 requests; the same as bufsim's spec.
    "mq(lifetime=10000)": ("MQ", {"n_queue": 8, "lifetime": 10000, "qout_size_ratio": 4.0}),
    # LRU-K, 2Q, LIRS, LRFU: each configured as the libCacheSim class it is compared with, so both
    # simulators do the same work and give the same miss counts (tests/golden/libcachesim_cloudphysics_lruk_2q_lirs_lrfu.csv).
    "lru-k(crp=0,history=0)": ("LRUK", {}),
    "2q": ("TwoQ", {}),
    "lirs(hir-min=1,stack=2x,variant=libcachesim)": ("LIRS", {}),
}


def zipf_trace(path: Path, requests: int, distinct: int, alpha: float, seed: int) -> None:
    if path.exists():
        return
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, distinct + 1, dtype=np.float64)
    cdf = np.cumsum(ranks ** -alpha)
    cdf /= cdf[-1]
    draws = np.searchsorted(cdf, rng.random(requests), side="right")
    ids = rng.permutation(distinct).astype(np.uint64)[draws] + 1
    rec = np.zeros(requests, dtype=[("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("next", "<i8")])
    rec["t"] = np.arange(requests, dtype=np.uint32) // 1000
    rec["id"] = ids
    rec["sz"] = 1
    rec["next"] = -1
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    rec.tofile(tmp)
    tmp.rename(path)


TIME = "/usr/bin/time"


def measure(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one process.

    The peak comes from GNU time, which forks the command from its own small process: a child
    forked from this Python process (numpy loaded) would report this process's pages as its
    high-water mark."""
    with tempfile.NamedTemporaryFile("r") as rss:
        t0 = time.perf_counter()
        p = subprocess.run([TIME, "-f", "%M", "-o", rss.name, *cmd], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise SystemExit(f"{cmd[0]} failed: {p.stderr}")
        return wall, int(rss.read().split()[-1])


def bufsim_cmd(trace: Path, policy: str, cache: int) -> list[str]:
    exe = Path(sys.executable).with_name("bufsim")
    return [str(exe), "run", str(trace), "--format", "oracle", "--policy", policy,
            "--cache", f"{cache}blocks", "--json"]


def lcs_cmd(trace: Path, policy: str, cache: int) -> list[str]:
    cls, kw = PEERS[policy]
    code = (
        "import libcachesim as l;"
        f"r=l.TraceReader({str(trace)!r}, l.TraceType.ORACLE_GENERAL_TRACE);"
        f"c=l.{cls}(cache_size={cache}, hashpower=20, **{kw!r});"
        "print(c.process_trace(r))"
    )
    return [sys.executable, "-c", code]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=5_000_000)
    ap.add_argument("--distinct", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--cache", type=int, default=100_000)
    ap.add_argument("--policy", action="append")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not shutil.which(TIME):
        raise SystemExit("GNU time is needed for peak memory: apt-get install time")
    trace = DATA / f"zipf-{args.alpha}-{args.requests}-{args.distinct}.oracleGeneral"
    zipf_trace(trace, args.requests, args.distinct, args.alpha, seed=1)
    print(f"trace: {trace.name}  ({args.requests:,} requests, {args.distinct:,} distinct, "
          f"alpha {args.alpha}); cache {args.cache:,} blocks; best of {args.repeat}")
    policies = args.policy or list(PEERS)
    w = max(8, *(len(p) for p in policies))
    print(f"{'policy':{w}} {'bufsim s':>9} {'lcs s':>8} {'speedup':>8} {'bufsim B/blk':>13} {'lcs B/blk':>10}")
    for policy in policies:
        row = []
        for make in (bufsim_cmd, lcs_cmd):
            best = min(measure(make(trace, policy, args.cache)) for _ in range(args.repeat))
            _, small = measure(make(trace, policy, 1))
            _, big = measure(make(trace, policy, args.cache))
            row.append((best[0], (big - small) * 1024 / args.cache))
        (bt, bm), (lt, lm) = row
        print(f"{policy:{w}} {bt:9.3f} {lt:8.3f} {lt / bt:7.2f}x {bm:13.1f} {lm:10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
