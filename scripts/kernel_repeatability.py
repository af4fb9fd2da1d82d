#!/usr/bin/env python3
"""How closely the kernel agrees with itself: recordings of the same workload at the same memory
(kept by `scripts/validate_suite.py --out-dir DIR`, run two or more times) set side by side with
the measures `bufsim validate` sets the model beside the kernel with: pages read, the share of
the first run's read-ahead decisions (start, size, async size) the other run made too, and the
overlap of the evicted pages. It is the ceiling of the model's agreement where the kernel does
not repeat itself (docs/validation.md).

    .venv/bin/python scripts/kernel_repeatability.py /tmp/rr1 /tmp/rr2 [/tmp/rr3 ...]

Files are matched across runs by path, since a workload rebuilt for each run (randread's
database) gets a new inode. Prints a Markdown table, one row per pair of runs of a workload and
memory size.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from bufsim import validate as V  # noqa: E402
from bufsim.ktrace import pagecache_path  # noqa: E402


class KernelRun:
    """One recording's kernel side: pages inserted, read-ahead decisions and evicted pages of the
    traced files, each keyed by the file's path."""

    def __init__(self, trace: str):
        names = V._trace_file_names(trace)
        traced: dict[tuple[int, int], int] = {}
        self.paths: list[str] = []
        for name in names:
            dev, ino, path = V._split_name(name)
            if dev is not None:
                traced[(dev, ino)] = len(self.paths)
                self.paths.append(path)
        rows = V._PageCacheRows(pagecache_path(trace))
        self.pages_read = 0
        self.evicted: Counter = Counter()
        for e in rows:
            f = traced.get((e.dev, e.ino))
            if f is None:
                continue
            if e.event == "insert":
                self.pages_read += e.count
            elif e.event == "evict":
                path = self.paths[f]
                for i in range(e.index, e.index + e.count):
                    self.evicted[(path, i)] += 1
        self.decisions = Counter((self.paths[f], s, n, a) for f, s, n, a in V._kernel_decisions(rows, traced))


def compare(a: KernelRun, b: KernelRun) -> dict:
    both = sum((a.evicted & b.evicted).values())
    return {
        "pages_read": (a.pages_read, b.pages_read),
        "pages_read_diff": (b.pages_read - a.pages_read) / a.pages_read if a.pages_read else 0.0,
        "decisions": (sum(a.decisions.values()), sum(b.decisions.values())),
        "readahead_match": V.readahead_match(a.decisions, b.decisions),
        "evicted_overlap": V.evicted_overlap(both, sum(a.evicted.values()), sum(b.evicted.values())),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="validate_suite.py --out-dir directories, one per repetition")
    args = ap.parse_args()
    if len(args.dirs) < 2:
        ap.error("give at least two directories of recordings of the same workloads")
    runs: dict[tuple[str, int], list[str]] = {}
    for d in args.dirs:
        index = Path(d) / "runs.jsonl"
        if not index.is_file():
            ap.error(f"{index}: no such file; give directories written by validate_suite.py --out-dir")
        for line in index.read_text().splitlines():
            r = json.loads(line)
            runs.setdefault((r["workload"], r["memory_bytes"]), []).append(r["trace"])
    print("| workload | memory | runs | pages read | diff | read-ahead same | evictions overlap |")
    print("|---|---|---|---|---|---|---|")
    for (workload, memory), traces in sorted(runs.items()):
        loaded = [KernelRun(t) for t in traces]
        for (i, a), (j, b) in itertools.combinations(enumerate(loaded, 1), 2):
            c = compare(a, b)
            print(
                f"| {workload} | {memory / (1 << 20):.0f} MiB | {i} / {j} | "
                f"{c['pages_read'][0]} / {c['pages_read'][1]} | {c['pages_read_diff']:+.3f} | "
                f"{c['readahead_match']:.3f} ({c['decisions'][0]} / {c['decisions'][1]}) | {c['evicted_overlap']:.3f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
