"""`bufsim filter-trace`, `bufsim convert` and `bufsim collect`: traces in and out."""

from __future__ import annotations

import argparse
import json
import os
import sys

from bufsim import _core
from bufsim.errors import check_not_input, say
from bufsim.cli.options import add_first_level_options, add_options, first_level_of, options_of
from bufsim.tables import format_table, human_bytes


def cmd_filter_trace(args: argparse.Namespace) -> int:
    from bufsim.hierarchy import filter_trace

    # The output is opened (and truncated) before the trace is read: writing over the trace
    # itself, by any name (a symlink, a hard link), would destroy it.
    if args.trace != "-":
        check_not_input(args.out, args.trace, "the input trace", "-o")
    df = filter_trace(args.trace, args.out, first_level_of(args), **options_of(args).replace(first_level=None))
    if args.json:
        for row in df.to_dict("records"):
            print(json.dumps({k: int(v) for k, v in row.items()}))
        return 0
    headers = ["client", "l1 blocks", "accesses", "hits", "misses", "write-backs", "hit ratio"]
    rows = [
        [
            r.client,
            r.cache_blocks,
            r.accesses,
            r.hits,
            r.misses,
            r.write_backs,
            f"{r.hits / r.accesses:.4f}" if r.accesses else "-",
        ]
        for r in df.itertuples()
    ]
    print(format_table(headers, rows, [True] * len(headers)))
    print(
        f"\n{df.attrs['requests_written']} second-level requests ({int(df.misses.sum() + df.write_backs.sum())} "
        f"blocks) written to {args.out}"
    )
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    import warnings

    from bufsim.cli.simulation import warn_if_empty, warn_skipped
    from bufsim.formats import convert, drops_note

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reported below, once
        c = convert(
            args.trace,
            args.out,
            format=args.format,
            skip_bad=args.skip_bad,
            progress=args.progress,
            to=args.to,
            block_size=args.block_size,
            reads_only=args.reads_only,
        )
    warn_skipped(args.trace, c.skipped)
    warn_if_empty(args.trace, c.requests, then=f"{args.out} holds none")
    if c.drops_left_out or c.hints_left_out:
        say("warning", drops_note(args.trace, c.drops_left_out, c.hints_left_out))
    if args.json:
        print(json.dumps(c.to_dict()))
    else:
        names = f", {c.names} names" if c.names else ""
        print(f"{c.requests} requests ({c.format}{names}) written to {args.out} ({human_bytes(c.bytes)})")
    return 0


def cmd_collect(args: argparse.Namespace) -> int:
    from bufsim.collect import CollectError, collect, collect_from_log

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    options = dict(
        stack_depth=args.stack_depth,
        reads_only=args.reads_only,
        include=args.include or [],
        exclude=args.exclude or [],
        no_libs=args.no_libs,
    )
    # CollectErrors are BufsimErrors: the command line prints them and exits with their status.
    if args.from_strace:
        if command:
            raise CollectError("give either --from-strace LOG or a command to run, not both")
        # Refused before the output is opened: reading a directory fails only after the
        # output file has been started.
        if os.path.isdir(args.from_strace):
            raise CollectError(
                f"{args.from_strace}: is a directory; --from-strace takes a strace output file, "
                "the log `strace -f -y -ttt -T [-k] -o LOG COMMAND` writes"
            )
        result = collect_from_log(args.from_strace, args.output, **options)
    elif args.tracer == "kernel":
        from bufsim.ktrace import collect_kernel

        if args.keep_strace:
            raise CollectError("--keep-strace goes with --tracer strace, not --tracer kernel")
        result = collect_kernel(command, args.output, stacks=not args.no_stacks, timeout=args.timeout, **options)
    else:
        if args.timeout is not None:
            raise CollectError("--timeout goes with --tracer kernel")
        result = collect(command, args.output, stacks=not args.no_stacks, keep_strace=args.keep_strace, **options)
    print(result.summary(), file=sys.stderr)
    return result.exit_status


def add_filter_and_convert(sub) -> None:
    flt = sub.add_parser(
        "filter-trace",
        help="write the second-level stream a trace makes through first-level caches",
        description="Pass TRACE through first-level client caches (MQ paper) and write their misses "
        "(and, with --write-back, write-backs) in order as a device-addressed block-csv trace, the "
        "stream a shared second-level cache sees.",
    )
    flt.add_argument("trace", help="trace file")
    flt.add_argument("--out", "-o", required=True, metavar="OUT.csv", help="where to write the second-level trace")
    add_options(flt, ["trace"], only=["format", "block_size", "reads_only"])
    add_options(flt, ["run"], only=["seed"])
    add_first_level_options(flt, required=True)
    flt.add_argument("--json", action="store_true", help="print one JSON object per client")
    flt.set_defaults(func=cmd_filter_trace)

    cv = sub.add_parser(
        "convert",
        help="convert a trace into bufsim's binary format (.bst) or libCacheSim's (oracleGeneral, csv)",
        description="Read TRACE in any format bufsim reads (gzip or zstd compressed or not) and write "
        "it as a .bst file: fixed-size records with only the columns the trace has, read in large sequential reads; "
        "or, with --to, as libCacheSim's oracleGeneral or csv, one record per block access (the stream "
        "bufsim simulates), to cross-check bufsim with libCacheSim; --block-size and --reads-only shape that "
        "stream and are refused for .bst, which keeps every request as the trace has it. "
        "The output appears only if the whole trace was read.",
    )
    cv.add_argument("trace", help="trace file, or - for standard input (formats: see --format)")
    cv.add_argument("--out", "-o", required=True, metavar="OUT", help="where to write the converted trace")
    cv.add_argument(
        "--to",
        default="auto",
        choices=["auto", "bst", "oracle", "lcs-csv"],
        help="output format: bst (bufsim's binary), oracle (libCacheSim's oracleGeneral, with next-access "
        "times; needs a file, not a pipe) or lcs-csv (libCacheSim's csv); the last two write one record per "
        "block access (default: auto, oracle for a name ending in .oracleGeneral, else bst)",
    )
    add_options(cv, ["trace"], only=["block_size", "reads_only"])
    cv.add_argument(
        "--format",
        default="auto",
        metavar="F",
        help=f"input format: auto (detect from content) or one of {', '.join(_core.FORMATS)}; "
        "blkparse(event=C) or (event=D) takes completions or dispatches (default: auto)",
    )
    cv.add_argument(
        "--skip-bad",
        action="store_true",
        help="count and leave out malformed records (reported on stderr) instead of stopping",
    )
    cv.add_argument("--json", action="store_true", help="print what was written as one JSON object")
    cv.set_defaults(func=cmd_convert)


def _frames(text: str) -> int:
    """An argparse type for --stack-depth: 0 (the whole stack) or a number of frames."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"give 0 (the whole stack) or a positive number of frames, not {text!r}")
    return n


def add_collect(sub) -> None:
    col = sub.add_parser(
        "collect",
        help="run a command under strace and record its file I/O as a trace with program contexts",
        usage="bufsim collect -o TRACE [options] -- COMMAND [ARGS...]",
        description="Run COMMAND (and every process and thread it starts) under `strace -f -k -y -ttt -T` "
        "and write its reads and writes of regular files as bufsim interchange CSV: time_us, dur_us, pid, "
        "ctx (a hash of the call stack, AMP's program context), op, file (DEV:INO:PATH), offset, size. "
        "Needs strace (Debian/Ubuntu: apt-get install strace). With --tracer kernel (root, tracefs) the "
        "kernel's tracepoints record the same columns with true timing, and TRACE.pagecache.csv gets the page "
        "cache's own lookups, insertions, evictions, read-ahead and disk requests. See docs/collect.md.",
        epilog="Exit status: the command's own; 128+N if a signal N killed it; 127 if it was not found, "
        "126 if it is not executable; 2 for bufsim's own errors (bad options, strace missing). The trace "
        "written so far stays valid whatever stops the command.",
    )
    col.add_argument("--output", "-o", required=True, metavar="TRACE", help="CSV trace to write")
    col.add_argument(
        "--stack-depth",
        type=_frames,
        default=0,
        metavar="N",
        help="frames hashed into the program context, innermost first, after skipping the C "
        "library, loader and vDSO (default: 0, the whole stack, as AMP does)",
    )
    col.add_argument(
        "--no-stacks", action="store_true", help="trace without -k (about 10x faster); every ctx is then 0"
    )
    col.add_argument("--reads-only", action="store_true", help="record reads only")
    col.add_argument(
        "--include", action="append", metavar="DIR", help="record only files under DIR (symlinks resolved); repeatable"
    )
    col.add_argument(
        "--exclude",
        action="append",
        metavar="PATTERN",
        help="skip files under a directory, or matching a glob such as '*.so*'; repeatable",
    )
    from bufsim.collect_paths import NO_LIBS_PATTERNS

    col.add_argument(
        "--no-libs",
        action="store_true",
        help="skip the loader's and libraries' reads and pseudo-files: " + ", ".join(NO_LIBS_PATTERNS),
    )
    col.add_argument(
        "--tracer",
        choices=("strace", "kernel"),
        default="strace",
        help="strace (default: whole user call stacks) or kernel (tracefs tracepoints, root only: "
        "true timing, about 1/5 of strace's slowdown or less, and the page cache's own hits, "
        "insertions, evictions, read-ahead and disk requests in TRACE.pagecache.csv)",
    )
    col.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="with --tracer kernel: kill the command after SECONDS; the trace stays valid",
    )
    col.add_argument("--keep-strace", metavar="FILE", help="also save strace's raw output to FILE")
    col.add_argument(
        "--from-strace",
        metavar="LOG",
        help="convert a saved `strace -f [-k] -y -ttt -T` log instead of running a command",
    )
    col.add_argument("command", nargs=argparse.REMAINDER, help="the command to trace, after --")
    col.set_defaults(func=cmd_collect)
