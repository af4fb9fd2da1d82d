"""`bufsim reproduce storage-aware`: the shapes of Figures 2, 5, 6 and 8 (left) of storage-aware
caching (Forney, Arpaci-Dusseau, Arpaci-Dusseau, FAST '02) on Table 1's synthetic traces, with
our throughputs beside what the paper's figures show. Figures are not in the paper's text:
the "paper" lines quote the numbers its §5 gives and describe the curves it describes."""

from __future__ import annotations

import os
import tempfile
from typing import Any

from bufsim import _core
from bufsim.api import run
from bufsim.findings import Finding
from bufsim.options import Options
from bufsim.storage import PAPER_STORAGE

# What the paper's §5 says each figure shows.
PAPER = {
    "2": "LRU (and Clock) fall from nearly 55 MB/s with equal disks to 11 MB/s with one 10-year-old disk "
    "(to 20%); Static (Fig. 3) about 50 MB/s with a two-year-old disk (§5.2, on Fig. 4)",
    "5-trace2": "LRU falls from about 23 to 6 MB/s; Eager and Lazy LRU stay between 16 and 20 MB/s at age 10; "
    "LANDLORD similar",
    "5-trace3": "with equal disks all cost-aware policies beat LRU (popular disks queue); at age 10 Eager LRU "
    "beats LRU by over 3x; Lazy LRU and LANDLORD more robust than Eager LRU",
    "6": "Clock degrades like LRU; Lazy Clock masks the slow disk (Trace 3: about 21 MB/s at age 0, 17 at age 10)",
    "8": "after the 2x fault on disk 6 (half way through), Eager LRU grows disk 6's partition and shrinks the "
    "others until the wait times are about equal; the right ratio is found quickly",
}

LRU_FAMILY = ["lru", "eager-lru", "lazy-lru", "landlord"]
CLOCK_FAMILY = ["clock", "lazy-clock"]


def _settings(quick: bool) -> dict[str, Any]:
    if quick:
        # A quarter of each trace (the cache and working sets stay the paper's), every other age.
        return {
            "trace1": "sa-trace1(requests=48000)",
            "trace2": "sa-trace2(requests=187500)",
            "trace3": "sa-trace3(requests=187500)",
            "ages": [0, 2, 4, 6, 8, 10],
        }
    return {"trace1": "sa-trace1", "trace2": "sa-trace2", "trace3": "sa-trace3", "ages": list(range(11))}


def _options(device_for: Any = None, faults: Any = None) -> Options:
    return Options(PAPER_STORAGE, timing=True, device_for=device_for, faults=faults)


def _run(trace: Any, policies: list[str], device_for: Any = None, faults: Any = None) -> list:
    return run(trace, policies, ["200MB"], _options(device_for, faults))


def _aging(trace: Any, name: str, figure: str, policies: list[str], ages: list[int]) -> list[dict]:
    """One disk (disk 0) aged across `ages`, the others new (§4.4's first scenario)."""
    rows = []
    for age in ages:
        device_for = {0: f"ibm-9lzx(age={age})"} if age else None
        for r in _run(trace, policies, device_for):
            rows.append(
                {
                    "figure": figure,
                    "trace": name,
                    "slow_disk_age": age,
                    "policy": r.policy,
                    "mb_s": round(r.throughput_mb_s, 2),
                    "hit_ratio": round(r.hit_ratio, 4),
                }
            )
    return rows


def _fault(path: str, trace: Any, quick: bool) -> list[dict]:
    """Figure 8 (left): homogeneous disks, disk 6 twice as slow from half way through (the
    paper's 500 s of a run of about 1000 s), Eager LRU's partitions over time."""
    base = _run(trace, ["lru"])[0]
    at_s = round(base.exec_time_s / 2)
    fault = f"device=6,at={at_s}s,slowdown=2"
    rows = []
    for r in _run(trace, ["lru", "clock", "eager-lru", "lazy-clock", "landlord"], faults=[fault]):
        rows.append(
            {
                "figure": "8",
                "trace": "trace1",
                "fault_at_s": at_s,
                "policy": r.policy,
                "mb_s": round(r.throughput_mb_s, 2),
                "hit_ratio": round(r.hit_ratio, 4),
            }
        )
    clock, samples = _core.run_timeline(path, "eager-lru", "200MB", "none", _options(faults=[fault]).to_json())
    assert clock == "ns"
    by_time: dict[int, dict[str, tuple[int, int, float]]] = {}
    for t, part, target, blocks, wait in samples:
        by_time.setdefault(t, {})[part] = (target, blocks, wait)
    times = sorted(by_time)
    step = max(1, len(times) // (12 if quick else 24))
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


def storage_aware(quick: bool = False) -> list[dict]:
    """Storage-aware caching (Forney et al., FAST '02) §5: throughput in MB/s of LRU, Clock,
    Static, Eager LRU, Lazy LRU, Lazy Clock and LANDLORD with one disk of sixteen aged from 0
    to 10 years (Figures 2, 3, 5, 6), and Eager LRU's partitions after a 2x performance fault
    on disk 6 (Figure 8, left), on Table 1's traces (`--quick`: a quarter of each trace and
    every other age)."""
    s = _settings(quick)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as d:
        traces = {}
        for name in ("trace1", "trace2", "trace3"):
            path = os.path.join(d, f"{name}.csv")
            _core.generate(s[name], path, seed=1)
            traces[name] = (path, _core.Trace(path, format="csv"))
        t1 = traces["trace1"][1]
        rows += _aging(t1, "trace1", "2", ["lru", "clock", "static"], s["ages"])
        for name in ("trace2", "trace3"):
            rows += _aging(traces[name][1], name, "5/6", LRU_FAMILY + CLOCK_FAMILY[1:] + ["clock"], s["ages"])
        rows += _fault(traces["trace1"][0], t1, quick)
    return rows


def _wide(rows: list[dict], policies: list[str]) -> tuple[list[str], list[list[object]]]:
    ages = sorted({r["slow_disk_age"] for r in rows})
    by = {(r["slow_disk_age"], r["policy"]): r["mb_s"] for r in rows}
    return ["slow disk age"] + policies, [[a] + [by.get((a, p), "") for p in policies] for a in ages]


def _kept(rows: list[dict], policy: str) -> float:
    """Throughput with the oldest slow disk as a share of the throughput with equal disks."""
    mine = sorted((r["slow_disk_age"], r["mb_s"]) for r in rows if r["policy"] == policy)
    return mine[-1][1] / mine[0][1] if mine and mine[0][1] else 0.0


def _at(rows: list[dict], policy: str, age: str = "oldest") -> float:
    mine = sorted((r["slow_disk_age"], r["mb_s"]) for r in rows if r["policy"] == policy)
    return (mine[-1] if age == "oldest" else mine[0])[1] if mine else 0.0


def storage_aware_findings(rows: list[dict]) -> list[Finding]:
    """The statements of §5 about Figures 2, 3, 5, 6 and 8, each judged by a stated rule."""
    fig2 = [r for r in rows if r["figure"] == "2"]
    t2 = [r for r in rows if r["figure"] == "5/6" and r["trace"] == "trace2"]
    t3 = [r for r in rows if r["figure"] == "5/6" and r["trace"] == "trace3"]
    fig8 = {r["policy"]: r["mb_s"] for r in rows if r["figure"] == "8"}
    tl = [r for r in rows if r["figure"] == "8-timeline"]

    def kept(sub: list[dict], policy: str) -> str:
        return f"{_kept(sub, policy):.0%} ({_at(sub, policy, 'first')} to {_at(sub, policy)} MB/s)"

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
            "Fig. 3: Static, with a fixed per-disk partition, keeps more than LRU",
            "about 50 MB/s with a two-year-old disk",
            f"Static {kept(fig2, 'static')}, LRU {_kept(fig2, 'lru'):.0%}",
            _kept(fig2, "static") > _kept(fig2, "lru"),
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
    if fig8:
        findings.append(
            Finding(
                "Fig. 8 (right): with one faulty disk Eager LRU beats Clock",
                "Eager LRU about 54 MB/s, Clock the least",
                f"Eager LRU {fig8.get('eager-lru')}, Clock {fig8.get('clock')}",
                fig8.get("eager-lru", 0) > fig8.get("clock", 0),
            )
        )
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


def format_storage_aware(rows: list[dict]) -> str:
    from bufsim.tables import format_table

    out = []

    def table(title: str, sub: list[dict], policies: list[str], paper: str) -> None:
        headers, body = _wide(sub, policies)
        out.append(title)
        out.append(format_table(headers, body, [True] * len(headers)))
        kept = ", ".join(f"{p} {_kept(sub, p):.0%}" for p in policies)
        out.append(f"kept at the oldest age: {kept}")
        out.append(f"paper: {paper}")
        out.append("")

    fig2 = [r for r in rows if r["figure"] == "2"]
    table("Figure 2 (and Static, Figure 3): Trace 1, one disk aged, MB/s", fig2, ["lru", "clock", "static"], PAPER["2"])
    for name in ("trace2", "trace3"):
        sub = [r for r in rows if r["figure"] == "5/6" and r["trace"] == name]
        table(
            f"Figure 5 ({'left' if name == 'trace2' else 'right'}): {name.replace('trace', 'Trace ')}, LRU family, MB/s",
            sub,
            LRU_FAMILY,
            PAPER[f"5-{name}"],
        )
        table(
            f"Figure 6 ({'left' if name == 'trace2' else 'right'}): {name.replace('trace', 'Trace ')}, Clock family, MB/s",
            sub,
            CLOCK_FAMILY,
            PAPER["6"],
        )
    fig8 = [r for r in rows if r["figure"] == "8"]
    if fig8:
        out.append(f"Figure 8: Trace 1, equal disks, disk 6 twice as slow from {fig8[0]['fault_at_s']} s, MB/s")
        out.append(format_table(["policy", "MB/s"], [[r["policy"], r["mb_s"]] for r in fig8], [False, True]))
        out.append(
            "paper (Figure 8, right, one faulty disk): Eager LRU about 54 MB/s, LANDLORD 48, Lazy Clock nearly "
            "as well as them, Clock the least"
        )
        out.append("")
    tl = [r for r in rows if r["figure"] == "8-timeline"]
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
