"""`bufsim plot`, `bufsim report` and `bufsim reproduce`: figures, pages and the papers' numbers."""

from __future__ import annotations

import argparse
import sys

from bufsim import _core
from bufsim._core import SpecError
from bufsim.errors import check_not_input, check_output, u64, writing


# Runs of several bufsim versions are drawn apart, each labelled with its version.
VERSION_HELP = (
    "only runs of this bufsim version (column bufsim_version); repeatable (default: all, each version drawn apart)"
)


def cmd_plot(args: argparse.Namespace) -> int:
    from bufsim import plots

    check_not_input(args.out, args.source, "the results file to plot", "--out")
    df = plots.load(args.source)
    # Checked before the figure is drawn, which can take long (the source's own errors first).
    plots.check_figure_path(args.out)
    caches = (
        []
        if not args.cache
        else [
            _core.size_to_blocks(c, int(df["block_size"].iloc[0]) if "block_size" in df.columns and len(df) else 4096)
            for c in args.cache
        ]
    )
    df = plots.select(
        df,
        traces=args.trace or [],
        policies=args.policy or [],
        prefetches=args.prefetch or [],
        caches=caches,
        versions=args.bufsim_version or [],
    )
    kw = {"stacked": not args.lines} if args.kind == "partitions" else {}
    result = plots.KINDS[args.kind](df, args.out, title=args.title, **kw)
    if result.out is None:
        raise SpecError(f"{args.source}: nothing to plot for `{args.kind}` ({'; '.join(result.notes)})")
    for note in result.notes:
        print(f"bufsim: note: {note}", file=sys.stderr)
    print(f"wrote {result.out}")
    return 0


def cmd_heatmap(args: argparse.Namespace) -> int:
    from bufsim import plots
    from bufsim.cli.options import options_of
    from bufsim.heatmap import hit_ratio_over_time

    # Checked before the runs, which can take long.
    plots.check_figure_path(args.out)
    check_not_input(args.out, args.trace, "the input trace", "--out")
    if args.csv is not None:  # an empty name is refused, not taken for no option
        check_output(args.csv, "--csv")
        check_not_input(args.csv, args.trace, "the input trace", "--csv")
        check_not_input(args.csv, args.out, "also the --out figure", "--csv")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an empty trace is said below, once
        df = hit_ratio_over_time(
            args.trace,
            policy=args.policy,
            caches=args.cache,
            windows=args.windows,
            seed=args.seed,
            progress=args.progress,
            **options_of(args),
        )
    from bufsim.cli.simulation import EMPTY_TRACE

    if df.attrs["requests"] == 0:
        raise SpecError(f"{args.trace}: {EMPTY_TRACE}; there is no heatmap to draw, {args.out} not written")
    if args.csv:
        with writing(args.csv):
            df.to_csv(args.csv, index=False)
    result = plots.heatmap(df, args.out, title=args.title)
    if result.out is None:
        # The figure asked for is not there: an error, not a note beside exit status 0.
        why = "; ".join(note.removeprefix("heatmap: ") for note in result.notes) or "nothing to draw"
        raise SpecError(f"{args.trace}: {why}; {args.out} not written")
    for note in result.notes:
        print(f"bufsim: note: {note}", file=sys.stderr)
    print(f"wrote {args.out} ({len(df)} cells)")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from bufsim import report

    n = report.write(
        args.db,
        args.out,
        traces=args.trace or [],
        policies=args.policy or [],
        prefetches=args.prefetch or [],
        cdf_policies=args.cdf_policy or [],
        versions=args.bufsim_version or [],
    )
    print(f"wrote {args.out} ({n} runs)")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from bufsim import reproduce

    return reproduce.main(args.paper, json_out=args.json, quick=args.quick, rows_out=args.rows, out=args.out)


def add_commands(sub) -> None:
    from bufsim.cli.options import add_options
    from bufsim.plots import KINDS

    plt = sub.add_parser(
        "plot",
        help="draw a figure (PNG, PDF or SVG) from a results database, Parquet or CSV file",
        description="Draws one figure. KIND: hit-ratio (hit ratio vs cache size), prefetch (the "
        "prefetching paper's three panels: hit ratio, disk requests, execution time vs cache "
        "size), mrc (miss ratio curves), seq-cdf (DULO sequence-size CDFs), partitions "
        "(partition sizes over time), tdist (temporal distance histogram), heatmap (hit ratio "
        "over time and cache size). SOURCE may also be what `mrc --json` (exact and SHARDS "
        "curves) or `analyze --json` (temporal distances) printed. Panels whose "
        "columns are absent are left out with a note. Shapes: docs/plots.md.",
    )
    plt.add_argument("kind", choices=list(KINDS), help="what to draw")
    plt.add_argument(
        "source",
        nargs="?",
        default="results.duckdb",
        help="results database (.duckdb), .parquet, .csv or .json (default: results.duckdb)",
    )
    plt.add_argument("--out", "-o", required=True, metavar="FILE", help="figure file; .png, .pdf or .svg")
    plt.add_argument(
        "--trace", action="append", metavar="T", help="only this trace (path, file name or hash prefix); repeatable"
    )
    plt.add_argument("--policy", "-p", action="append", metavar="SPEC", help="only this policy; repeatable")
    plt.add_argument("--prefetch", action="append", metavar="SPEC", help="only this read-ahead setting; repeatable")
    plt.add_argument("--cache", "-c", action="append", metavar="SIZE", help="only this cache size; repeatable")
    plt.add_argument("--bufsim-version", action="append", metavar="V", help=VERSION_HELP)
    plt.add_argument("--lines", action="store_true", help="partitions: lines instead of stacked areas")
    plt.add_argument(
        "--title",
        metavar="TEXT",
        help="a title above the figure (default: what is drawn, e.g. 'Miss ratio vs cache "
        'size — grep, 4 policies\'; "" for none)',
    )
    plt.set_defaults(func=cmd_plot)

    hm = sub.add_parser(
        "heatmap",
        help="hit ratio over time and cache size, as a heatmap figure",
        description="Simulate POLICY over prefixes of TRACE and draw the hit ratio of each of "
        "--windows equal slices of its requests at each --cache size (the cache warm from the "
        "start). Costs about windows/2 full runs per size. Example: bufsim heatmap t.csv -p arc "
        "-c 1024blocks -c 4096blocks --windows 20 -o arc.png",
    )
    hm.add_argument("trace", help="trace file (formats: see bufsim run --help)")
    hm.add_argument("--policy", "-p", default="lru", metavar="SPEC", help="an online policy (default: lru)")
    hm.add_argument(
        "--cache",
        "-c",
        action="append",
        metavar="SIZE",
        help="cache size; repeatable (default: powers of two up to the trace's distinct blocks)",
    )
    hm.add_argument("--windows", type=int, default=20, metavar="N", help="slices of the trace (default: 20)")
    # The trace options of `bufsim run`, so a heatmap can draw what a sweep ran (--block-size).
    add_options(hm, ["trace"], only=["format", "block_size", "reads_only"])
    hm.add_argument("--seed", type=u64, metavar="N", help="seed of random policies (default: the run seed)")
    hm.add_argument("--out", "-o", default="heatmap.png", metavar="FIG", help="PNG, PDF or SVG (default: heatmap.png)")
    hm.add_argument("--csv", metavar="FILE", help="also write the cells as CSV")
    hm.add_argument("--title", metavar="TEXT", help='a title (default: what is drawn; "" for none)')
    hm.set_defaults(func=cmd_heatmap)

    rpt = sub.add_parser(
        "report",
        help="write a self-contained HTML report of a results database",
        description="One HTML file with a summary of the sweep, interactive plots (hover for "
        "values, click the legend to toggle series) and sortable tables. It loads nothing "
        "from the network.",
    )
    rpt.add_argument(
        "db", nargs="?", default="results.duckdb", help="results database or .parquet (default: results.duckdb)"
    )
    rpt.add_argument("--out", "-o", default="report.html", metavar="FILE", help="HTML file (default: report.html)")
    rpt.add_argument("--trace", action="append", metavar="T", help="only this trace; repeatable")
    rpt.add_argument("--policy", "-p", action="append", metavar="SPEC", help="only this policy; repeatable")
    rpt.add_argument("--prefetch", action="append", metavar="SPEC", help="only this read-ahead setting; repeatable")
    rpt.add_argument("--bufsim-version", action="append", metavar="V", help=VERSION_HELP)
    rpt.add_argument(
        "--cdf-policy",
        action="append",
        metavar="SPEC",
        help="draw sequence-size CDFs of this policy; repeatable (default: the first 12 policies)",
    )
    rpt.set_defaults(func=cmd_report)

    from bufsim.reproduce import REPRODUCTIONS

    rep = sub.add_parser(
        "reproduce",
        help="rerun a paper's worked example or experiment and print our numbers beside the paper's",
        description="Builds the paper's input, runs the real engine on it and prints our "
        "numbers beside the published ones, then one line per finding the paper states: "
        "finding | paper | bufsim | agrees or differs.",
    )
    rep.add_argument("paper", choices=sorted(REPRODUCTIONS), help="what to reproduce")
    printed = rep.add_mutually_exclusive_group()
    printed.add_argument(
        "--json",
        action="store_true",
        help="print the findings as one JSON list of objects with keys finding, paper, bufsim, agrees",
    )
    printed.add_argument("--rows", action="store_true", help="print the measured rows, one JSON object per line")
    rep.add_argument(
        "--out",
        metavar="DIR",
        help="also draw the paper's figures as PNGs into DIR (reproductions of figures)",
    )
    rep.add_argument(
        "--quick",
        action="store_true",
        help="a reduced version, under two minutes with two free cores (amp-figures, dulo-figures, mq-tables, "
        "prefetch-figures, storage-aware; the others are short whole and refuse it); the longest, storage-aware "
        "(a quarter of Trace 1, the ends of each range), takes about 90 s of CPU, so a loaded machine stretches it",
    )
    rep.set_defaults(func=cmd_reproduce)
