#!/usr/bin/env python3
"""Start-up: `bufsim run` on a one-request trace, against the bare interpreter: the installed
command (the native entry point after `make build`) and the Python command line
(`python -m bufsim`, which the native entry point hands everything else to).

Two measures. Instructions of the whole process (valgrind's callgrind, exact and independent of
the machine's load), when valgrind is installed; and CPU and wall time, the minimum over
interleaved fresh processes (the bare interpreter and bufsim take turns, so a change of load
hits both). The modules `bufsim run` loads are counted too: what start-up pays for.

    python3 benches/startup.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def cpu_and_wall(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def instructions(cmd: list[str]) -> int | None:
    if shutil.which("valgrind") is None:
        return None
    p = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        capture_output=True,
        text=True,
        check=True,
    )
    m = re.search(r"Collected : (\d+)", p.stderr)
    return int(m.group(1)) if m else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20, help="runs of each command (default: 20)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "one.csv")
        with open(trace, "w") as f:
            f.write("op,file,offset,size\nR,a,0,4096\n")
        bare = [sys.executable, "-c", "pass"]
        # The installed command, as a user runs it.
        script = os.path.join(os.path.dirname(sys.executable), "bufsim")
        tail = ["run", trace, "-p", "lru", "-c", "16blocks"]
        commands = {"python -c pass": bare, "bufsim run": [script, *tail], "python -m bufsim run": [
            sys.executable, "-m", "bufsim", *tail]}  # fmt: skip
        probe = (
            "import sys, io, contextlib\nfrom bufsim.cli import main\n"
            f"sys.argv = ['bufsim', 'run', {trace!r}, '-p', 'lru', '-c', '16blocks']\n"
            "before = len(sys.modules)\n"
            "with contextlib.redirect_stdout(io.StringIO()): main()\n"
            "print(len(sys.modules))\n"
        )
        loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
        bare_modules = subprocess.run(
            [sys.executable, "-c", "import sys; print(len(sys.modules))"], capture_output=True, text=True, check=True
        )
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, cmd in commands.items():
                times[name].append(cpu_and_wall(cmd))
        counts = {name: instructions(cmd) for name, cmd in commands.items()}
        with open(script, "rb") as f:
            native = f.read(4) == b"\x7fELF"
    print(f"load average {os.getloadavg()[0]:.1f}, {args.repeat} interleaved runs each")
    print(f"`bufsim` is {'the native entry point' if native else 'a Python script'} ({script})")
    print(f"{'command':<22} {'instructions':>14} {'CPU ms (min)':>13} {'wall ms (min)':>14} {'modules':>8}")
    modules = {
        "python -c pass": bare_modules.stdout.strip(),
        "bufsim run": "-" if native else loaded.stdout.strip(),
        "python -m bufsim run": loaded.stdout.strip(),
    }
    for name, runs in times.items():
        n = counts[name]
        shown = f"{n / 1e6:.1f}M" if n else "-"
        cpu = min(c for c, _ in runs) * 1e3
        wall = min(w for _, w in runs) * 1e3
        print(f"{name:<22} {shown:>14} {cpu:>13.1f} {wall:>14.1f} {modules[name]:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
