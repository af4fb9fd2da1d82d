#!/usr/bin/env python3
"""Whole-process speed: bufsim against libCacheSim's Python binding, a minimal array LRU and,
when given one, a native libCacheSim `cachesim` binary.

Three traces, each written once to bench-data/ as an oracleGeneral file (one 4 KiB block per
record) that every simulator reads: Zipf(1.0) with 5M requests over 1M blocks, CloudPhysics
expanded to 4 KiB blocks (as scripts/libcachesim_oracle.py does) and the ARC paper's P3 (each
line's blocks in order). Cache sizes are 1% and 10% of the trace's distinct blocks. Every
command is a fresh process, timed from outside: its CPU time (user + system, the kernel's
accounting of the finished process) and its wall-clock time. The simulators take turns run by
run (interleaved, so a change of machine load hits all of them), and the table shows each one's
minimum over the runs and the ratios of the CPU-time minimums (CPU time is what a shared
machine disturbs least; on an idle one wall and CPU time agree). The load average is printed before and
after: on a busy machine only the ratios mean much.

    python3 benches/compare_speed.py [--trace zipf --trace cloudphysics --trace p3]
        [--share 1 --share 10] [--policy lru ...] [--repeat 5] [--cachesim PATH]

--cachesim names a `cachesim` built from libCacheSim's sources by whoever runs this; this
repository does not build it. It runs as `cachesim TRACE oracleGeneral ALGO BLOCKS
--ignore-obj-size 1`; libCacheSim's binding gets hashpower 20 (about log2 of the distinct blocks
of the largest trace), as its authors advise for a fair comparison.

The array LRU is the `array_lru` example of bufsim-core (built with cargo when missing), the yardstick
for bufsim's fixed cost per request; it runs for `lru` only.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench-data"
SHARED = Path(os.environ.get("BUFSIM_SHARED", ROOT.parent / "shared"))
RECORD = np.dtype([("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("next", "<i8")])


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PAIRS = load("compare_libcachesim", ROOT / "benches" / "compare_libcachesim.py")
ORACLE = load("libcachesim_oracle", ROOT / "scripts" / "libcachesim_oracle.py")

# libCacheSim binding class -> the name its `cachesim` binary knows the same algorithm by, for the
# classes built with default parameters in both (MQ, LRU-K, CLOCK-Pro and Clock2QPlus have no
# such name or need parameters the binary's defaults do not give).
NATIVE = {
    "LRU": "lru",
    "FIFO": "fifo",
    "Clock": "clock",
    "ARC": "arc",
    "LFU": "lfu",
    "TwoQ": "twoq",
    "LIRS": "lirs",
    "Sieve": "sieve",
    "S3FIFO": "s3fifo",
    "SLRU": "slru",
    "LeCaR": "lecar",
    "GDSF": "gdsf",
    "WTinyLFU": "wtinyLFU",
    "Hyperbolic": "hyperbolic",
    "LHD": "lhd",
    "Cacheus": "cacheus",
}


def write_records(ids: np.ndarray, path: Path) -> None:
    rec = np.zeros(len(ids), dtype=RECORD)
    rec["t"] = np.arange(len(ids), dtype=np.uint64) // 1000
    rec["id"] = ids
    rec["sz"] = 1
    rec["next"] = -1
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    rec.tofile(tmp)
    tmp.rename(path)


def p3_blocks(path: Path) -> np.ndarray:
    text = subprocess.run(["zstd", "-dc", str(path)], capture_output=True, check=True).stdout
    fields = np.array(text.split(), dtype=np.uint64).reshape(-1, 4)
    starts, counts = fields[:, 0], fields[:, 1].astype(np.int64)
    offsets = np.arange(counts.sum(), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + offsets.astype(np.uint64)


def trace_file(name: str) -> Path:
    """The oracleGeneral file of a benchmark trace, written on first use."""
    if name == "zipf":
        path = DATA / "zipf-1.0-5000000-1000000.oracleGeneral"
        PAIRS.zipf_trace(path, 5_000_000, 1_000_000, 1.0, seed=1)
        return path
    path = DATA / f"{name}-4k.oracleGeneral"
    if path.exists():
        return path
    if name == "cloudphysics":
        ids = np.array(ORACLE.expand_cloudphysics(SHARED / "traces" / "cloudphysics_vscsi.csv"), dtype=np.uint64)
    elif name == "p3":
        ids = p3_blocks(SHARED / "traces" / "arc" / "P3.lis.zst")
    else:
        raise SystemExit(f"unknown trace {name}: use zipf, cloudphysics or p3")
    write_records(ids, path)
    return path


def distinct(path: Path) -> int:
    return len(np.unique(np.fromfile(path, dtype=RECORD)["id"]))


def commands(trace: Path, policy: str, blocks: int, cachesim: str | None, array_lru: Path) -> dict[str, list[str]]:
    out = {
        "bufsim": PAIRS.bufsim_cmd(trace, policy, blocks),
        "binding": PAIRS.lcs_cmd(trace, policy, blocks),
    }
    cls, kw = PAIRS.PEERS[policy]
    if cachesim and cls in NATIVE and not kw:
        out["native"] = [cachesim, str(trace), "oracleGeneral", NATIVE[cls], str(blocks), "--ignore-obj-size", "1"]
    if policy == "lru":
        out["array-lru"] = [str(array_lru), str(trace), f"{blocks}blocks", "1", "oracle"]
    return out


def timed(cmd: list[str], cwd: str) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, from the kernel's accounting of the finished
    child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {p.stderr.strip()}")
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", action="append", choices=["zipf", "cloudphysics", "p3"])
    ap.add_argument("--share", action="append", type=float, help="cache size, percent of distinct blocks")
    ap.add_argument("--policy", action="append", choices=sorted(PAIRS.PEERS))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cachesim", help="a libCacheSim `cachesim` binary to time as well")
    ap.add_argument(
        "--without", action="append", default=[], choices=["binding", "array-lru"], help="leave a peer out (repeatable)"
    )
    args = ap.parse_args()
    array_lru = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "examples" / "array_lru"
    if not array_lru.exists():
        subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "bufsim-core", "--example", "array_lru"], cwd=ROOT, check=True
        )
    tools = ["bufsim", "binding", "native", "array-lru"]
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(
        f"whole process, min of {args.repeat} interleaved runs, CPU seconds (user + system) then wall seconds; "
        "ratio = other / bufsim"
    )
    head = f"{'trace':13} {'size':>13} {'policy':44}"
    print(
        head
        + "".join(f" {t + ' cpu':>13}" for t in tools)
        + "".join(f" {t + '/b':>11}" for t in tools[1:])
        + "".join(f" {t + ' wall':>14}" for t in tools)
    )
    with tempfile.TemporaryDirectory() as cwd:  # cachesim writes its result files here
        for name in args.trace or ["zipf", "cloudphysics", "p3"]:
            trace = trace_file(name)
            n = distinct(trace)
            for share in args.share or [1.0, 10.0]:
                blocks = max(1, int(n * share / 100))
                for policy in args.policy or list(PAIRS.PEERS):
                    cmds = commands(trace, policy, blocks, args.cachesim, array_lru)
                    for peer in args.without:
                        cmds.pop(peer, None)
                    runs: dict[str, list[tuple[float, float]]] = {t: [] for t in cmds}
                    for _ in range(args.repeat):
                        for t, cmd in cmds.items():
                            runs[t].append(timed(cmd, cwd))
                    cpu = {t: min(c for _, c in v) for t, v in runs.items()}
                    wall = {t: min(w for w, _ in v) for t, v in runs.items()}
                    cells = "".join(f" {cpu[t]:13.3f}" if t in cpu else f" {'-':>13}" for t in tools)
                    ratios = "".join(
                        f" {cpu[t] / cpu['bufsim']:10.2f}x" if t in cpu else f" {'-':>11}" for t in tools[1:]
                    )
                    walls = "".join(f" {wall[t]:14.3f}" if t in wall else f" {'-':>14}" for t in tools)
                    size = f"{share:g}% {blocks}"
                    print(f"{name:13} {size:>13} {policy:44}{cells}{ratios}{walls}", flush=True)
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
