#!/usr/bin/env python3
"""The streams of `bufsim reproduce mq-tables`, bufsim beside libCacheSim.

Builds the three second-level streams exactly as the reproduction does (pgbench and tpch: the
benchmark phase, relation files, 8 KiB pages; oltp: ARC's OLTP trace through a 16 MB LRU), writes
each as libCacheSim's oracleGeneral and prints the misses of LRU, 2Q (libCacheSim's TwoQ, Kin 25%,
Kout 50%) and MQ with a fixed lifetime of 10,000 accesses (libCacheSim has no adaptive one) in both
simulators at the first level's size and at 4x it, plus bufsim's MQ with its adaptive lifetime. It
answers whether MQ's results on these streams are bufsim's doing (docs/reproductions.md).

    python3 scripts/mq_tables_libcachesim.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("oracle", HERE / "libcachesim_oracle.py")
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)

PAIRS = [("LRU", "lru", "LRU", {}), ("2Q", "2q", "TwoQ", {})]
PAIRS.append(("MQ, lifetime 10,000", "mq(lifetime=10000)", "MQ", {"lifetime": 10000, "qout_size_ratio": 4.0}))


def main() -> int:
    import bufsim
    from bufsim.reproduce_mq import STREAMS, _oltp_stream, _postgres_stream

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the streams of --quick (first 300k accesses)")
    args = ap.parse_args()
    print("| stream | policy | cache (blocks) | bufsim misses | libCacheSim misses |")
    print("|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as d:
        for stream in STREAMS:
            build = _oltp_stream if stream.name == "oltp" else _postgres_stream
            trace, stats = build(stream, d, args.quick)
            # One record per block, of size 1, so both simulators count cache sizes in blocks.
            csv = Path(d) / f"{stream.name}.lcs.csv"
            bufsim.convert(trace, csv, to="lcs-csv", block_size=stream.block_size)
            blocks = [int(line.split(",")[1]) for line in csv.read_text().splitlines()[1:]]
            path = str(Path(d) / f"{stream.name}.oracleGeneral")
            oracle.write_oracle(blocks, path)
            n = len(blocks)
            sizes = [stream.first_level, 4 * stream.first_level]
            for name, ours, cls, params in PAIRS:
                mine = [int(m) for m in bufsim.sweep(path, [ours], sizes)["misses"]]
                for size, m in zip(sizes, mine):
                    theirs = oracle.lcs_misses(path, n, cls, params, size)
                    print(f"| {stream.name} | {name} | {size} | {m:,} | {theirs:,} |")
            for size, m in zip(sizes, bufsim.sweep(path, ["mq"], sizes)["misses"]):
                print(f"| {stream.name} | MQ, adaptive lifetime | {size} | {int(m):,} | - |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
