#!/usr/bin/env python3
"""libCacheSim's trace analyzer as an oracle for bufsim's analyses, on a block trace expanded to
4 KiB blocks exactly as bufsim's engine does (see libcachesim_oracle.py).

It reports two things bufsim also computes:
- popularity: how many blocks are accessed exactly f times (bufsim: frequency distribution);
- reuse in virtual time, bucketed by floor(ln(d) / ln(1.5)): d is the number of requests since
  the previous request to the same object, the MQ paper's temporal distance (bufsim: temporal
  distances), with first references in bucket -1.

    python3 scripts/libcachesim_analysis_oracle.py                       # print the JSON
    python3 scripts/libcachesim_analysis_oracle.py --write-golden tests/golden/analysis_libcachesim_cloudphysics.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("libcachesim_oracle", HERE / "libcachesim_oracle.py")
oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oracle)


def parse_sections(path: str) -> list[dict[int, int]]:
    """`key:value` lines of a libCacheSim analyzer output file, one dict per `#` header."""
    sections: list[dict[int, int]] = []
    for line in open(path):
        line = line.strip()
        if line.startswith("#"):
            if "freq" in line:
                sections.append({})
            continue
        if line and sections:
            k, v = line.split(":")
            sections[-1][int(k)] = int(v)
    return sections


def analyze_oracle_file(path: str, n: int) -> dict:
    import libcachesim as lcs

    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
    off = {
        name: False
        for name in (
            "req_rate",
            "access_pattern",
            "size",
            "lifetime",
            "popularity_decay",
            "ttl",
            "prob_at_age",
            "size_change",
        )
    }
    option = lcs.AnalysisOption(reuse=True, popularity=True, **off)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        cwd = os.getcwd()
        os.chdir(d)  # the analyzer also writes a `stat` file into the working directory
        try:
            lcs.TraceAnalyzer(reader, out, analysis_option=option).run()
        finally:
            os.chdir(cwd)
        popularity = parse_sections(out + ".popularity")[0]
        reuse_vtime = parse_sections(out + ".reuse")[1]
    return {
        "accesses": n,
        "popularity": {str(f): c for f, c in sorted(popularity.items())},
        "reuse_vtime_log1.5": {str(b): c for b, c in sorted(reuse_vtime.items())},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", type=Path, default=oracle.DEFAULT_TRACE)
    ap.add_argument("--write-golden", type=Path, help="write the JSON here instead of printing it")
    args = ap.parse_args(argv)
    blocks = oracle.expand_cloudphysics(args.trace)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.oracleGeneral")
        oracle.write_oracle(blocks, path)
        result = analyze_oracle_file(path, len(blocks))
    text = json.dumps(result, indent=1) + "\n"
    if args.write_golden:
        args.write_golden.write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
