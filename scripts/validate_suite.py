#!/usr/bin/env python3
"""Runs `bufsim validate` on workloads of the suite at a quarter, half and the whole of each one's
footprint (traces/kernel/workloads.json) and prints the table of docs/validation.md.

    .venv/bin/python scripts/validate_suite.py --only randread          # as root
    .venv/bin/python scripts/validate_suite.py --small                  # the small cases of the tests

Workload inputs are prepared as scripts/record_workloads.py prepares them (same scripts, same seeds).
`--small` runs the small cases that tests/test_validate.py checks (a looping scan, small files,
random reads, random reads each hinted first with fadvise(WILLNEED), a mixed workload, rewritten
and deleted files, a written file read again). The mixes
(multi1-5) run as the recorder builds them, multi3 stopped after the recorder's 240 s.
Results also go to --json FILE (one object per run) so the table can be re-printed with --table FILE.
`--out-dir DIR` keeps each run's trace, page-cache and memory files (and the sizes its files had
right after the run, TRACE.sizes.json: the next preparation rebuilds them); `--recompare DIR`
compares the kept runs again with the current model, with the cache following the cgroup's other
charges over time (the default) and with the earlier constant cache (`cache="peak"`), side by side.

`--add-anon SIZE` adds SIZE to every suite size: fraction x footprint + SIZE. The footprint counts
page-cache blocks only, so a program whose own memory is large next to it (a compiler: at a quarter
of gcc's footprint the compilers' anonymous memory took the whole limit) gets no page cache at the
footprint's sizes. Give its measured peak anonymous memory, as a size (`600MiB`) or as the memory
file of a kept run with room to spare (DIR/NAME-MEM/validate-MEM.csv.memory.csv): the peak of its
anon_bytes column is added.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "scripts"))

from bufsim import validate as V  # noqa: E402
from bufsim.validate import validate  # noqa: E402
from bufsim.workloads import load_manifest  # noqa: E402

SMALL_DIR = Path(os.environ.get("BUFSIM_VALIDATE_TMP", "/tmp/bufsim-validate-small"))
RAND = """import os, random, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
pages = os.fstat(fd).st_size // 4096
rng = random.Random(int(sys.argv[3]))
for _ in range(int(sys.argv[2])):
    os.pread(fd, 4096, rng.randrange(pages) * 4096)
"""

#: PostgreSQL's bitmap heap scan pattern: 8 KiB pages, each asked for with fadvise(WILLNEED)
#: before it is read (8 pages ahead in order, then just before it at random).
HINT = """import os, random, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
pages = os.fstat(fd).st_size // 4096
rng = random.Random(int(sys.argv[3]))
for p in range(0, pages // 2, 2):
    os.posix_fadvise(fd, (p + 8) * 4096, 8192, os.POSIX_FADV_WILLNEED)
    os.pread(fd, 8192, p * 4096)
for _ in range(int(sys.argv[2])):
    p = rng.randrange(pages // 2) * 2
    os.posix_fadvise(fd, p * 4096, 8192, os.POSIX_FADV_WILLNEED)
    os.pread(fd, 8192, p * 4096)
"""


def small_cases(work: Path = SMALL_DIR) -> list[tuple[str, list[str], list[int]]]:
    """The small cases: (name, command, memory sizes in bytes), their inputs made in `work` (kept
    there between runs of this script; the tests pass a directory of their own)."""
    work.mkdir(parents=True, exist_ok=True)
    big, other, rand = work / "scan.dat", work / "other.dat", work / "rand.py"
    for path, mib in ((big, 32), (other, 16)):
        if not path.exists() or path.stat().st_size != mib << 20:
            path.write_bytes(os.urandom(mib << 20))
    rand.write_text(RAND)
    hint = work / "hint.py"
    hint.write_text(HINT)
    small = work / "files"
    if not small.is_dir() or len(list(small.iterdir())) != 200:
        # Files of one page to 300 KB, as a source tree has: `cat` asks each for 128 KiB.
        small.mkdir(exist_ok=True)
        sizes = [1000, 3000, 5000, 9000, 20000, 40000, 70000, 150000, 300000]
        for i in range(200):
            (small / f"f{i:03d}").write_bytes(os.urandom(sizes[(i * 7) % len(sizes)]))
    py = sys.executable
    rewrite, tmp = work / "rewrite.dat", work / "tmp.dat"
    written = work / "written.dat"
    write = f"dd if=/dev/zero of={written} bs=1M count=16 conv=notrunc status=none"

    def read(path: Path) -> str:
        # dd, not cat: without fadvise(SEQUENTIAL) the windows stay at 8 MiB, well inside 40 MiB.
        return f"dd if={path} of=/dev/null bs=128k status=none"

    return [
        ("loop-scan", ["sh", "-c", f"for i in 1 2 3; do cat {big} > /dev/null; done"], [48 << 20]),
        ("small-files", ["sh", "-c", f"cat {small}/* > /dev/null"], [64 << 20]),
        ("random", [py, str(rand), str(big), "4000", "1"], [24 << 20]),
        # Hints: half the file read in order and 3000 random pages, each hinted first.
        ("hinted", [py, str(hint), str(big), "3000", "1"], [24 << 20]),
        (
            "mixed",
            ["sh", "-c", f"cat {other} > /dev/null; {py} {rand} {big} 3000 2; cat {other} > /dev/null"],
            [48 << 20],
        ),
        # Truncation and deletion: a file rewritten through O_TRUNC, another written, read and
        # removed, three times (ext4 may give the new file the removed one's inode).
        (
            "rewrite",
            [
                "sh",
                "-c",
                f"for i in 1 2 3; do cat {other} > {rewrite}; cat {rewrite} > /dev/null; "
                f"cat {other} > {tmp}; cat {tmp} > /dev/null; rm {tmp}; done",
            ],
            [64 << 20],
        ),
        # Writes: a 16 MiB file written twice in place (no truncation), read once, pushed out
        # by the 32 MiB scan, read again. Written pages stay unmarked, so the one read leaves
        # them inactive and the scan reclaims them (with writes marking pages, the second write
        # activates them and the last read finds them all).
        (
            "written",
            ["sh", "-c", f"rm -f {written}; {write}; {write}; sync; {read(written)}; {read(big)}; {read(written)}"],
            [40 << 20],
        ),
    ]


def anon_allowance(text: str) -> int:
    """The bytes `--add-anon` adds to each size: a size, or the peak of the anon_bytes column of a
    kept run's memory file; rounded up to whole pages."""
    if os.path.isfile(text):
        peak = max((v for _, v in V.read_memory(text, "anon_bytes")), default=0)
    else:
        from bufsim import _core

        peak = _core.size_to_blocks(text, 4096) * 4096
    return -(-peak // 4096) * 4096


def suite_cases(only: list[str], add: int = 0) -> list[tuple[str, Callable[[], list[str]], list[int]]]:
    """Suite workloads: (name, a function preparing a fresh run and giving its command, memory
    sizes: a quarter, half and the whole footprint, each plus ``add`` bytes). Each size gets its
    own preparation: a second cscope or glimpse run would find its index already built, and a
    second kernel build its objects already compiled."""
    import record_workloads as rw

    makers = {
        "cscope": rw.cscope_script,
        "glimpse": rw.glimpse_script,
        "gcc": lambda tag: rw.gcc_script("solo"),  # the suite's build (its own tree, objects removed)
        "randread": rw.randread_script,
        "tpch": rw.tpch_script,
        "tpch-mysql": rw.tpch_mysql_script,
        "pgbench": rw.pgbench_script,
        "unxz": rw.unxz_script,
        # The mixes as the recorder builds them (each part with its own inputs, made afresh).
        **{m: (lambda tag, m=m: rw.BUILDERS[m]()) for m in ("multi1", "multi2", "multi3", "multi4", "multi5")},
    }
    out = []
    for e in load_manifest():
        if e["name"] not in only or not e.get("footprint_blocks"):
            continue
        if e["name"] not in makers:
            print(f"{e['name']}: no preparation here; left out", file=sys.stderr)
            continue
        fp = e["footprint_blocks"] * 4096

        def prepare(name: str = e["name"]) -> list[str]:
            script = makers[name]("validate")
            # Each run starts from the inputs the recorder starts from (randread builds its database).
            fresh = f"rm -f {rw.WORK / 'randread-validate' / 'db'}; " if name == "randread" else ""
            return ["sh", "-c", f"{fresh}exec sh {script}"]

        out.append((e["name"], prepare, [fp // 4 + add, fp // 2 + add, fp + add]))
    return out


def stop_after(name: str) -> float | None:
    """Seconds after which the recorder stops this workload (the four-program mix), or None."""
    import record_workloads as rw

    return rw.TIMEOUTS.get(name)


def sizes_path(trace: str) -> str:
    return trace + ".sizes.json"


def snapshot_sizes(trace: str) -> str:
    """Writes the sizes of the trace's files (named DEV:INODE:PATH) that are still the same files,
    for a comparison after the next preparation has replaced them."""
    import csv

    names: set[str] = set()
    with open(trace, encoding="utf-8", errors="surrogateescape", newline="") as f:
        rows = csv.reader(line for line in f if not line.startswith("#"))
        head = next(rows, [])
        col = head.index("file") if "file" in head else 5
        names.update(r[col] for r in rows if len(r) > col)
    sizes = {}
    for name in names:
        _, ino, path = V._split_name(name)
        try:
            st = os.stat(path)
        except OSError:
            continue
        if st.st_ino == ino:
            sizes[name] = st.st_size
    out = sizes_path(trace)
    Path(out).write_text(json.dumps(sizes))
    return out


def recompare(out_dir: str) -> list[dict]:
    """The kept runs of ``out_dir`` compared again: each twice, with the cache following the other
    charges over time and with the constant cache of their peaks."""
    rows = []
    for line in open(os.path.join(out_dir, "runs.jsonl")):
        run = json.loads(line)
        sizes = json.loads(Path(sizes_path(run["trace"])).read_text())
        for cache in ("peak", "varying"):
            c, _ = V.compare(
                run["trace"],
                run["memory_bytes"],
                cache=cache,
                sizes=sizes,
                command_status=run["command_status"],
                outcome=run["outcome"],
                lost_events=run["lost_events"],
            )
            r = {"workload": run["workload"], **c.to_dict()}
            rows.append(r)
            print(json.dumps(r), file=sys.stderr)
    return rows


def model_cache(r: dict) -> str:
    lo, hi = r.get("model_blocks_min") or r["model_blocks"], r.get("model_blocks_max") or r["model_blocks"]
    n = r["cache_steps"]
    return str(lo) if lo == hi else f"{lo}-{hi} ({n} step{'' if n == 1 else 's'})"


def dropped(r: dict) -> str:
    """The dropped pages of a run; runs recorded before the trace carried drops have none."""
    if "kernel_dropped" not in r:
        return "-"
    return f"{r['kernel_dropped']} / {r['model_dropped']}"


def table(rows: list[dict]) -> str:
    head = (
        "| workload | memory | cache | model cache | pages read kernel | model | diff | read-ahead same | "
        "evictions overlap | dropped kernel / model | disk requests kernel / model |"
    )
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        # Runs recorded before the cache followed the other charges had the constant (peak) cache.
        lines.append(
            f"| {r['workload']} | {r['memory_bytes'] / (1 << 20):.0f} MiB | {r.get('cache_model', 'peak')} | "
            f"{model_cache(r)} | "
            f"{r['kernel_pages_read']} | {r['model_pages_read']} | {r['pages_read_diff']:+.3f} | "
            f"{r['readahead_match']:.3f} ({r['kernel_readahead']} / {r['model_readahead']}) | "
            f"{r['evicted_overlap']:.3f} | {dropped(r)} | {r['kernel_disk_requests']} / {r['model_disk_requests']} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=[], help="suite workloads to run")
    ap.add_argument("--small", action="store_true", help="the small cases of the tests")
    ap.add_argument("--json", help="append each run as a JSON line to this file")
    ap.add_argument("--table", help="print the table of the runs in this JSON-lines file and stop")
    ap.add_argument("--out-dir", help="keep each run's files here (for --recompare)")
    ap.add_argument("--recompare", metavar="DIR", help="compare the runs kept in DIR again (both cache models)")
    ap.add_argument(
        "--add-anon",
        metavar="SIZE|FILE",
        help="add this to every suite size (fraction x footprint + SIZE): the workload's measured peak anonymous "
        "memory, as a size or a kept run's TRACE.memory.csv (the peak of its anon_bytes column)",
    )
    a = ap.parse_args()
    if a.table:
        print(table([json.loads(line) for line in open(a.table) if line.strip()]))
        return 0
    if a.recompare:
        rows = recompare(a.recompare)
        if a.json:
            with open(a.json, "a") as f:
                f.write("".join(json.dumps(r) + "\n" for r in rows))
        print(table(rows))
        return 0
    small = [(name, lambda command=command: command, mems) for name, command, mems in small_cases()] if a.small else []
    rows = []
    add = anon_allowance(a.add_anon) if a.add_anon else 0
    for name, prepare, mems in small + suite_cases(a.only, add):
        for mem in mems:
            kept = os.path.join(a.out_dir, f"{name}-{mem}") if a.out_dir else None
            cs = validate(prepare(), [mem], out_dir=kept, timeout=stop_after(name))
            if not cs:
                continue
            c = cs[0]
            if kept:
                snapshot_sizes(c.trace)
                with open(os.path.join(a.out_dir, "runs.jsonl"), "a") as f:
                    f.write(json.dumps({"workload": name, **c.to_dict()}) + "\n")
            r = {"workload": name, **c.to_dict()}
            rows.append(r)
            print(json.dumps(r), file=sys.stderr)
            if a.json:
                with open(a.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
            if c.outcome in ("was killed by SIGTERM", "was killed by SIGINT", "was killed by SIGHUP"):
                print(table(rows))
                return 1  # interrupted (SIGTERM, SIGINT, SIGHUP): no further runs
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
