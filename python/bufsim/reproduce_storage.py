"""`bufsim reproduce storage-aware`: the shapes of Figures 2 to 8 of storage-aware caching
(Forney, Arpaci-Dusseau, Arpaci-Dusseau, FAST '02) on Table 1's synthetic traces, with our
throughputs beside what the paper's figures show. Figures are not in the paper's text: the
"paper" lines quote the numbers its §5 gives and describe the curves it describes."""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bufsim import _core
from bufsim.api import run
from bufsim.findings import Finding
from bufsim.options import Options
from bufsim.storage import PAPER_STORAGE

# What the paper's §5 says each figure shows.
PAPER = {
    "2": "LRU (and Clock) fall from nearly 55 MB/s with equal disks to 11 MB/s with one 10-year-old disk "
    "(to 20%), and the benefit of having a cache decreases; Static (Fig. 3) about 50 MB/s with a two-year-old "
    "disk (§5.2, on Fig. 4)",
    "2-right": "the system runs at the rate of its slowest disk: one two-year-old disk among 15 new ones is as "
    "poor as all sixteen old",
    "4": "best ratio about 2:1 for Trace 1 (peak about 50 MB/s, as Fig. 3 with a two-year-old disk), nearly 40:1 "
    "for 8 KB requests skewed 10:1 to the slow disk; each workload has its own best ratio; Trace 1 varies from "
    "50 to 30 MB/s with the ratio",
    "5-trace2": "LRU falls from about 23 to 6 MB/s; Eager and Lazy LRU stay between 16 and 20 MB/s at age 10; "
    "LANDLORD similar",
    "5-trace3": "with equal disks all cost-aware policies beat LRU (popular disks queue); at age 10 Eager LRU "
    "beats LRU by over 3x; Lazy LRU and LANDLORD more robust than Eager LRU",
    "6": "Clock degrades like LRU; Lazy Clock masks the slow disk (Trace 3: about 21 MB/s at age 0, 17 at age 10)",
    "7": "Clock is affected by any heterogeneity; Lazy Clock degrades only slowly, and is fairly close to Clock "
    "with 0 or 16 old disks",
    "8": "after the 2x fault on disk 6 (half way through), Eager LRU grows disk 6's partition and shrinks the "
    "others until the wait times are about equal; the right ratio is found quickly",
    "8-right": "one faulty disk: Eager LRU about 54 MB/s, LANDLORD 48, Lazy Clock nearly as well, Clock the least; "
    "eight faulty disks: Eager LRU masks them less well than LANDLORD",
}

LRU_FAMILY = ["lru", "eager-lru", "lazy-lru", "landlord"]
CLOCK_FAMILY = ["clock", "lazy-clock"]
FAULT_POLICIES = ["eager-lru", "landlord", "lazy-clock", "clock"]

# No cache at all (Figures 2 and 3): the smallest cache the engine runs, one 4 KiB block. It
# holds only the block read last (while that block's read is in flight, the other misses bypass
# the cache), which random requests do not ask for again: every access goes to its disk. The
# rows carry the hit ratio, 0 in every run.
NO_CACHE = ("lru", "1blocks")
NO_CACHE_NAME = "no cache"

# Figure 4's lower lines: "8 KB requests", the slow disk (disk 0) receiving twice or ten times
# as many requests as each other disk; Trace 1's working set. The paper gives no length: as
# many requests as Traces 2 and 3.
SKEWED = "sa-trace1(requests=750000,sizes=fixed,request-size=8KB,disks=hot,hot-disk=0,hot-ratio={ratio})"


def _settings(quick: bool) -> dict[str, Any]:
    common = {
        "trace2": "sa-trace2",
        "trace3": "sa-trace3",
        "skew2": SKEWED.format(ratio=2),
        "skew10": SKEWED.format(ratio=10),
    }
    if quick:
        # Traces 2 and 3 stay whole: the storage-aware policies fill the old disk's partition
        # once, a cold start that a quarter of the trace does not amortize (§4.4 chose lengths
        # "to mitigate the effects of cold-start misses"); so they run only the ends of the
        # age range. Trace 1 (Figures 2, 3, 4 and 8) is a quarter.
        return common | {
            "trace1": "sa-trace1(requests=48000)",
            "ages1": [0, 2, 10],
            "ages23": [0, 10],
            "trace2_policies": ["lru", "eager-lru", "lazy-lru"],
            "old_disks": [0, 1, 16],
            "ratios": [0.5, 1, 2, 3, 10, 40],
            # Figure 8 (right): the policies each statement names (all four with one fault).
            "faulty": {1: FAULT_POLICIES, 8: ["eager-lru", "landlord"]},
        }
    return common | {
        "trace1": "sa-trace1",
        "ages1": list(range(11)),
        "ages23": list(range(11)),
        "trace2_policies": LRU_FAMILY + CLOCK_FAMILY[::-1],
        "old_disks": list(range(17)),
        "ratios": [0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 10, 20, 40, 60],
        "faulty": {n: FAULT_POLICIES for n in (1, 4, 8)},
    }


def _options(device_for: Any = None, faults: Any = None) -> Options:
    return Options(PAPER_STORAGE, timing=True, device_for=device_for, faults=faults, jobs=1)


def _old(count: int, age: int = 2) -> dict[int, str] | None:
    """The first `count` disks `age` years old (Figure 2, right, and Figure 7)."""
    return {d: f"ibm-9lzx(age={age})" for d in range(count)} or None


class _Runs:
    """Every run of the reproduction, each (trace, policy, disks, faults) once, run two at a
    time (the engine releases the GIL)."""

    def __init__(self, traces: dict[str, Any]):
        self.traces = traces
        self.done: dict[tuple, Any] = {}

    @staticmethod
    def key(trace: str, policy: str, device_for: Any = None, faults: Any = None) -> tuple:
        return (trace, policy, tuple(sorted((device_for or {}).items())), tuple(faults or ()))

    def run_all(self, wanted: list[tuple]) -> None:
        # The longest first (the traces with the most requests, LANDLORD's priority queue the
        # slowest policy), so that neither worker idles at the end.
        todo = sorted(
            dict.fromkeys(k for k in wanted if k not in self.done),
            key=lambda k: (-os.path.getsize(self.traces[k[0]].path), k[1] != "landlord"),
        )

        def one(k: tuple) -> Any:
            trace, policy, device_for, faults = k
            cache = "200MB"
            if policy == NO_CACHE_NAME:
                policy, cache = NO_CACHE
            return run(self.traces[trace], [policy], [cache], _options(dict(device_for) or None, list(faults) or None))[
                0
            ]

        with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
            for k, r in zip(todo, pool.map(one, todo)):
                self.done[k] = r

    def row(self, k: tuple, **fields: Any) -> dict:
        r = self.done[k]
        return fields | {"policy": k[1], "mb_s": round(r.throughput_mb_s, 2), "hit_ratio": round(r.hit_ratio, 4)}


def _timeline(path: str, fault: str, at_s: int, quick: bool) -> list[dict]:
    """Figure 8 (left): Eager LRU's partition of disk 6 over time."""
    clock, samples = _core.run_timeline(path, "eager-lru", "200MB", "none", _options(faults=[fault]).to_json())
    assert clock == "ns"
    by_time: dict[int, dict[str, tuple[int, int, float]]] = {}
    for t, part, target, blocks, wait in samples:
        by_time.setdefault(t, {})[part] = (target, blocks, wait)
    times = sorted(by_time)
    step = max(1, len(times) // (12 if quick else 24))
    rows = []
    for t in times[::step] + ([times[-1]] if (len(times) - 1) % step else []):
        parts = by_time[t]
        waits = [w for _, _, w in parts.values()]
        mean = sum(waits) / len(waits) if waits else 0.0
        others = [b for p, (_, b, _) in parts.items() if p != "dev6"]
        rows.append(
            {
                "figure": "8-timeline",
                "trace": "trace1",
                "time_s": round(t / 1e9, 1),
                "policy": "eager-lru",
                "dev6_blocks": parts["dev6"][1],
                "others_mean_blocks": round(sum(others) / len(others)),
                "dev6_relative_wait": round(parts["dev6"][2] / mean, 2) if mean > 0 else 0.0,
                "fault": t / 1e9 >= at_s,
            }
        )
    return rows


def _faults(count: int, at_s: int) -> tuple[str, ...]:
    """A 2x performance fault at `at_s` on `count` disks from disk 6 on (§5.5's disk 6 first)."""
    return tuple(f"device={(6 + i) % 16},at={at_s}s,slowdown=2" for i in range(count))


def storage_aware(quick: bool = False) -> list[dict]:
    """Storage-aware caching (Forney et al., FAST '02) §5: throughput in MB/s of no cache, LRU,
    Clock, Static, Eager LRU, Lazy LRU, Lazy Clock and LANDLORD with one disk of sixteen aged
    from 0 to 10 years (Figures 2, 3, 5, 6) and with 0 to 16 two-year-old disks (Figures 2,
    right, and 7); Static against its partition ratio on three workloads (Figure 4); 2x
    performance faults on 1, 4 and 8 disks (Figure 8, right) and Eager LRU's partitions after
    the fault on disk 6 (Figure 8, left); on Table 1's traces (`--quick`: a quarter of Trace 1,
    the ends of the ranges)."""
    s = _settings(quick)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as d:
        traces, paths = {}, {}
        for name in ("trace1", "trace2", "trace3", "skew2", "skew10"):
            paths[name] = os.path.join(d, f"{name}.csv")
            _core.generate(s[name], paths[name], seed=1)
            traces[name] = _core.Trace(paths[name], format="csv")
        runs = _Runs(traces)
        aged = lambda age: {0: f"ibm-9lzx(age={age})"} if age else None  # noqa: E731
        fig2 = [("trace1", p, aged(a), a) for a in s["ages1"] for p in ["lru", "clock", "static", NO_CACHE_NAME]]
        fig2r = [("trace1", p, _old(n), n) for n in s["old_disks"] for p in ["lru", "clock", NO_CACHE_NAME]]
        fig4 = [
            (name, f"static(ratio={r:g})", _old(1), r) for name in ("trace1", "skew2", "skew10") for r in s["ratios"]
        ]
        fig56 = [
            (name, p, aged(a), a)
            for name, policies in (("trace2", s["trace2_policies"]), ("trace3", LRU_FAMILY + ["lazy-clock", "clock"]))
            for a in s["ages23"]
            for p in policies
        ]
        fig7 = [("trace2", p, _old(n), n) for n in s["old_disks"] for p in CLOCK_FAMILY]
        first = fig2 + fig2r + fig4 + fig56 + fig7 + [("trace1", "lru", None, 0)]
        runs.run_all([_Runs.key(t, p, dev) for t, p, dev, _ in first])
        for t, p, dev, a in fig2:
            rows.append(runs.row(_Runs.key(t, p, dev), figure="2", trace=t, slow_disk_age=a))
        for t, p, dev, n in fig2r:
            rows.append(runs.row(_Runs.key(t, p, dev), figure="2-right", trace=t, old_disks=n))
        for t, p, dev, r in fig4:
            workload = {"trace1": "Trace 1 (256 KB)", "skew2": "8 KB, 2:1", "skew10": "8 KB, 10:1"}[t]
            rows.append(runs.row(_Runs.key(t, p, dev), figure="4", trace=workload, ratio=r))
        for t, p, dev, a in fig56:
            rows.append(runs.row(_Runs.key(t, p, dev), figure="5/6", trace=t, slow_disk_age=a))
        for t, p, dev, n in fig7:
            rows.append(runs.row(_Runs.key(t, p, dev), figure="7", trace=t, old_disks=n))

        # Figure 8: equal disks, 2x slower from half way through (the paper's 500 s of a run of
        # about 1000 s), on 1, 4 and 8 disks.
        at_s = round(runs.done[_Runs.key("trace1", "lru")].exec_time_s / 2)
        fig8 = [("trace1", p, _faults(n, at_s), n) for n, policies in s["faulty"].items() for p in policies]
        runs.run_all([_Runs.key(t, p, None, f) for t, p, f, _ in fig8])
        for t, p, f, n in fig8:
            rows.append(runs.row(_Runs.key(t, p, None, f), figure="8", trace=t, faulty_disks=n, fault_at_s=at_s))
        rows += _timeline(paths["trace1"], _faults(1, at_s)[0], at_s, quick)
    return rows


def _sub(rows: list[dict], figure: str, trace: str | None = None) -> list[dict]:
    return [r for r in rows if r["figure"] == figure and (trace is None or r["trace"] == trace)]


def _curve(rows: list[dict], policy: str, x: str = "slow_disk_age") -> list[tuple[float, float]]:
    return sorted((r[x], r["mb_s"]) for r in rows if r["policy"] == policy)


def _kept(rows: list[dict], policy: str) -> float:
    """Throughput with the oldest slow disk as a share of the throughput with equal disks."""
    mine = _curve(rows, policy)
    return mine[-1][1] / mine[0][1] if mine and mine[0][1] else 0.0


def _at(rows: list[dict], policy: str, age: str = "oldest") -> float:
    mine = _curve(rows, policy)
    return (mine[-1] if age == "oldest" else mine[0])[1] if mine else 0.0


def _value(rows: list[dict], policy: str, x: str, at: float) -> float:
    return next((r["mb_s"] for r in rows if r["policy"] == policy and r[x] == at), 0.0)


def _best_ratio(rows: list[dict]) -> tuple[float, float, float]:
    """Figure 4 on one workload: the best ratio (the smallest within 1% of the highest
    throughput: beyond the ratio at which the slow disk's whole share of the working set is
    cached, a larger ratio changes nothing), the highest and the lowest throughput."""
    curve = sorted((r["ratio"], r["mb_s"]) for r in rows)
    top = max(mb for _, mb in curve)
    best = min(ratio for ratio, mb in curve if mb >= 0.99 * top)
    return best, top, min(mb for _, mb in curve)


def storage_aware_findings(rows: list[dict]) -> list[Finding]:
    """The statements of §5 about Figures 2 to 8, each judged by a stated rule."""
    fig2 = _sub(rows, "2")
    fig2r = _sub(rows, "2-right")
    t2 = _sub(rows, "5/6", "trace2")
    t3 = _sub(rows, "5/6", "trace3")
    fig7 = _sub(rows, "7")
    tl = _sub(rows, "8-timeline")

    def kept(sub: list[dict], policy: str) -> str:
        return f"{_kept(sub, policy):.0%} ({_at(sub, policy, 'first')} to {_at(sub, policy)} MB/s)"

    def benefit(age: str) -> float:
        return _at(fig2, "lru", age) - _at(fig2, NO_CACHE_NAME, age)

    findings = [
        Finding(
            "Fig. 2: LRU with one old disk keeps about a fifth of its throughput (10-30%)",
            "55 to 11 MB/s (20%)",
            kept(fig2, "lru"),
            0.10 <= _kept(fig2, "lru") <= 0.30,
        ),
        Finding(
            "Fig. 2: Clock degrades like LRU (kept shares within 10 points)",
            "like LRU",
            f"Clock {_kept(fig2, 'clock'):.0%}, LRU {_kept(fig2, 'lru'):.0%}",
            abs(_kept(fig2, "clock") - _kept(fig2, "lru")) <= 0.10,
        ),
        Finding(
            "Fig. 2: the benefit of the cache (LRU over no cache) decreases as the disk ages",
            "decreases",
            f"{benefit('first'):.2f} MB/s with equal disks, {benefit('oldest'):.2f} at the oldest age",
            benefit("oldest") < benefit("first"),
        ),
    ]
    one, all_old = min(r["old_disks"] for r in fig2r if r["old_disks"] > 0), max(r["old_disks"] for r in fig2r)
    ratio_r = {
        p: _value(fig2r, p, "old_disks", one) / max(_value(fig2r, p, "old_disks", all_old), 1e-9)
        for p in ("lru", "clock")
    }
    findings += [
        Finding(
            "Fig. 2 (right): with one two-year-old disk LRU and Clock run as slowly as with all sixteen old "
            "(within 10%)",
            "as poor as all slow disks",
            ", ".join(
                f"{p} {_value(fig2r, p, 'old_disks', one)} against {_value(fig2r, p, 'old_disks', all_old)} MB/s"
                for p in ratio_r
            ),
            all(v <= 1.10 for v in ratio_r.values()),
        ),
        Finding(
            "Fig. 3: Static, with a fixed per-disk partition, keeps more than LRU",
            "about 50 MB/s with a two-year-old disk",
            f"Static {kept(fig2, 'static')}, LRU {_kept(fig2, 'lru'):.0%}",
            _kept(fig2, "static") > _kept(fig2, "lru"),
        ),
    ]
    fig4 = {w: _best_ratio([r for r in _sub(rows, "4", w)]) for w in ("Trace 1 (256 KB)", "8 KB, 2:1", "8 KB, 10:1")}
    (b1, top1, low1), (b2, _, _), (b10, _, _) = fig4.values()
    static2 = _value(fig2, "static", "slow_disk_age", 2)
    findings += [
        Finding(
            "Fig. 4: Trace 1's best throughput over the ratios is Figure 3's Static with a two-year-old disk "
            "(within 10%)",
            "about 50 MB/s, as Figure 3",
            f"{top1} against {static2} MB/s",
            abs(top1 - static2) <= 0.10 * static2,
        ),
        Finding(
            "Fig. 4: Trace 1's best ratio (slow disk's partition to each fast disk's) is about 2:1 (1.5 to 3)",
            "2:1",
            f"{b1:g}:1",
            1.5 <= b1 <= 3,
        ),
        Finding(
            "Fig. 4: the best ratio with 8 KB requests skewed 10:1 to the slow disk is nearly 40:1 (20 to 60)",
            "nearly 40:1",
            f"{b10:g}:1",
            20 <= b10 <= 60,
        ),
        Finding(
            "Fig. 4: each of the three workloads has a different best ratio",
            "yes (2:1 ... nearly 40:1)",
            f"Trace 1 {b1:g}:1, 2:1 skew {b2:g}:1, 10:1 skew {b10:g}:1",
            len({b1, b2, b10}) == 3,
        ),
        Finding(
            "Fig. 4: Trace 1's throughput varies greatly with the ratio (the worst loses at least a quarter)",
            "50 to 30 MB/s (40% less)",
            f"{top1} to {low1} MB/s ({1 - low1 / top1:.0%} less)",
            low1 <= 0.75 * top1,
        ),
        Finding(
            "Fig. 5 (Trace 2): LRU collapses as the disk ages (keeps under 40%)",
            "about 23 to 6 MB/s (26%)",
            kept(t2, "lru"),
            _kept(t2, "lru") < 0.40,
        ),
        Finding(
            "Fig. 5 (Trace 2): Eager and Lazy LRU keep most of their throughput (at least 70%)",
            "16-20 MB/s at age 10",
            f"Eager {_kept(t2, 'eager-lru'):.0%}, Lazy {_kept(t2, 'lazy-lru'):.0%}",
            min(_kept(t2, "eager-lru"), _kept(t2, "lazy-lru")) >= 0.70,
        ),
        Finding(
            "Fig. 5 (Trace 3): with equal disks every cost-aware policy beats LRU",
            "yes (popular disks queue)",
            ", ".join(f"{p} {_at(t3, p, 'first')}" for p in LRU_FAMILY),
            all(_at(t3, p, "first") > _at(t3, "lru", "first") for p in LRU_FAMILY[1:]),
        ),
        Finding(
            "Fig. 5 (Trace 3): at the oldest age Eager LRU beats LRU by over 3x",
            "over 3x",
            f"{_at(t3, 'eager-lru') / max(_at(t3, 'lru'), 1e-9):.1f}x",
            _at(t3, "eager-lru") > 3 * _at(t3, "lru"),
        ),
        Finding(
            "Fig. 5 (Trace 3): Lazy LRU and LANDLORD are more robust than Eager LRU (keep a larger share)",
            "yes",
            f"Lazy {_kept(t3, 'lazy-lru'):.0%}, LANDLORD {_kept(t3, 'landlord'):.0%}, "
            f"Eager {_kept(t3, 'eager-lru'):.0%}",
            min(_kept(t3, "lazy-lru"), _kept(t3, "landlord")) > _kept(t3, "eager-lru"),
        ),
        Finding(
            "Fig. 6 (Trace 3): Lazy Clock masks the slow disk (keeps at least 70%)",
            "about 21 to 17 MB/s (81%)",
            kept(t3, "lazy-clock"),
            _kept(t3, "lazy-clock") >= 0.70,
        ),
        Finding(
            "Fig. 6: Clock degrades like LRU (Trace 3, kept shares within 10 points)",
            "like LRU",
            f"Clock {_kept(t3, 'clock'):.0%}, LRU {_kept(t3, 'lru'):.0%}",
            abs(_kept(t3, "clock") - _kept(t3, "lru")) <= 0.10,
        ),
    ]
    clock7, lazy7 = _curve(fig7, "clock", "old_disks"), dict(_curve(fig7, "lazy-clock", "old_disks"))
    one = min((n for n, _ in clock7 if n > 0), default=1)
    mixed = [(n, mb) for n, mb in clock7 if 0 < n < 16]
    ends = [n for n, _ in clock7 if n in (0, 16)]
    findings += [
        Finding(
            "Fig. 7: Clock is affected by any heterogeneity (one old disk as slow as sixteen, within 10%)",
            "affected by any heterogeneity",
            f"{dict(clock7).get(one)} with one old disk, {dict(clock7).get(16)} with sixteen MB/s",
            dict(clock7).get(one, 0) <= 1.10 * dict(clock7).get(16, 1e-9),
        ),
        Finding(
            "Fig. 7: Lazy Clock beats Clock whenever the disks are mixed (1 to 15 old)",
            "only slowly degrades",
            ", ".join(f"{n}: {lazy7.get(n)} vs {mb}" for n, mb in mixed),
            bool(mixed) and all(lazy7.get(n, 0) > mb for n, mb in mixed),
        ),
        Finding(
            "Fig. 7: with 0 or 16 old disks Lazy Clock is fairly close to Clock (within 10%)",
            "fairly close, a little below",
            ", ".join(f"{n}: {lazy7.get(n)} vs {dict(clock7)[n]}" for n in ends),
            all(abs(lazy7.get(n, 0) - dict(clock7)[n]) <= 0.10 * dict(clock7)[n] for n in ends),
        ),
    ]
    fig8 = {(r["faulty_disks"], r["policy"]): r["mb_s"] for r in _sub(rows, "8")}
    if fig8:
        f1 = {p: fig8.get((1, p), 0.0) for p in FAULT_POLICIES}
        findings += [
            Finding(
                "Fig. 8 (right): with one faulty disk Eager LRU beats LANDLORD",
                "about 54 against 48 MB/s",
                f"Eager LRU {f1['eager-lru']}, LANDLORD {f1['landlord']}",
                f1["eager-lru"] > f1["landlord"],
            ),
            Finding(
                "Fig. 8 (right): with one faulty disk Lazy Clock performs nearly as well (within 10% of the "
                "lower of Eager LRU and LANDLORD)",
                "nearly as well as the others",
                f"Lazy Clock {f1['lazy-clock']}",
                f1["lazy-clock"] >= 0.90 * min(f1["eager-lru"], f1["landlord"]),
            ),
            Finding(
                "Fig. 8 (right): with one faulty disk the cost-oblivious Clock performs the least well",
                "Clock the least",
                f"Clock {f1['clock']}, the others {min(v for p, v in f1.items() if p != 'clock')} or more",
                all(f1["clock"] < v for p, v in f1.items() if p != "clock"),
            ),
            Finding(
                "Fig. 8 (right): with eight faulty disks Eager LRU masks the faults less well than LANDLORD",
                "LANDLORD ahead",
                f"Eager LRU {fig8.get((8, 'eager-lru'))}, LANDLORD {fig8.get((8, 'landlord'))}",
                fig8.get((8, "eager-lru"), 0.0) < fig8.get((8, "landlord"), 0.0),
            ),
        ]
    before = [r["dev6_blocks"] for r in tl if not r["fault"]]
    after = [r["dev6_blocks"] for r in tl if r["fault"]]
    if before and after:
        findings.append(
            Finding(
                "Fig. 8 (left): after the fault Eager LRU grows the slow disk's partition",
                "disk 6's partition grows until wait times are about equal",
                f"{before[-1]} blocks before, {max(after)} at most after",
                max(after) > before[-1],
            )
        )
    return findings


def _wide(rows: list[dict], policies: list[str], x: str = "slow_disk_age") -> tuple[list[str], list[list[object]]]:
    xs = sorted({r[x] for r in rows})
    by = {(r[x], r["policy"]): r["mb_s"] for r in rows}
    label = {"slow_disk_age": "slow disk age", "old_disks": "old disks", "ratio": "ratio"}[x]
    return [label] + policies, [[v] + [by.get((v, p), "") for p in policies] for v in xs]


def format_storage_aware(rows: list[dict]) -> str:
    from bufsim.tables import format_table

    out = []

    def table(title: str, sub: list[dict], policies: list[str], paper: str, x: str = "slow_disk_age") -> None:
        policies = [p for p in policies if any(r["policy"] == p for r in sub)]
        if not sub or not policies:
            return
        headers, body = _wide(sub, policies, x)
        out.append(title)
        out.append(format_table(headers, body, [True] * len(headers)))
        if x == "slow_disk_age":
            kept = ", ".join(f"{p} {_kept(sub, p):.0%}" for p in policies)
            out.append(f"kept at the oldest age: {kept}")
        out.append(f"paper: {paper}")
        out.append("")

    table(
        "Figure 2 (left; and Static, Figure 3): Trace 1, one disk aged, MB/s",
        _sub(rows, "2"),
        [NO_CACHE_NAME, "lru", "clock", "static"],
        PAPER["2"],
    )
    table(
        "Figure 2 (right): Trace 1, disks 0.. two years old, MB/s",
        _sub(rows, "2-right"),
        [NO_CACHE_NAME, "lru", "clock"],
        PAPER["2-right"],
        "old_disks",
    )
    fig4 = _sub(rows, "4")
    if fig4:
        workloads = list(dict.fromkeys(r["trace"] for r in fig4))
        pivot = [dict(r, policy=r["trace"]) for r in fig4]
        table(
            "Figure 4: Static with disk 0 two years old, its partition over each other disk's (ratio), MB/s",
            pivot,
            workloads,
            PAPER["4"],
            "ratio",
        )
    for name in ("trace2", "trace3"):
        sub = _sub(rows, "5/6", name)
        side = "left" if name == "trace2" else "right"
        label = name.replace("trace", "Trace ")
        table(f"Figure 5 ({side}): {label}, LRU family, MB/s", sub, LRU_FAMILY, PAPER[f"5-{name}"])
        table(f"Figure 6 ({side}): {label}, Clock family, MB/s", sub, CLOCK_FAMILY, PAPER["6"])
    table("Figure 7: Trace 2, disks 0.. two years old, MB/s", _sub(rows, "7"), CLOCK_FAMILY, PAPER["7"], "old_disks")
    fig8 = _sub(rows, "8")
    if fig8:
        at = fig8[0]["fault_at_s"]
        counts = sorted({r["faulty_disks"] for r in fig8})
        by = {(r["faulty_disks"], r["policy"]): r["mb_s"] for r in fig8}
        out.append(f"Figure 8 (right): Trace 1, equal disks, disks 6.. twice as slow from {at} s, MB/s")
        out.append(
            format_table(
                ["faulty disks"] + FAULT_POLICIES,
                [[n] + [by.get((n, p), "") for p in FAULT_POLICIES] for n in counts],
                [True] * (len(FAULT_POLICIES) + 1),
            )
        )
        out.append(f"paper: {PAPER['8-right']}")
        out.append("")
    tl = _sub(rows, "8-timeline")
    if tl:
        out.append(
            "Figure 8 (left): Eager LRU's partition of disk 6 over time (blocks; relative wait = disk 6's wait "
            "over the epoch / mean wait)"
        )
        out.append(
            format_table(
                ["time s", "fault", "dev6 blocks", "others (mean)", "dev6 relative wait"],
                [
                    [
                        r["time_s"],
                        "yes" if r["fault"] else "",
                        r["dev6_blocks"],
                        r["others_mean_blocks"],
                        r["dev6_relative_wait"],
                    ]
                    for r in tl
                ],
                [True] * 5,
            )
        )
        before = [r["dev6_blocks"] for r in tl if not r["fault"]]
        after = [r["dev6_blocks"] for r in tl if r["fault"]]
        if before and after:
            out.append(
                f"disk 6's partition: {before[-1]} blocks before the fault, {max(after)} at most after it, "
                f"{after[-1]} at the end"
            )
        out.append(f"paper: {PAPER['8']}")
    return "\n".join(out)


def draw_storage_aware(rows: list[dict], out_dir: str | os.PathLike) -> list[Path]:
    """The paper's Figures 2 to 8 as line plots of our throughputs (one PNG per figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bufsim.plots import _save

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []

    def panel(ax: Any, sub: list[dict], policies: list[str], x: str, xlabel: str, title: str) -> None:
        for p in policies:
            curve = _curve(sub, p, x)
            if curve:
                ax.plot([c[0] for c in curve], [c[1] for c in curve], marker="o", label=p)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("throughput (MB/s)")
        ax.set_title(title, fontsize="medium")
        if ax.lines:
            ax.legend(fontsize="small")

    def figure(name: str, panels: list[tuple]) -> None:
        panels = [p for p in panels if p[0]]
        if not panels:
            return
        fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
        for ax, (sub, policies, x, xlabel, title) in zip(axes[0], panels):
            if x == "ratio":
                ax.set_xscale("log")
            panel(ax, sub, policies, x, xlabel, title)
        fig.tight_layout()
        paths.append(_save(fig, out / name))
        plt.close(fig)

    age, old = "age of disk 0 (years)", "two-year-old disks"
    figure(
        "storage-figure2.png",
        [
            (_sub(rows, "2"), [NO_CACHE_NAME, "lru", "clock"], "slow_disk_age", age, "Figure 2 (left): Trace 1"),
            (_sub(rows, "2-right"), [NO_CACHE_NAME, "lru", "clock"], "old_disks", old, "Figure 2 (right): Trace 1"),
        ],
    )
    figure(
        "storage-figure3.png",
        [(_sub(rows, "2"), [NO_CACHE_NAME, "lru", "static"], "slow_disk_age", age, "Figure 3: Trace 1")],
    )
    fig4 = [dict(r, policy=r["trace"]) for r in _sub(rows, "4")]
    figure(
        "storage-figure4.png",
        [
            (
                fig4,
                list(dict.fromkeys(r["trace"] for r in fig4)),
                "ratio",
                "slow disk's partition / each fast disk's",
                "Figure 4: Static, one two-year-old disk",
            )
        ],
    )
    for number, policies in (("5", LRU_FAMILY), ("6", CLOCK_FAMILY)):
        figure(
            f"storage-figure{number}.png",
            [
                (_sub(rows, "5/6", t), policies, "slow_disk_age", age, f"Figure {number} ({side}): {label}")
                for t, side, label in (("trace2", "left", "Trace 2"), ("trace3", "right", "Trace 3"))
            ],
        )
    figure("storage-figure7.png", [(_sub(rows, "7"), CLOCK_FAMILY, "old_disks", old, "Figure 7: Trace 2")])
    fig8 = [dict(r, policy=r["policy"]) for r in _sub(rows, "8")]
    tl = _sub(rows, "8-timeline")
    if fig8 or tl:
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
        if tl:
            left.plot([r["time_s"] for r in tl], [r["dev6_blocks"] for r in tl], marker="o", label="disk 6")
            left.plot([r["time_s"] for r in tl], [r["others_mean_blocks"] for r in tl], marker="o", label="others")
            left.set_xlabel("simulated time (s)")
            left.set_ylabel("blocks in the partition")
            left.set_title("Figure 8 (left): Eager LRU's partitions", fontsize="medium")
            left.legend(fontsize="small")
        panel(right, fig8, FAULT_POLICIES, "faulty_disks", "faulty disks (2x slower)", "Figure 8 (right): Trace 1")
        fig.tight_layout()
        paths.append(_save(fig, out / "storage-figure8.png"))
        plt.close(fig)
    return paths
