"""`bufsim generate`, `bufsim timeline` and `bufsim detect`: AMP's and storage-aware caching's tools."""

from __future__ import annotations

import argparse
import json
import os
import sys

from bufsim import _core
from bufsim._core import SpecError
from bufsim.cli.options import add_options, options_of
from bufsim.cli.simulation import warn_if_empty
from bufsim.errors import u64, writing


def cmd_generate(args: argparse.Namespace) -> int:
    from bufsim.amp import generate, generators

    if args.list:
        if args.spec or args.out:
            raise SpecError("--list lists the generators and writes no trace; give it without a spec or --out")
        for g in generators():
            print(f"{g['name']}: {g['summary']}")
            print(f"    source: {g['paper']}")
            for name, default, doc in g["params"]:
                print(f"    {name}={default}  {doc}")
        return 0
    if not args.spec:
        raise SpecError(
            "give the generator spec, e.g. bufsim generate amp-mix --seed 1 -o mix.csv "
            "(`bufsim generate --list` lists the generators)"
        )
    path = generate(args.spec, seed=args.seed, out=args.out)
    print(f"wrote {path}")
    return 0


def requests_in(trace: str, options) -> int | None:
    """The requests of a trace that gave no rows, to tell an empty trace from one without what a
    command looks for; ``None`` for a stream, which cannot be read again."""
    if not os.path.isfile(trace):
        return None
    resolved = options.resolved()
    return len(_core.Trace(trace, format=resolved["format"], skip_bad=bool(resolved.get("skip_bad"))))


def cmd_timeline(args: argparse.Namespace) -> int:
    from bufsim.amp import partition_timeline, plot_partition_timeline
    from bufsim.errors import check_not_input, check_output
    from bufsim.options import OPTION_FIELDS
    from bufsim.plots import check_figure_path

    # Output names are checked before the simulation, not after it; an empty one is refused,
    # not taken for no option.
    if args.plot is not None:
        check_figure_path(args.plot, "--plot")
        check_not_input(args.plot, args.trace, "the input trace", "--plot")
    if args.csv is not None:
        check_output(args.csv, "--csv")
        check_not_input(args.csv, args.trace, "the input trace", "--csv")
        check_not_input(args.csv, args.plot, "also the --plot figure", "--csv")
    options = options_of(args)
    storage = [f.name for f in OPTION_FIELDS if f.section == "storage"]
    timed_or_storage = options.resolved()["timing"] or any(k in options for k in storage)
    if timed_or_storage:
        # Storage-aware caching (Figure 8, left): sizes and wait times over simulated time.
        from bufsim.storage import partition_timeline as timed_timeline, plot_partition_timeline as plot_timed

        df = timed_timeline(args.trace, args.policy, args.cache, **options)
        if args.plot:
            import re

            faulty = sorted(
                {f"dev{m.group(1)}" for f in options.get("faults") or [] for m in [re.search(r"device=(\d+)", f)] if m}
            )
            plot_timed(df, args.plot, title=f"{args.policy}, cache {args.cache}", highlight=faulty or None)
            print(f"wrote {args.plot}")
    else:
        df = partition_timeline(args.trace, args.policy, args.cache, **options)
        if args.plot:
            plot_partition_timeline(df, args.plot, title=f"{args.policy}, cache {args.cache}")
            print(f"wrote {args.plot}")
    if df.empty:
        warn_if_empty(args.trace, requests_in(args.trace, options), then="no partition to show")
    if args.csv:
        with writing(args.csv):
            df.to_csv(args.csv, index=False)
        print(f"wrote {args.csv}")
    if not args.plot and not args.csv:
        df.to_csv(sys.stdout, index=False)
    return 0


def cmd_detect(args: argparse.Namespace) -> int:
    from bufsim.amp import detect

    options = options_of(args)
    df = detect(args.trace, args.detector, **options)
    if df.empty:
        warn_if_empty(args.trace, requests_in(args.trace, options), then="no context to classify")
    if args.json:
        for row in df.to_dict("records"):
            print(json.dumps({k: (None if v != v else v) for k, v in row.items()}))
        return 0
    if df.empty:
        print("no program contexts in this trace (its ctx column is 0 or missing)")
        return 0
    print(df.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0


def add_commands(sub) -> None:
    gen = sub.add_parser(
        "generate",
        help="write a synthetic trace (AMP's Table 1 streams, looping/clustered mixes)",
        description="Write the synthetic trace SPEC, generated from --seed, as interchange CSV "
        "with a ctx column. `bufsim generate --list` lists the generators and their parameters.",
    )
    gen.add_argument("spec", nargs="?", help="generator spec such as amp-c or amp-mix(loop1=2000,loop1-share=0.4)")
    gen.add_argument("--seed", type=u64, default=1, help="seed of the generator (default: 1)")
    gen.add_argument("--out", "-o", metavar="FILE", help="output CSV (default: NAME-SEED.csv)")
    gen.add_argument("--list", action="store_true", help="list the generators")
    gen.set_defaults(func=cmd_generate)

    tl = sub.add_parser(
        "timeline",
        help="partition sizes over time (AMP Figure 13; storage-aware Figure 8)",
        description="Run one partitioned policy over TRACE and print its partition sizes over "
        "virtual time as CSV (time,partition,ctx,blocks), or plot them as stacked areas. With timing "
        "or storage options (storage-aware policies), the rows are time_s,partition,target,blocks,"
        "wait_ms over simulated time (time in demand accesses with --array alone, which runs count "
        "mode), one sample per repartitioning epoch, and the plot draws sizes and per-device wait "
        "times.",
    )
    tl.add_argument("trace", help="trace file")
    tl.add_argument(
        "--policy",
        "-p",
        default="amp",
        metavar="SPEC",
        help="amp, pcc, dear, static, eager-lru, lazy-lru or lazy-clock spec (default: amp)",
    )
    tl.add_argument("--cache", "-c", default="64MiB", metavar="SIZE", help="cache size (default: 64MiB)")
    add_options(tl, ["trace", "run", "timing", "layout", "storage"])
    tl.add_argument("--csv", metavar="FILE", help="write the rows to FILE instead of standard output")
    tl.add_argument(
        "--plot",
        metavar="PNG",
        help="draw the timeline into PNG: stacked areas (AMP), or partition "
        "sizes above per-device wait times (storage-aware, faulty devices drawn thick)",
    )
    tl.set_defaults(func=cmd_timeline)

    det = sub.add_parser(
        "detect",
        help="classify each program context of a trace (loop, one-shot, other)",
        description="Run an access-pattern detector over the program contexts (ctx column) of "
        "TRACE, one detection over the whole trace, and print each context's pattern, R̄ "
        "and loop estimates.",
    )
    det.add_argument("trace", help="trace file")
    det.add_argument(
        "--detector",
        "-d",
        default="amp",
        metavar="SPEC",
        help="amp, pcc or dear with their parameters, e.g. amp(threshold=0.3) (default: amp)",
    )
    add_options(det, ["trace"], only=["format", "block_size", "reads_only"])
    det.add_argument("--json", action="store_true", help="one JSON object per context")
    det.set_defaults(func=cmd_detect)
