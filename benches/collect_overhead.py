"""How much each tracer slows a program: a C program doing 20,000 4 KiB preads of a cached 64 MiB
file, run untraced, under `bufsim collect --tracer kernel` (with and without user stacks), and
under `bufsim collect --tracer strace` (strace -f -k). The program times its own pread loop (CLOCK_MONOTONIC) and prints it, so
the tracers' start-up and post-processing are not counted: only the slowdown the program feels.

    .venv/bin/python benches/collect_overhead.py [--runs 5] [--preads 20000]

Prints the median loop time of each mode and the slowdown factors (traced / untraced - 1 is the
overhead; the check is that strace -k's overhead is at least 5x the kernel tracer's).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

PROGRAM = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int n = atoi(argv[2]);
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) { perror(argv[1]); return 1; }
    off_t blocks = lseek(fd, 0, SEEK_END) / 4096;
    char buf[4096];
    unsigned long x = 12345;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;   /* deterministic block order */
        if (pread(fd, buf, sizeof buf, (off_t)((x >> 33) % blocks) * 4096) != sizeof buf) return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.6f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
"""


def loop_seconds(cmd: list[str]) -> float:
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()
    return float(out[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--preads", type=int, default=20000)
    args = ap.parse_args()
    bufsim = os.path.join(os.path.dirname(sys.executable), "bufsim")
    with tempfile.TemporaryDirectory(prefix="bufsim-overhead-") as tmp:
        src, exe, data = (os.path.join(tmp, n) for n in ("preads.c", "preads", "data.bin"))
        with open(src, "w") as f:
            f.write(PROGRAM)
        subprocess.run(["gcc", "-O2", "-o", exe, src], check=True)
        with open(data, "wb") as f:
            f.write(os.urandom(64 << 20))
        prog = [exe, data, str(args.preads)]
        loop_seconds(prog)  # warm the page cache: every mode reads cached pages
        modes = {
            "untraced": prog,
            "kernel": [bufsim, "collect", "--tracer", "kernel", "-o", os.path.join(tmp, "k.csv"), "--", *prog],
            "kernel --no-stacks": [
                bufsim,
                "collect",
                "--tracer",
                "kernel",
                "--no-stacks",
                "-o",
                os.path.join(tmp, "kn.csv"),
                "--",
                *prog,
            ],
            "strace -k": [bufsim, "collect", "--tracer", "strace", "-o", os.path.join(tmp, "s.csv"), "--", *prog],
        }
        times: dict[str, list[float]] = {m: [] for m in modes}
        for _ in range(args.runs):
            for m, cmd in modes.items():
                times[m].append(loop_seconds(cmd))
    base = statistics.median(times["untraced"])
    print(
        f"{args.preads} preads of 4 KiB from a cached 64 MiB file, median of {args.runs} runs "
        f"(the program's own loop time)"
    )
    print(f"{'mode':<18} {'loop s':>9} {'us/pread':>9} {'slowdown':>9} {'overhead':>9}")
    over = {}
    for m in modes:
        med = statistics.median(times[m])
        over[m] = med / base - 1
        print(f"{m:<18} {med:9.4f} {med / args.preads * 1e6:9.2f} {med / base:8.1f}x {over[m]:8.1%}")
    ratio = over["strace -k"] / over["kernel"] if over["kernel"] > 0 else float("inf")
    print(f"strace -k overhead / kernel tracer overhead: {ratio:.1f}x (the check wants >= 5x)")
    return 0 if ratio >= 5 else 1


if __name__ == "__main__":
    sys.exit(main())
