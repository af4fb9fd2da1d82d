#!/usr/bin/env python3
"""MQ on a second-level stream (the MQ paper's setting), bufsim beside libCacheSim.

The CloudPhysics trace, expanded to 4 KiB blocks, goes through a 4096-block LRU cache; its
misses in order are the stream a second-level cache sees. The script prints, for caches of
16384 and 65536 blocks, the misses of LRU and 2Q (libCacheSim's TwoQ) and of MQ over a grid of
lifetimes and history sizes, in bufsim and in libCacheSim (which has a fixed lifetime only),
plus bufsim's adaptive lifetime. The table in docs/policies/mq.md comes from here.

    python3 scripts/mq_second_level.py [--cache 16384 --cache 65536]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("oracle", HERE / "libcachesim_oracle.py")
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)

LIFETIMES = [1000, 10000, 100000, 1000000]
HISTORIES = [1, 4]


def main() -> int:
    import bufsim

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", type=Path, default=oracle.DEFAULT_TRACE)
    ap.add_argument("--first-level", type=int, default=4096, help="blocks of the first-level LRU")
    ap.add_argument("--cache", action="append", type=int, help="second-level sizes (16384, 65536)")
    args = ap.parse_args()
    sizes = args.cache or [16384, 65536]
    blocks = oracle.lru_filter(oracle.expand_cloudphysics(args.trace), args.first_level)
    print(f"stream: {len(blocks):,} misses of a {args.first_level}-block LRU, {len(set(blocks)):,} distinct blocks\n")
    rows: list[tuple[str, list[str]]] = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "stream.oracleGeneral")
        oracle.write_oracle(blocks, path)
        n = len(blocks)

        def lcs(cls: str, **params) -> list[int]:
            return [oracle.lcs_misses(path, n, cls, params, c) for c in sizes]

        def ours(spec: str) -> list[int]:
            return [int(m) for m in bufsim.sweep(path, [spec], sizes)["misses"]]

        rows.append(("LRU", [f"{a:,} / {b:,}" for a, b in zip(ours("lru"), lcs("LRU"))]))
        rows.append(("2Q (libCacheSim TwoQ, Kin 25%, Kout 50%)", [f"- / {b:,}" for b in lcs("TwoQ")]))
        for h in HISTORIES:
            for life in LIFETIMES:
                spec_ = f"mq(lifetime={life},history={h}x)"
                a, b = ours(spec_), lcs("MQ", lifetime=life, qout_size_ratio=float(h))
                rows.append((f"MQ lifetime {life:,}, history {h}x", [f"{x:,} / {y:,}" for x, y in zip(a, b)]))
            rows.append((f"MQ adaptive lifetime, history {h}x", [f"{x:,} / -" for x in ours(f"mq(history={h}x)")]))
        accusim_settings = "mq(queues=4,history=1x,lifetime=1x)"
        rows.append(
            (
                f"{accusim_settings}: AccuSim's settings, counting demand accesses",
                [f"{x:,} / -" for x in ours(accusim_settings)],
            )
        )
    print(
        "| configuration (8 queues unless said) | "
        + " | ".join(f"{c} blocks: bufsim / libCacheSim" for c in sizes)
        + " |"
    )
    print("|---|" + "---|" * len(sizes))
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
