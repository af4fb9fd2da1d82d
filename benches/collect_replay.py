#!/usr/bin/env python3
"""How fast bufsim collect turns strace output into a trace, against how fast strace produces it.

    .venv/bin/python benches/collect_replay.py [STRACE_LOG]

Without a log it records one: `grep -r -c -w inode` over /usr/include/linux under
`strace -f -k -y -ttt -T` (what bufsim collect runs). It then replays the log three times with
bufsim.collect.collect_from_log into /dev/null and prints lines, calls and records per second of
the parser, beside the rate at which strace wrote the log. The parser must outrun strace -k (about
1,000 traced calls per second) so that it never slows the traced program down.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from bufsim.collect import TRACED_SYSCALLS, collect_from_log


def record(log: str) -> float:
    cmd = [
        "strace",
        "-f",
        "-q",
        "-k",
        "-y",
        "-ttt",
        "-T",
        "-s",
        "0",
        "--seccomp-bpf",
        "-e",
        "trace=" + ",".join(TRACED_SYSCALLS),
        "-o",
        log,
        "grep",
        "-r",
        "-c",
        "-w",
        "inode",
        "/usr/include/linux",
    ]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> int:
    tmp = tempfile.mkdtemp()
    if len(sys.argv) > 1:
        log, traced_s = sys.argv[1], None
    else:
        log = os.path.join(tmp, "strace.log")
        traced_s = record(log)
    with open(log, "rb") as f:
        data = f.read()
    lines = data.count(b"\n")
    calls = sum(1 for l in data.split(b"\n") if l[:1].isdigit())
    best = None
    for _ in range(3):
        t = time.perf_counter()
        res = collect_from_log(log, os.devnull)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    print(f"log: {lines:,} lines, {calls:,} calls, {res.stats.records:,} records")
    if traced_s:
        print(f"strace -k wrote it at {calls / traced_s:,.0f} calls/s ({traced_s:.1f} s)")
    print(
        f"replay: {best:.2f} s = {lines / best:,.0f} lines/s, {calls / best:,.0f} calls/s, "
        f"{res.stats.records / best:,.0f} records/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
