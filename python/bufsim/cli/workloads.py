"""`bufsim workloads`: the recorded workload suite."""

from __future__ import annotations

import json
import os

from bufsim._core import SpecError

from bufsim.errors import say
from bufsim.workloads import DEFAULT_DIR, format_table, load_manifest, missing_note, missing_traces


def cmd_workloads(args) -> int:
    if args.dir is not None and not os.path.isdir(args.dir):
        # Listed from a directory that is not there, every workload would look "not recorded".
        what = "is not a directory" if os.path.exists(args.dir) else "no such directory"
        raise SpecError(f"{args.dir}: {what}; give --dir the directory `make workloads` recorded into")
    entries = load_manifest(args.dir)
    if args.json:
        print(json.dumps(entries, indent=1))
    else:
        print(format_table(entries))
    missing = missing_traces(entries)
    if missing:
        say("warning", missing_note(missing))
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser(
        "workloads",
        help="list the recorded workload suite (cscope, glimpse, gcc, tpch, ...)",
        description="List the workloads recorded with `bufsim collect --tracer kernel` by "
        "`make workloads`: name, command, package versions, kernel, requests, block accesses, "
        "footprint and the trace's path (each readable by bufsim run).",
    )
    p.add_argument("--json", action="store_true", help="one JSON list with every field")
    p.add_argument("--dir", metavar="DIR", help=f"where the suite lives (default: {DEFAULT_DIR})")
    p.set_defaults(func=cmd_workloads)
