#!/usr/bin/env python3
"""Side-by-side benchmark: bufsim vs libCacheSim's Python binding, whole process.

The workload: a 5-million-request oracleGeneral file, Zipf(alpha) over 1M distinct
blocks, cache of 100k blocks. Each simulator runs as a fresh process that starts, reads the file
and simulates; we time the whole process (wall clock, best of N) and read its peak RSS with
wait4. Memory per cached block = (peak RSS at 100k blocks - peak RSS at 1 block) / 100k.

libCacheSim gets hashpower 20 (~log2 of 1M distinct blocks), as its authors advise for a fair
comparison (its default of 24 allocates 16M buckets per table).

    python3 benches/compare_libcachesim.py [--requests 5000000] [--policy lru ...] [--repeat 3]

With --sim-only, the simulation alone on the CloudPhysics trace expanded to 4 KiB blocks (as
scripts/libcachesim_oracle.py does): bufsim's `policy_replay` example times its replay of the
decoded block list; libCacheSim's `process_trace` is timed inside its process (it reads the
oracleGeneral records as it goes, in C). Best of N, interleaved.

    python3 benches/compare_libcachesim.py --sim-only --cache 65536 --policy sieve ...
"""

from __future__ import annotations

import argparse
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
    # FIFO family and LFU: the same rules as the libCacheSim class (exact goldens on CloudPhysics
    # in tests/golden/libcachesim_cloudphysics_fifo_family.csv). libCacheSim's LFU breaks ties
    # between equal counts its own way, so its miss counts may differ slightly from `lfu`'s.
    "sieve": ("Sieve", {}),
    "s3-fifo(variant=libcachesim)": ("S3FIFO", {}),
    "slru(variant=libcachesim)": ("SLRU", {}),
    "clock2q+": ("Clock2QPlus", {}),
    "lfu": ("LFU", {}),
    # Learned family: LeCaR with libCacheSim's rules and random stream (equal miss counts: each
    # simulator here is a fresh process, so both streams start from the same state).
    "lecar(variant=libcachesim)": ("LeCaR", {}),
    # Cacheus: bufsim follows the paper, libCacheSim's SR-LRU also evicts on its own, so the
    # two do comparable, not equal, work (docs/policies/cacheus.md).
    "cacheus": ("Cacheus", {}),
    # Frequency family: GDSF with libCacheSim's entry rule (equal misses); W-TinyLFU with its
    # rules (equal misses); Hyperbolic and LHD (within 1%: random samples).
    "gdsf(variant=libcachesim)": ("GDSF", {}),
    "w-tinylfu(variant=libcachesim)": ("WTinyLFU", {}),
    "w-tinylfu": ("WTinyLFU", {}),
    "hyperbolic": ("Hyperbolic", {}),
    "lhd": ("LHD", {}),
}


# The memory baseline is the peak RSS at one cached block, except where libCacheSim refuses so
# small a cache (S3FIFO and Clock2QPlus need a small FIFO of at least one block: 10 blocks).
# libCacheSim refuses 1-block caches for these (S3FIFO, Clock2QPlus: queues of 0 blocks; WTinyLFU:
# an SLRU segment of 0), so their memory baseline is a small cache instead.
BASE_CACHE = {
    "s3-fifo(variant=libcachesim)": 100,
    "clock2q+": 100,
    "w-tinylfu(variant=libcachesim)": 1000,
    "w-tinylfu": 1000,
}


def zipf_trace(path: Path, requests: int, distinct: int, alpha: float, seed: int) -> None:
    if path.exists():
        return
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, distinct + 1, dtype=np.float64)
    cdf = np.cumsum(ranks**-alpha)
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
    return [
        str(exe),
        "run",
        str(trace),
        "--format",
        "oracle",
        "--policy",
        policy,
        "--cache",
        f"{cache}blocks",
        "--json",
    ]


def lcs_cmd(trace: Path, policy: str, cache: int) -> list[str]:
    cls, kw = PEERS[policy]
    code = (
        "import libcachesim as l;"
        f"r=l.TraceReader({str(trace)!r}, l.TraceType.ORACLE_GENERAL_TRACE);"
        f"c=l.{cls}(cache_size={cache}, hashpower=20, **{kw!r});"
        "print(c.process_trace(r))"
    )
    return [sys.executable, "-c", code]


def sim_only(policies: list[str], cache: int, repeat: int) -> int:
    """Simulation time alone, interleaving the two simulators run by run."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("oracle", ROOT / "scripts" / "libcachesim_oracle.py")
    oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle)
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "bufsim-core", "--example", "policy_replay"], cwd=ROOT, check=True
    )
    exe = ROOT / "target" / "release" / "examples" / "policy_replay"
    blocks = oracle.expand_cloudphysics(oracle.DEFAULT_TRACE)
    DATA.mkdir(exist_ok=True)
    lcs_trace = DATA / "cloudphysics-4k.oracleGeneral"
    if not lcs_trace.exists():
        oracle.write_oracle(blocks, str(lcs_trace))
    print(
        f"CloudPhysics expanded to {len(blocks):,} block accesses; cache {cache:,} blocks; "
        f"simulation only, best of {repeat}, interleaved"
    )
    w = max(8, *(len(p) for p in policies))
    print(f"{'policy':{w}} {'bufsim s':>9} {'lcs s':>8} {'speedup':>8}")
    for policy in policies:
        cls, kw = PEERS[policy]
        code = (
            "import time, libcachesim as l;"
            f"r=l.TraceReader({str(lcs_trace)!r}, l.TraceType.ORACLE_GENERAL_TRACE);"
            f"c=l.{cls}(cache_size={cache}, hashpower=20, **{kw!r});"
            "t=time.perf_counter(); c.process_trace(r); print(time.perf_counter()-t)"
        )
        ours, theirs = [], []
        for _ in range(repeat):
            out = subprocess.run(
                [str(exe), str(oracle.DEFAULT_TRACE), policy, str(cache)], capture_output=True, text=True, check=True
            ).stdout
            ours.append(float(out.split("sim_seconds=")[1]))
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            theirs.append(float(out.split()[-1]))
        bt, lt = min(ours), min(theirs)
        print(f"{policy:{w}} {bt:9.3f} {lt:8.3f} {lt / bt:7.2f}x")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=5_000_000)
    ap.add_argument("--distinct", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--cache", type=int, default=100_000)
    ap.add_argument("--policy", action="append")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--sim-only", action="store_true", help="time the simulation alone on CloudPhysics (see the module docstring)"
    )
    args = ap.parse_args()
    if args.sim_only:
        return sim_only(args.policy or list(PEERS), args.cache, args.repeat)
    if not shutil.which(TIME):
        raise SystemExit("GNU time is needed for peak memory: apt-get install time")
    trace = DATA / f"zipf-{args.alpha}-{args.requests}-{args.distinct}.oracleGeneral"
    zipf_trace(trace, args.requests, args.distinct, args.alpha, seed=1)
    print(
        f"trace: {trace.name}  ({args.requests:,} requests, {args.distinct:,} distinct, "
        f"alpha {args.alpha}); cache {args.cache:,} blocks; best of {args.repeat}"
    )
    policies = args.policy or list(PEERS)
    w = max(8, *(len(p) for p in policies))
    print(f"{'policy':{w}} {'bufsim s':>9} {'lcs s':>8} {'speedup':>8} {'bufsim B/blk':>13} {'lcs B/blk':>10}")
    for policy in policies:
        row = []
        for make in (bufsim_cmd, lcs_cmd):
            best = min(measure(make(trace, policy, args.cache)) for _ in range(args.repeat))
            base = BASE_CACHE.get(policy, 1)
            _, small = measure(make(trace, policy, base))
            _, big = measure(make(trace, policy, args.cache))
            row.append((best[0], (big - small) * 1024 / (args.cache - base)))
        (bt, bm), (lt, lm) = row
        print(f"{policy:{w}} {bt:9.3f} {lt:8.3f} {lt / bt:7.2f}x {bm:13.1f} {lm:10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
