"""The workload suite recorded with ``bufsim collect --tracer kernel``: the papers' applications
(prefetching paper Table 4, DULO Table 2, AMP Table 2: cscope, glimpse, gcc, TPC-H, multi-program
mixes; the MQ paper's database server behind a storage cache; a random-access application) run on
this machine's kernel. ``scripts/record_workloads.py`` records them (``make workloads``) and writes
``traces/kernel/workloads.json``; ``bufsim workloads`` lists what that manifest holds.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Optional

#: The suite, in recording order: name -> what runs (the recorder's commands say exactly).
SUITE = {
    "cscope": "cscope -b builds a cross-reference of the Linux 6.1 sources (fs kernel mm include ipc block), "
    "then 64 `cscope -d -L -0 SYMBOL` queries each scan the 70 MB database (a loop)",
    "glimpse": "glimpseindex indexes the same sources, then 48 `glimpse -w WORD` searches read the "
    "index and the files it points to",
    "gcc": "a Linux 6.1 kernel build (x86_64 defconfig, `make prepare` done beforehand): make -j2 init/ kernel/ "
    "mm/ block/ ipc/",
    "tpch": "TPC-H on PostgreSQL 15 (shared_buffers 16MB, scale factor 0.3 from tpchgen-cli): load with COPY, "
    "index, analyze, then the 22 queries",
    "tpch-mysql": "TPC-H on MariaDB 10.11 with MyISAM tables (the engine of the prefetching paper's MySQL: rows read "
    "through the page cache one record at a time; 8 MB key cache), scale factor 0.05 from tpchgen-cli (60 MB), loaded and "
    "indexed beforehand: the 22 queries",
    "pgbench": "pgbench on PostgreSQL 15 (shared_buffers 16MB, its own buffer pool as the first-level cache): "
    "initialise scale 20, then 20,000 TPC-B-like transactions from 4 clients",
    "randread": "SQLite (1 MiB page cache, no mmap): build a 1.5M-row table and its index, then 100,000 "
    "point queries on random keys",
    "unxz": "xz -dc decompresses a few large archives, reading each whole in 8 KiB chunks while the CPU works "
    "(the papers' viewperf: large files read sequentially, CPU-bound): the Linux 6.1 source tarball and the eight "
    "TPC-H tables (scale 0.3, compressed with xz -1 beforehand) once, then the six smaller tables twice more",
    "multi1": "cscope and a kernel build (tinyconfig, make -j2 vmlinux) at the same time",
    "multi2": "glimpse and tpch at the same time",
    "multi3": "cscope, glimpse, a kernel build (tinyconfig, make -j2 vmlinux) and randread at the same time, "
    "stopped after 240 s",
    "multi4": "glimpse and tpch-mysql at the same time (an index server beside a database answering TPC-H record "
    "by record: the DULO paper's multi2 and the prefetching paper's multi3)",
    "multi5": "cscope, a kernel build (tinyconfig, make -j2 vmlinux) and unxz at the same time (code development "
    "beside a CPU-bound reader of large files: the prefetching paper's multi2 and the DULO paper's multi1, cscope + "
    "gcc + viewperf)",
}

DEFAULT_DIR = Path(__file__).resolve().parent.parent.parent / "traces" / "kernel"
MANIFEST = "workloads.json"


def load_manifest(directory: Optional[str] = None) -> list[dict]:
    """The recorded workloads (one dict each), in suite order; a workload not recorded yet is listed
    with ``path`` None."""
    d = Path(directory) if directory else DEFAULT_DIR
    entries: dict[str, dict] = {}
    mf = d / MANIFEST
    if mf.exists():
        for e in _read_manifest(mf):
            e = dict(e)
            e["path"] = str(d / e["path"]) if e.get("path") else None
            entries[e["name"]] = e
    out = []
    for name, what in SUITE.items():
        e = entries.get(name) or {"name": name, "path": None}
        e.setdefault("description", what)
        out.append(e)
    return out


#: What every recorded workload of a manifest has, and of what type.
_RECORDED = {"requests": int, "block_accesses": int, "footprint_blocks": int}


def _read_manifest(mf: Path) -> list[dict]:
    """The entries of a manifest, each checked to have what :func:`format_table` shows;
    SpecError naming the file and the entry otherwise."""
    from bufsim._core import SpecError
    from bufsim.errors import not_utf8

    again = "record the suite again (`make workloads`) or give --dir another directory"
    try:
        data = json.loads(mf.read_text(encoding="utf-8"))
    except IsADirectoryError:
        raise SpecError(f"{mf}: is a directory, not the suite's manifest; {again}") from None
    except UnicodeDecodeError as e:
        raise SpecError(f"{mf}: not the suite's manifest ({not_utf8(e)}); {again}") from None
    except ValueError as e:
        raise SpecError(f"{mf}: not valid JSON ({e}); {again}") from None
    if not isinstance(data, list):
        raise SpecError(f"{mf}: not the suite's manifest (a JSON list of workloads); {again}")
    for i, e in enumerate(data, 1):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            raise SpecError(f"{mf}: workload {i} is not an object with a `name`; {again}")
        if e.get("path") is not None and not isinstance(e["path"], str):
            raise SpecError(f"{mf}: workload {e['name']}: `path` must be a file name; {again}")
        if e.get("path"):
            for key, kind in _RECORDED.items():
                v = e.get(key)
                if isinstance(v, bool) or not isinstance(v, kind) or v < 0:
                    raise SpecError(
                        f"{mf}: workload {e['name']}: `{key}` must be a whole number of 0 or more, not "
                        f"{json.dumps(v)}; {again}"
                    )
            traced = e.get("traced_s", 0)
            # json.loads takes NaN and Infinity, which no recorder writes.
            if isinstance(traced, bool) or not isinstance(traced, (int, float)) or not 0 <= traced < math.inf:
                raise SpecError(
                    f"{mf}: workload {e['name']}: `traced_s` must be a number of seconds of 0 or more, not "
                    f"{json.dumps(traced)}; {again}"
                )
        for key in ("kernel", "description"):
            if e.get(key) is not None and not isinstance(e[key], str):
                raise SpecError(f"{mf}: workload {e['name']}: `{key}` must be text; {again}")
    return data


def missing_traces(entries: list[dict]) -> list[dict]:
    """The workloads the manifest lists as recorded whose trace file is not there."""
    return [e for e in entries if e.get("path") and not os.path.exists(e["path"])]


def missing_note(missing: list[dict]) -> str:
    """The one line that says which recorded traces are missing and how to record them again."""
    names = " ".join(e["name"] for e in missing)
    where = ", ".join(f"{e['name']} ({os.path.relpath(e['path'])})" for e in missing)
    return (
        f"the manifest lists {len(missing)} recorded workload{'s' if len(missing) > 1 else ''} whose trace is "
        f"missing: {where}; record {'them' if len(missing) > 1 else 'it'} again with "
        f"`.venv/bin/python scripts/record_workloads.py --only {names}` (`make kernel-workloads` records the "
        "whole suite)"
    )


def format_table(entries: list[dict]) -> str:
    rows = [("name", "requests", "block accesses", "footprint", "traced s", "path")]
    for e in entries:
        if e.get("path") and not os.path.exists(e["path"]):
            rows.append((e["name"], "-", "-", "-", "-", f"missing: {os.path.relpath(e['path'])}"))
        elif e.get("path"):
            fp = e["footprint_blocks"] * 4096 / (1 << 20)
            rows.append(
                (
                    e["name"],
                    f"{e['requests']:,}",
                    f"{e['block_accesses']:,}",
                    f"{fp:,.0f} MiB",
                    f"{e.get('traced_s', 0):.0f}",
                    os.path.relpath(e["path"]),
                )
            )
        else:
            rows.append((e["name"], "-", "-", "-", "-", "not recorded (make workloads)"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.rjust(w) if 0 < i < 5 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if any(e.get("path") for e in entries):
        first = next(e for e in entries if e.get("path"))
        lines.append(f"kernel: {first.get('kernel', '?')}; commands and package versions: bufsim workloads --json")
    return "\n".join(lines)
