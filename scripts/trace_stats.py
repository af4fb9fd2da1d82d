#!/usr/bin/env python3
"""Statistics of interchange-CSV traces (plain or .gz), as the prefetching paper's Table 4 gives
them: references in 4 KiB blocks, footprint (distinct file blocks), files, and the fraction of
consecutive references.

    trace_stats.py TRACE...              # a Markdown table on stdout
    trace_stats.py --json TRACE...       # one JSON object per trace

Consecutive references follow the prefetching paper §6.1: "a reference to be consecutive if it is
to a block that is either the same or immediately next (in the same file) to the block that was
accessed in the preceding reference". A request of several blocks makes one reference per block.
The preceding reference is the same process's (pid column), so concurrent programs in a mixed trace
do not break each other's runs; in a one-process trace this is exactly the paper's definition.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import os
import sys
from typing import Iterable, Iterator, TextIO

BLOCK = 4096


def open_text(path: str) -> TextIO:
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def rows(path: str) -> Iterator[dict]:
    with open_text(path) as f:
        yield from csv.DictReader(line for line in f if not line.startswith("#"))


def block_refs(rows: Iterable[dict]) -> Iterator[tuple[str, str, int]]:
    """(pid, file, block) for every 4 KiB block each request touches, in trace order."""
    for r in rows:
        off, size = int(r["offset"]), int(r["size"])
        if size <= 0:
            continue
        for b in range(off // BLOCK, (off + size - 1) // BLOCK + 1):
            yield r.get("pid", ""), r["file"], b


def consecutive_fraction(refs: Iterable[tuple[str, str, int]]) -> float:
    """Prefetching paper §6.1 (see the module docstring)."""
    last: dict[str, tuple[str, int]] = {}
    total = consecutive = 0
    for pid, file, block in refs:
        total += 1
        prev = last.get(pid)
        if prev is not None and prev[0] == file and block - prev[1] in (0, 1):
            consecutive += 1
        last[pid] = (file, block)
    return consecutive / total if total else 0.0


def stats(path: str) -> dict:
    requests = reads = writes = 0
    files: set[str] = set()
    pids: set[str] = set()
    ctxs: set[str] = set()
    last_time = 0

    def counted(it: Iterable[dict]) -> Iterator[dict]:
        nonlocal requests, reads, writes, last_time
        for r in it:
            requests += 1
            if r["op"] in ("R", "read"):
                reads += 1
            else:
                writes += 1
            files.add(r["file"])
            pids.add(r.get("pid", ""))
            ctxs.add(r.get("ctx", "0"))
            last_time = max(last_time, int(float(r.get("time_us") or 0)))
            yield r

    blocks: set[tuple[str, int]] = set()
    refs = 0

    def seen(it):
        nonlocal refs
        for pid, f, b in it:
            refs += 1
            blocks.add((f, b))
            yield pid, f, b

    frac = consecutive_fraction(seen(block_refs(counted(rows(path)))))
    return {
        "trace": os.path.basename(path),
        "requests": requests,
        "reads": reads,
        "writes": writes,
        "block_refs": refs,
        "footprint_blocks": len(blocks),
        "footprint_mib": round(len(blocks) * BLOCK / (1 << 20), 1),
        "files": len(files),
        "processes": len(pids),
        "contexts": len(ctxs - {"0"}),
        "consecutive": round(frac, 3),
        "seconds": round(last_time / 1e6, 1),
        "compressed_kib": round(os.path.getsize(path) / 1024) if path.endswith(".gz") else None,
    }


COLUMNS = [
    ("trace", "trace"),
    ("requests", "requests"),
    ("reads", "reads"),
    ("writes", "writes"),
    ("block_refs", "4 KiB refs"),
    ("footprint_blocks", "footprint (blocks)"),
    ("footprint_mib", "footprint (MiB)"),
    ("files", "files"),
    ("processes", "processes"),
    ("contexts", "contexts"),
    ("consecutive", "consecutive"),
    ("seconds", "traced s"),
    ("compressed_kib", "size (KiB)"),
]


def markdown(all_stats: list[dict]) -> str:
    head = "| " + " | ".join(t for _, t in COLUMNS) + " |"
    sep = "|" + "|".join("---" if k == "trace" else "---:" for k, _ in COLUMNS) + "|"
    lines = [head, sep]
    for s in all_stats:
        cells = []
        for k, _ in COLUMNS:
            v = s[k]
            if k == "consecutive":
                cells.append(f"{100 * v:.1f}%")
            elif k == "trace":
                cells.append(f"`{v}`")
            elif isinstance(v, int):
                cells.append(f"{v:,}")
            else:
                cells.append("" if v is None else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    all_stats = [stats(p) for p in a.traces]
    if a.json:
        for s in all_stats:
            print(json.dumps(s))
    else:
        print(markdown(all_stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
