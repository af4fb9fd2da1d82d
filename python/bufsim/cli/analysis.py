"""`bufsim analyze` and `bufsim mrc`: trace analyses (python/bufsim/analysis.py)."""

from __future__ import annotations

import argparse

from bufsim._core import SpecError
from bufsim.errors import u64
import json

from bufsim import _core
from bufsim.cli.options import option_type


def _seed(args: argparse.Namespace) -> dict:
    """The seed if given: the analyses default to the run options' seed."""
    return {} if args.seed is None else {"seed": args.seed}


def cmd_analyze(args: argparse.Namespace) -> int:
    from bufsim.analysis import analyze, format_analysis
    from bufsim.cli.simulation import warn_if_empty

    if args.policy and args.breakdown is None:
        # Said here in the flags' words; the library says it in its keywords'.
        raise SpecError("--policy is for the breakdown: give its cache size too (--breakdown SIZE)")
    a = analyze(
        args.trace,
        format=args.format,
        block_size=args.block_size,
        reads_only=args.reads_only,
        working_set=not args.no_working_set,
        contexts=args.contexts,
        hill_fraction=args.hill,
        jobs=args.jobs,
        breakdown=args.breakdown,
        policies=args.policy,
        progress=args.progress,
        **_seed(args),
    )
    warn_if_empty(args.trace, a.requests["total"])
    print(json.dumps(a.to_dict()) if args.json else format_analysis(a))
    return 0


def cmd_mrc(args: argparse.Namespace) -> int:
    from bufsim.analysis import check_jobs, format_miniature, format_mrc, miniature_mrc, mrc_report
    from bufsim.cli.simulation import warn_if_empty
    from bufsim.errors import SpecError

    # Checked whichever curve is asked for: the exact LRU one runs no simulation threads, but a
    # negative count is a mistake all the same.
    check_jobs(args.jobs)
    sizes = None
    if args.sizes:
        listed = [s.strip() for group in args.sizes for s in group.split(",") if s.strip()]
        if "all" in listed and listed != ["all"]:
            raise SpecError("--sizes all takes every size already; give it alone, or list sizes without it")
        sizes = "all" if listed == ["all"] else listed
    if args.policy is not None and _core.canonical_policy(args.policy) != "lru":
        if args.shards is not None or args.shards_size is not None or args.no_exact:
            raise SpecError("--shards, --shards-size and --no-exact are for LRU; use --sample RATE with --policy")
        m = miniature_mrc(
            args.trace,
            args.policy,
            sample=1.0 if args.sample is None else args.sample,
            sizes=sizes,
            scale=args.scale,
            format=args.format,
            block_size=args.block_size,
            reads_only=args.reads_only,
            jobs=args.jobs,
            **_seed(args),
        )
        warn_if_empty(args.trace, m["accesses"])
        print(json.dumps(m) if args.json else format_miniature(m))
        return 0
    if args.scale is not None:
        raise SpecError("--scale is for miniature simulation: give --policy SPEC (not lru) and --sample RATE")
    if args.sample is not None:
        if args.shards is not None or args.shards_size is not None:
            raise SpecError("give --sample or --shards/--shards-size, not both")
        # LRU's miniature simulation at rate R is SHARDS at rate R (every size from one stack).
        args.shards = args.sample
    r = mrc_report(
        args.trace,
        sizes=sizes,
        shards=args.shards,
        shards_size=args.shards_size,
        exact=not args.no_exact,
        format=args.format,
        block_size=args.block_size,
        reads_only=args.reads_only,
        progress=args.progress,
        **_seed(args),
    )
    warn_if_empty(args.trace, r["accesses"])
    print(json.dumps(r) if args.json else format_mrc(r))
    return 0


def add_commands(sub) -> None:
    from bufsim.options import FIELDS_BY_NAME

    def trace_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("trace", help="trace file, or - for standard input (formats: see --format)")
        p.add_argument(
            "--format",
            default="auto",
            metavar="F",
            help=f"trace format: auto (detect from content) or one of {', '.join(_core.FORMATS)} (default: auto)",
        )
        p.add_argument(
            "--block-size",
            default="4KiB",
            type=option_type(FIELDS_BY_NAME["block_size"]),
            metavar="SIZE",
            help="cache block size in bytes or with a unit, as `bufsim run --block-size` (default: 4KiB)",
        )
        p.add_argument("--reads-only", action="store_true", help="drop write requests, as `bufsim run --reads-only`")
        p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")

    an = sub.add_parser(
        "analyze",
        help="characterize a trace: counts, sizes, locality, frequency, working set",
        description="Characterize TRACE as bufsim simulates it (the same block accesses): request "
        "and block counts, footprint, read/write mix, request sizes, fraction of consecutive "
        "references and working-set size (prefetching paper §6.1), temporal distance histogram "
        "with minDist/maxDist and frequency distribution (MQ paper §3), inter-reference gap CDF "
        "per program context (AMP Figure 2). See docs/analysis.md.",
    )
    trace_options(an)
    an.add_argument(
        "--no-working-set",
        action="store_true",
        help="skip the working-set search (it runs OPT about log2(footprint) times) and stream the trace",
    )
    an.add_argument(
        "--contexts",
        type=int,
        default=8,
        metavar="N",
        help="program contexts shown in the gap table, the busiest first (default: 8)",
    )
    an.add_argument(
        "--hill",
        type=float,
        default=0.1,
        metavar="FRACTION",
        help="a temporal-distance bin is in the hill while it holds at least this share of the peak (default: 0.1)",
    )
    an.add_argument("--jobs", "-j", type=int, default=0, help="threads for the OPT runs (default: all cores)")
    an.add_argument(
        "--breakdown",
        metavar="SIZE",
        help="add the MQ paper's Table 3: each policy's hits and misses for re-references closer "
        "than SIZE and farther, at a cache of SIZE",
    )
    an.add_argument(
        "--policy",
        "-p",
        action="append",
        metavar="SPEC",
        help="policy of the breakdown; repeat for several (default: those of the paper's Table 3 "
        "that bufsim has, and opt)",
    )
    an.add_argument(
        "--seed", type=u64, help="seed of the breakdown's random policies (default: the run seed, as `bufsim run`)"
    )
    an.set_defaults(func=cmd_analyze)

    mr = sub.add_parser(
        "mrc",
        help="LRU miss ratio curve in one pass (exact, and SHARDS sampling)",
        description="The LRU miss ratio curve of TRACE from one pass: exact by stack distance "
        "(Mattson; equal to `bufsim run --policy lru` at every size) and, with --shards or "
        "--shards-size, its SHARDS estimate by spatial sampling with its error against the exact "
        "curve. See docs/analysis.md.",
    )
    trace_options(mr)
    mr.add_argument(
        "--sizes",
        action="append",
        metavar="SIZES",
        help="cache sizes, comma-separated or repeated (64MiB,2000blocks), or `all` for every size "
        "(default: 1 block, then four sizes per doubling up to the footprint)",
    )
    mr.add_argument(
        "--shards", type=float, metavar="RATE", help="also estimate by SHARDS at this sampling rate, e.g. 0.01"
    )
    mr.add_argument(
        "--shards-size",
        type=int,
        metavar="BLOCKS",
        help="also estimate by fixed-size SHARDS keeping at most this many sampled blocks, e.g. 8192",
    )
    mr.add_argument("--no-exact", action="store_true", help="SHARDS only (no exact curve, so no error report)")
    mr.add_argument(
        "--policy",
        metavar="SPEC",
        help="curve of this policy (default lru: the exact one-pass curve); any other policy is simulated "
        "at every size, or by miniature simulation with --sample",
    )
    mr.add_argument(
        "--sample",
        type=float,
        metavar="RATE",
        help="with --policy: simulate each size S on a spatial sample of about RATE of the blocks, at S "
        "times the sample's share of the blocks (miniature simulation, e.g. 0.01); with LRU, the same as "
        "--shards RATE",
    )
    mr.add_argument(
        "--scale",
        metavar="HOW",
        help="with --sample: `share` (default) scales each size by the sample's measured share of the blocks "
        "and weighs its misses by the blocks' access counts; `rate` is the paper's rule (the nominal rate, "
        "SHARDS-adj)",
    )
    mr.add_argument("--jobs", "-j", type=int, default=0, help="threads for the simulations (default: all cores)")
    mr.add_argument(
        "--seed", type=u64, help="seed of the SHARDS sampling hash (default: the run seed, as `bufsim run`)"
    )
    mr.set_defaults(func=cmd_mrc)
