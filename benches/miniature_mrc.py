"""Miniature-simulation miss ratio curves (Waldspurger et al., ATC 2017) against full simulation.

For each trace and policy: the curve at 20 cache sizes (geometric from 1/50 of the footprint to
the footprint) by `bufsim run` with all 20 sizes (one streaming pass, every size simulated in
full), and by `bufsim mrc --policy SPEC --sample RATE`; prints the mean and max absolute error
of the miniature curve and the speed-up (wall time of the full runs / the miniature one, best of
--repeat, both with the same --jobs).

    .venv/bin/python benches/miniature_mrc.py [--rate 0.01] [--jobs 1] [--repeat 3] [--seeds 0,1,2] [TRACE ...]
With --seeds, one row per seed of the sampling hash (default: the run seed only).

Without traces it uses the CloudPhysics trace and the ARC paper's P3 from ../shared/traces.
"""

from __future__ import annotations

import argparse
import os
import time

import bufsim
from bufsim.analysis import miniature_mrc, mrc

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "traces")
DEFAULT_TRACES = [
    os.path.join(SHARED, "cloudphysics_vscsi.csv"),
    os.path.join(SHARED, "arc", "P3.lis.zst"),
]
POLICIES = ["arc", "lirs", "2q", "s3-fifo"]


def sizes_for(trace: str) -> list[int]:
    footprint = int(mrc(trace, sizes=["1blocks"]).attrs["distinct"])
    lo, hi = max(footprint // 50, 1), footprint
    return sorted({round(lo * (hi / lo) ** (i / 19)) for i in range(20)})


def best(f, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="*", default=DEFAULT_TRACES)
    ap.add_argument("--rate", type=float, default=0.01)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--seeds", default="", help="comma-separated seeds of the sampling hash")
    a = ap.parse_args()
    print(f"rate {a.rate}, jobs {a.jobs}, best of {a.repeat}")
    print(
        f"{'trace':28s} {'policy':8s} {'sizes':>5s} {'mean|err|':>9s} {'max|err|':>9s} "
        f"{'full s':>8s} {'mini s':>8s} {'speed-up':>8s}"
    )
    for trace in a.traces:
        sizes = sizes_for(trace)
        for policy in a.policies.split(","):
            caches = [f"{s}blocks" for s in sizes]
            t_full, full = best(lambda t=trace, p=policy, c=caches: bufsim.run(t, p, c, {"jobs": a.jobs}), a.repeat)
            exact = [r.misses / r.accesses for r in full]
            for seed in [int(x) for x in a.seeds.split(",") if x] or [None]:
                seeded = {} if seed is None else {"seed": seed}
                t_mini, m = best(
                    lambda t=trace, p=policy, c=caches, k=seeded: miniature_mrc(
                        t, p, sample=a.rate, sizes=c, jobs=a.jobs, **k
                    ),
                    a.repeat,
                )
                errs = [abs(x - y) for x, y in zip(exact, m["miss_ratio"])]
                label = policy if seed is None else f"{policy}/{seed}"
                print(
                    f"{os.path.basename(trace):28s} {label:8s} {len(sizes):5d} {sum(errs) / len(errs):9.4f} "
                    f"{max(errs):9.4f} {t_full:8.3f} {t_mini:8.3f} {t_full / t_mini:7.1f}x",
                    flush=True,
                )


if __name__ == "__main__":
    main()
