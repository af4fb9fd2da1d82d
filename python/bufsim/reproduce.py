"""Reproductions of the papers' worked examples and experiments: each builds its input, runs
the real engine and sets our numbers beside the published ones."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from dataclasses import dataclass
from typing import Callable

from bufsim import reproduce_dulo, reproduce_prefetch
from bufsim.api import run
from bufsim.findings import Finding, equal, format_findings
from bufsim.options import Options


def _table1_trace(directory: str) -> Path:
    """The 24 accesses of the prefetching paper's Table 1: one file of blocks a..p."""
    path = Path(directory) / "prefetch-table1.csv"
    lines = ["op,file,offset,size"] + [f"R,f,{(ord(c) - ord('a')) * 4096},4096" for c in "acegikmoabcdefghijklmnop"]
    path.write_text("\n".join(lines) + "\n")
    return path


def prefetch_table1() -> list[dict]:
    """Prefetching paper (Butt, Gniady, Hu, IEEE TC 2007) §3, Table 1: with an 8-block cache and
    the simple prefetcher, OPT issues 8 disk requests and LRU 6; without prefetching OPT misses
    16 times and LRU 23."""
    paper = {
        ("opt", "simple(min=3,max=8)"): 8,
        ("lru", "simple(min=3,max=8)"): 6,
        ("opt", "none"): 16,
        ("lru", "none"): 23,
    }
    with tempfile.TemporaryDirectory() as d:
        results = run(
            _table1_trace(d),
            ["opt", "lru"],
            [8],
            Options(format="csv", jobs=1, check=True),
            prefetches=["simple(min=3,max=8)", "none"],
        )
    rows = []
    for r in results:
        prefetching = r.prefetch != "none"
        rows.append(
            {
                "policy": r.policy,
                "prefetch": r.prefetch,
                "measure": "disk requests" if prefetching else "misses",
                "bufsim": r.disk_requests if prefetching else r.misses,
                "paper": paper[(r.policy, r.prefetch)],
            }
        )
    return rows


DULO_TABLE1 = "dulo(bank=4blocks,evict=4blocks)"


def _dulo_table1_trace(directory: str) -> Path:
    """DULO §2.1, Table 1's reference stream: random blocks A..D (one-block files), then two
    four-block files X and Y read front to back, X again, and A..D again."""
    path = Path(directory) / "dulo-table1.csv"
    names = "A B C D X1 X2 X3 X4 Y1 Y2 Y3 Y4 X1 X2 X3 X4 A B C D".split()
    lines = ["op,file,offset,size"] + [f"R,{n[0]},{(int(n[1:]) - 1 if n[1:] else 0) * 4096},4096" for n in names]
    path.write_text("\n".join(lines) + "\n")
    return path


def dulo_table1() -> list[dict]:
    """DULO (Jiang et al., FAST 2005) §2.1, Table 1: an 8-block cache with Linux read-ahead on a
    disk costing 6.5 ms seek + 3.0 ms rotation per request (transfer ignored): the traditional
    scheme (LRU) takes 95.0 ms with 10 misses, DULO 66.5 ms with 7; without read-ahead both miss
    16 times.

    The real timed engine runs the stream: files 100 blocks apart on the disk (A..D lie on
    different tracks), the 2.4 kernel's read-ahead, `avg(seek=6.5ms,rotation=3.0ms)`, no think
    time, and DULO with a 4-block bank and a 4-block evicting section (the cache is 8 blocks)."""
    paper = {
        ("lru", "linux"): (95.0, 10),
        (DULO_TABLE1, "linux"): (66.5, 7),
        ("lru", "none"): (None, 16),
        (DULO_TABLE1, "none"): (None, 16),
    }
    with tempfile.TemporaryDirectory() as d:
        options = Options(
            format="csv", jobs=1, check=True, device="avg(seek=6.5ms,rotation=3.0ms)", think=0, file_gap="100blocks"
        )
        results = run(_dulo_table1_trace(d), ["lru", DULO_TABLE1], [8], options, prefetches=["linux", "none"])
    rows = []
    for r in results:
        scheme = "traditional (lru)" if r.policy == "lru" else "dual (dulo)"
        ms, misses = paper[(r.policy, r.prefetch)]
        if ms is not None:
            rows.append(
                {
                    "scheme": scheme,
                    "prefetch": r.prefetch,
                    "measure": "time (ms)",
                    "bufsim": round(r.exec_time_s * 1000, 1),
                    "paper": ms,
                }
            )
        rows.append(
            {"scheme": scheme, "prefetch": r.prefetch, "measure": "misses", "bufsim": r.misses, "paper": misses}
        )
    return rows


def dulo_tables34() -> list[dict]:
    """DULO §4.1.3, Tables 3 and 4, in shape: execution time against the sequencing bank size
    (the paper finds an optimum in the middle, 4 to 16 MB) and against the evicting section's
    size (the paper finds it saturating beyond 64 to 128 MB).

    The paper's traces are not public; bufsim runs its own `dulo-mix` workload (whole-file scans
    alternating with bursts of random reads, seed 1) on a 64 MiB cache with Linux 2.6-style
    read-ahead (linux-ondemand), the Cheetah 9LP behind the Deadline scheduler (as the paper's
    simulator, §4.1.1) and no think time. Sizes scale with that cache,
    so the rows compare shapes, not seconds: `relative` is each time over the sweep's best."""
    with tempfile.TemporaryDirectory() as d:
        from bufsim.amp import generate

        trace = generate("dulo-mix", seed=1, out=str(Path(d) / "mix.csv"))
        options = Options(format="csv", device="st39102lw", io_scheduler="deadline", think=0, file_gap="1MiB")
        banks = ["64KiB", "256KiB", "1MiB", "2MiB", "4MiB", "8MiB", "16MiB"]
        evicts = ["4MiB", "8MiB", "16MiB", "32MiB", "48MiB", "56MiB"]
        by_bank = run(
            trace, [f"dulo(bank={b},evict=16MiB)" for b in banks], ["64MiB"], options, prefetches=["linux-ondemand"]
        )
        by_evict = run(
            trace, [f"dulo(bank=2MiB,evict={e})" for e in evicts], ["64MiB"], options, prefetches=["linux-ondemand"]
        )
    rows = []
    for table, sizes, results in (
        ("3: bank size (evict 16MiB)", banks, by_bank),
        ("4: evict size (bank 2MiB)", evicts, by_evict),
    ):
        best = min(r.exec_time_s for r in results)
        for size, r in zip(sizes, results):
            rows.append(
                {
                    "table": table,
                    "size": size,
                    "exec_time_s": round(r.exec_time_s, 1),
                    "relative": round(r.exec_time_s / best, 3),
                    "misses": r.misses,
                }
            )
    return rows


def _dulo_tables34_findings(rows: list[dict]) -> list[Finding]:
    def shape(table: str) -> list[dict]:
        return [r for r in rows if r["table"].startswith(table)]

    bank, evict = shape("3"), shape("4")
    best_bank = min(bank, key=lambda r: r["exec_time_s"])
    interior = best_bank is not bank[0] and best_bank is not bank[-1]
    saturates = abs(evict[-1]["exec_time_s"] - evict[-2]["exec_time_s"]) < 0.02 * evict[-1]["exec_time_s"]
    falls = evict[-1]["exec_time_s"] < evict[0]["exec_time_s"]
    return [
        Finding(
            "Table 3: execution time is lowest at a bank size in the middle of the range",
            "optimum at 4-16 MB of 1-64 MB",
            f"best at {best_bank['size']} of {bank[0]['size']}-{bank[-1]['size']}",
            interior,
        ),
        Finding(
            "Table 4: a larger evicting section lowers execution time",
            "time falls as the section grows",
            f"{evict[0]['exec_time_s']} s at {evict[0]['size']}, {evict[-1]['exec_time_s']} s at {evict[-1]['size']}",
            falls,
        ),
        Finding(
            "Table 4: the gain saturates for large evicting sections",
            "little change beyond 64-128 MB",
            f"last two sizes {evict[-2]['exec_time_s']} s and {evict[-1]['exec_time_s']} s (within 2%: "
            f"{'yes' if saturates else 'no'})",
            saturates,
        ),
    ]


def amp_table1() -> list[dict]:
    """AMP (Zhou, von Behren, Brewer, UCB/CSD-05-1379) §4.1, Table 1: average reference recency
    R̄ and the AMP, PCC and DEAR classifications of the seven synthetic streams (blocks 1..100,
    2000 accesses, seed 1), beside the paper's values and its correct column.

    The streams follow Table 1's descriptions; Figure 5, which drew them, is not in the text,
    so R̄ can differ where a description leaves the construction open (e and f)."""
    from bufsim import _core

    rows = []
    for r in _core.amp_table1(seed=1):
        rows.append(
            {
                "stream": r["stream"],
                "r_bar": round(r["r_bar"], 3),
                "paper_r_bar": r["paper_r_bar"],
                "correct": r["correct"],
                "amp": r["amp"],
                "paper_amp": r["paper_amp"],
                "pcc": r["pcc"],
                "paper_pcc": r["paper_pcc"],
                "dear": r["dear"],
                "paper_dear": r["paper_dear"],
                "description": r["description"],
            }
        )
    return rows


def _amp_table1_findings(rows: list[dict]) -> list[Finding]:
    def wrong(key: str) -> str:
        w = [r["stream"] for r in rows if r[key] != r["correct"]]
        return ", ".join(w) if w else "none"

    # The finding is what the paper's AMP column states, and ours agrees when it gives the same
    # class: where the paper's AMP matched its correct column the claim is "classifies it
    # correctly", where it did not the claim is that misclassification (reproducing the paper's
    # error agrees; being right there differs from the paper).
    findings = [
        Finding(
            f"stream {r['stream']} ({r['correct']}): AMP classifies it "
            + ("correctly" if r["paper_amp"] == r["correct"] else f"wrongly, as {r['paper_amp']}"),
            r["paper_amp"],
            r["amp"],
            r["amp"] == r["paper_amp"],
        )
        for r in rows
    ]
    findings.append(equal("streams PCC classifies wrongly", wrong("paper_pcc"), wrong("pcc")))
    findings.append(equal("streams DEAR classifies wrongly", wrong("paper_dear"), wrong("dear")))
    findings += [
        Finding(
            f"stream {r['stream']}: average reference recency R̄",
            f"{r['paper_r_bar']}",
            f"{r['r_bar']} (within 0.05: {'yes' if abs(r['r_bar'] - r['paper_r_bar']) <= 0.05 else 'no'})",
            abs(r["r_bar"] - r["paper_r_bar"]) <= 0.05,
        )
        for r in rows
    ]
    return findings


# The MQ paper's Table 2 columns (the paper's LFRU is bufsim's LRFU), configured as §5.1 did:
# bufsim.reproduce_mq.MQ51.
MQ_POLICIES = ["OPT", "MQ", "2Q", "FBR", "LRFU", "LRU-2", "LRU", "LFU", "MRU"]

# MQ paper Table 2(a), Oracle Miss Trace-128M: hit ratios in percent, the paper's LFRU as LRFU.
MQ_PAPER_ORACLE = {
    "64MB": [21.6, 14.0, 12.0, 8.4, 10.1, 8.1, 6.1, 5.9, 2.6],
    "128MB": [30.3, 21.7, 20.0, 14.6, 16.3, 14.1, 10.1, 10.8, 3.7],
    "256MB": [41.8, 33.0, 30.0, 24.2, 24.3, 23.5, 17.6, 18.7, 5.8],
    "512MB": [56.1, 47.5, 43.5, 37.8, 39.5, 38.2, 30.9, 31.1, 9.9],
    "1GB": [70.7, 62.1, 62.1, 55.8, 58.8, 57.2, 53.0, 47.6, 17.9],
    "2GB": [82.0, 76.3, 76.8, 75.2, 76.8, 75.8, 74.5, 65.1, 33.7],
}

# Second-level streams: a trace and its first level (the clients' own caches).
MQ_STREAMS = [
    (
        "cloudphysics (through a 16MiB LRU)",
        "cloudphysics",
        dict(policy="lru", cache="16MiB", client="all"),
        ["16MiB", "32MiB", "64MiB", "128MiB", "256MiB", "512MiB"],
    ),
    (
        "multi (a 1MiB LRU per process)",
        "multi",
        dict(policy="lru", cache="1MiB", client="pid"),
        ["1MiB", "2MiB", "4MiB", "8MiB", "16MiB", "32MiB"],
    ),
]


def _mq_trace(name: str, directory: str) -> Path:
    """The bundled real traces: CloudPhysics beside the repository, multi in traces/."""
    root = Path(__file__).resolve().parents[2]
    if name == "cloudphysics":
        path = Path(os.environ.get("BUFSIM_SHARED", root.parent / "shared")) / "traces" / "cloudphysics_vscsi.csv"
    else:
        path = root / "traces" / f"{name}.csv.gz"
    if not path.exists():
        raise FileNotFoundError(f"{path}: the {name} trace is missing; `bufsim reproduce mq` needs the bundled traces")
    return path


def mq_table2() -> list[dict]:
    """MQ paper (Zhou, Philbin, Li, USENIX 2001) §5, Table 2: hit ratios (percent) of OPT, MQ,
    2Q, FBR, LRFU, LRU-2, LRU, LFU and MRU on second-level streams at six cache sizes, beside the
    paper's Oracle Miss Trace-128M column for column (its traces are not public). The policies
    are configured as §5.1 configured them: history buffers 4x the cache for LFU, LRFU (the
    paper's LFRU), LRU-2 and FBR; FBR and LRFU tuned, the best of a grid reported per size (the
    winning spec in `FBR spec` and `LRFU spec`).

    bufsim's streams are real: the CloudPhysics virtual-disk trace through a 16 MiB LRU first level,
    and the collected multi trace (grep and TPC-H on SQLite at once) through a 1 MiB LRU per
    process. Each row is one stream and size; `peak` and `beyond` come from the stream's
    temporal-distance histogram (MQ §3): the hill's peak and the share of re-references at least
    as far apart as the cache holds blocks, which no recency-only policy can turn into hits."""
    from bufsim.analysis import analyze
    from bufsim.hierarchy import FirstLevel, filter_trace
    from bufsim.reproduce_mq import table2

    rows: list[dict] = []
    for size, paper in MQ_PAPER_ORACLE.items():
        rows.append(
            {
                "stream": "paper: Oracle Miss Trace-128M",
                "cache": size,
                **{name: pct for name, pct in zip(MQ_POLICIES, paper)},
                "peak": None,
                "beyond": None,
                "FBR spec": None,
                "LRFU spec": None,
            }
        )
    with tempfile.TemporaryDirectory() as d:
        for label, name, first, sizes in MQ_STREAMS:
            l2 = Path(d) / f"{name}-l2.csv"
            filter_trace(_mq_trace(name, d), l2, FirstLevel(**first))
            t = analyze(l2, working_set=False, contexts=0).temporal_distance
            for r in table2(l2, sizes, Options(format="block-csv", block_size=4096)):
                blocks = r["blocks"]
                beyond = sum(b["count"] for b in t["bins"] if b["distance"] > blocks) / max(t["correlated"], 1)
                rows.append(
                    {
                        "stream": label,
                        "cache": r["cache"],
                        **{n: r[n] for n in MQ_POLICIES},
                        "peak": t["hill"]["peak_distance"] if t["hill"] else None,
                        "beyond": round(beyond, 3),
                        "FBR spec": r["FBR spec"],
                        "LRFU spec": r["LRFU spec"],
                    }
                )
    return rows


def _mq_table2_findings(rows: list[dict]) -> list[Finding]:
    names = MQ_POLICIES
    online = [n for n in names if n != "OPT"]
    findings = []
    for stream in dict.fromkeys(r["stream"] for r in rows if not r["stream"].startswith("paper")):
        ours = [r for r in rows if r["stream"] == stream]
        mean = {n: sum(r[n] for r in ours) / len(ours) for n in online}
        ranking = sorted(online, key=lambda n: -mean[n])
        mq_over_lru = sum(r["MQ"] > r["LRU"] for r in ours)
        findings += [
            Finding(
                f"{stream}: OPT has the highest hit ratio at every size",
                "yes, every column",
                f"{sum(r['OPT'] >= max(r[n] for n in names) for r in ours)} of {len(ours)} sizes",
                all(r["OPT"] >= max(r[n] for n in names) for r in ours),
            ),
            Finding(
                f"{stream}: MQ's hit ratio is above LRU's",
                "at every size",
                f"at {mq_over_lru} of {len(ours)} sizes",
                mq_over_lru == len(ours),
            ),
            Finding(
                f"{stream}: MQ is the best online policy (mean hit ratio over the sizes)",
                "MQ > 2Q > FBR, LFRU, LRU-2 > LRU > LFU > MRU",
                " > ".join(ranking),
                ranking[0] == "MQ",
            ),
            Finding(
                f"{stream}: MRU is the worst policy",
                "yes",
                f"worst: {ranking[-1]}",
                ranking[-1] == "MRU",
            ),
        ]
    return findings


def _storage_aware(quick: bool = False) -> list[dict]:
    from bufsim.reproduce_storage import storage_aware

    return storage_aware(quick)


_storage_aware.__doc__ = """Storage-aware caching (Forney et al., FAST '02) §5, Figures 2 to 8: throughput of no cache,
cost-oblivious and storage-aware policies as one disk of sixteen ages or more disks are two years old, Static
against its partition ratio, performance faults on 1, 4 and 8 disks and Eager LRU's partitions after one, on
Table 1's synthetic traces (--quick: a quarter of Trace 1, the ends of the ranges)."""


@dataclass(frozen=True)
class Reproduction:
    """One `bufsim reproduce NAME`: `rows(quick)` runs it, `findings(rows)` judges each finding
    the paper states; `printer` prints rows that are not one table; `setting` says where the
    paper's setting differs from ours (printed with the findings)."""

    rows: Callable[..., list[dict]]
    findings: Callable[[list[dict]], list[Finding]]
    quick: bool = False
    printer: Callable[[list[dict]], str] | None = None
    setting: str = ""
    # Draws the paper's figures from the rows into a directory (`--out DIR`); returns the files.
    figures: Callable[[list[dict], Path], list[Path]] | None = None

    def __call__(self, quick: bool = False) -> list[dict]:
        return self.rows(quick=True) if quick else self.rows()

    @property
    def description(self) -> str:
        return self.rows.__doc__ or ""


def _pairs_findings(describe: Callable[[dict], str]) -> Callable[[list[dict]], list[Finding]]:
    """Rows that are (bufsim, paper) pairs of one number: each must equal the paper's."""
    return lambda rows: [equal(describe(r), r["paper"], r["bufsim"]) for r in rows]


def _format_storage_aware(rows: list[dict]) -> str:
    from bufsim.reproduce_storage import format_storage_aware

    return format_storage_aware(rows)


def _storage_aware_findings(rows: list[dict]) -> list[Finding]:
    from bufsim.reproduce_storage import storage_aware_findings

    return storage_aware_findings(rows)


def _amp_figures(quick: bool = False) -> list[dict]:
    from bufsim.reproduce_amp import amp_figures

    return amp_figures(quick)


_amp_figures.__doc__ = """AMP (Zhou, von Behren, Brewer, UCB/CSD-05-1379) §4.2-4.3, Figures 6-13: miss rates of AMP, ARC,
LRU, PCC*, DEAR and OPT against cache size on the bundled traces with program contexts (grep, gcc, tpch, multi,
md5grep) and the suite's cscope, glimpse, gcc, tpch, multi1 and randread (no contexts), and AMP's partition sizes
over time on tpch (--quick: three sizes, the suite's first 50k requests)."""


def _mq_tables(quick: bool = False) -> list[dict]:
    from bufsim.reproduce_mq import mq_tables

    return mq_tables(quick)


_mq_tables.__doc__ = """MQ (Zhou, Philbin, Li, USENIX 2001) §3 and §5, Tables 2 and 3 and Figures 2-4 on second-level
streams: pgbench and TPC-H behind PostgreSQL's 16 MB buffer pool (the benchmark phase of the suite's recordings,
relation files, 8 KiB pages) and the ARC paper's OLTP trace through a 16 MB LRU; policies as §5.1 configured them
(--quick: three sizes, each stream's first 300k accesses, two grid points per tuned policy)."""


def _lazy(module: str, name: str) -> Callable:
    """`name` of `module`, imported when called (the reproductions' modules import pandas)."""

    def call(*args, **kwargs):
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return call


REPRODUCTIONS: dict[str, Reproduction] = {
    "prefetch-table1": Reproduction(
        prefetch_table1, _pairs_findings(lambda r: f"{r['policy'].upper()}, read-ahead {r['prefetch']}: {r['measure']}")
    ),
    "amp-table1": Reproduction(
        amp_table1,
        _amp_table1_findings,
        setting="the streams follow Table 1's descriptions; Figure 5, which drew them, is not in the text",
    ),
    "dulo-table1": Reproduction(
        dulo_table1, _pairs_findings(lambda r: f"{r['scheme']}, read-ahead {r['prefetch']}: {r['measure']}")
    ),
    "dulo-tables34": Reproduction(
        dulo_tables34,
        _dulo_tables34_findings,
        setting="the paper's traces are not public: bufsim's dulo-mix workload on a 64 MiB cache, sizes scaled",
    ),
    "storage-aware": Reproduction(
        _storage_aware,
        _storage_aware_findings,
        quick=True,
        printer=_format_storage_aware,
        setting="Table 1's synthetic traces; MB/s come from bufsim's disk model of the paper's IBM 9LZX",
        figures=_lazy("bufsim.reproduce_storage", "draw_storage_aware"),
    ),
    "amp-figures": Reproduction(
        _amp_figures,
        _lazy("bufsim.reproduce_amp", "amp_figures_findings"),
        quick=True,
        printer=_lazy("bufsim.reproduce_amp", "format_amp_figures"),
        setting="the paper's traces are not public: bundled strace recordings with program contexts, and the "
        "workload suite, recorded without call stacks (every context 0)",
        figures=_lazy("bufsim.reproduce_amp", "plot_amp_figures"),
    ),
    "mq-tables": Reproduction(
        _mq_tables,
        _lazy("bufsim.reproduce_mq", "mq_tables_findings"),
        quick=True,
        printer=_lazy("bufsim.reproduce_mq", "format_mq_tables"),
        setting="the paper's traces are not public: PostgreSQL 15 (16 MB shared_buffers) traced at the page cache, "
        "and ARC's OLTP trace filtered through a 16 MB LRU here",
    ),
    "mq": Reproduction(
        mq_table2,
        _mq_table2_findings,
        setting="the paper's traces are not public: real public second-level streams (CloudPhysics, multi)",
    ),
    "prefetch-figures": Reproduction(
        reproduce_prefetch.prefetch_figures,
        reproduce_prefetch.prefetch_figures_findings,
        quick=True,
        setting=reproduce_prefetch.SETTING,
        figures=reproduce_prefetch.draw_prefetch_figures,
    ),
    "dulo-figures": Reproduction(
        reproduce_dulo.dulo_figures,
        reproduce_dulo.dulo_figures_findings,
        quick=True,
        printer=reproduce_dulo.format_dulo_figures,
        setting=reproduce_dulo.SETTING,
        figures=reproduce_dulo.draw_dulo_figures,
    ),
}


def _remove_empty(directories: list[Path]) -> None:
    """Removes the directories `main` made for --out, deepest first, each only if empty."""
    for d in reversed(directories):
        try:
            d.rmdir()
        except OSError:
            return


def main(name: str, json_out: bool = False, quick: bool = False, rows_out: bool = False, out: str | None = None) -> int:
    """Runs one reproduction: the rows, then `finding | paper | bufsim | agrees` for each finding.
    `json_out` prints the findings as one JSON list, `rows_out` the rows as JSON lines; `out`
    draws the figures into that directory (reproductions that have figures)."""
    from bufsim.tables import format_table
    from bufsim._core import SpecError

    if name not in REPRODUCTIONS:
        raise SpecError(f"unknown reproduction `{name}`; known: {', '.join(sorted(REPRODUCTIONS))}")
    reproduction = REPRODUCTIONS[name]
    if quick and not reproduction.quick:
        raise SpecError(f"`{name}` has no reduced version; drop --quick")
    if out is not None and reproduction.figures is None:
        raise SpecError(f"`{name}` draws no figures; drop --out")
    created: list[Path] = []
    staging: Path | None = None
    if out is not None:
        # Made before the runs, which take minutes: a name that cannot be a directory is said now.
        if not str(out).strip():
            raise SpecError(f"--out {out!r}: an empty path; give a directory for the figures")
        if os.path.exists(out) and not os.path.isdir(out):
            raise SpecError(f"{out}: is not a directory; give --out a directory for the figures")
        created = [d for d in [Path(out), *Path(out).parents] if not d.exists()][::-1]
        try:
            Path(out).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            _remove_empty(created)
            raise SpecError(f"{out}: cannot create the directory for --out ({e.strerror or e}); give another") from None
        # The figures are drawn into a directory of their own inside `out` and moved out only
        # once all are drawn, so a failure or Ctrl-C leaves no partial set behind. Making it is
        # also the test that `out` takes files: root passes os.access on /proc and /sys.
        try:
            staging = Path(tempfile.mkdtemp(prefix=".bufsim-figures-", dir=out))
        except OSError:
            _remove_empty(created)
            raise SpecError(f"{out}: cannot write into this directory; give --out one you may write to") from None
    moved: list[Path] = []
    try:
        rows = reproduction(quick=quick)
        findings = reproduction.findings(rows)
        if staging is not None:
            drawn = reproduction.figures(rows, staging)
            for path in drawn:
                moved.append(Path(out) / Path(path).name)
                os.replace(path, moved[-1])
    except BaseException:
        for path in moved:
            path.unlink(missing_ok=True)
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        _remove_empty(created)
        raise
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)
        for path in moved:
            print(f"wrote {path}", file=sys.stderr)
    if json_out:
        print(json.dumps([f.as_dict() for f in findings]))
        return 0
    if rows_out:
        for row in rows:
            print(json.dumps(row))
        return 0
    doc = reproduction.description.split("\n\n")[0]
    print(" ".join(doc.split()))
    print()
    if reproduction.printer:
        print(reproduction.printer(rows))
    else:
        headers = list(rows[0])
        numeric = [any(isinstance(row[h], (int, float)) for row in rows) for h in headers]
        print(format_table(headers, [["-" if row[h] is None else row[h] for h in headers] for row in rows], numeric))
    print()
    if reproduction.setting:
        print(f"setting: {reproduction.setting}")
    print(format_findings(findings))
    return 0
