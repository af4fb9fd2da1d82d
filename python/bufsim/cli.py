"""The ``bufsim`` command line. Heavy modules (pandas, matplotlib) are imported only by the
subcommands that need them, so ``bufsim run`` starts fast."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Callable, Sequence

from bufsim import _core
from bufsim._core import SpecError

EXIT_USAGE = 2


def human_bytes(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{n}B"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[bool]) -> str:
    """An aligned text table: numbers right-aligned, text left-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for k, r in enumerate(cells):
        parts = [c.rjust(w) if right[i] else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(parts).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def add_trace_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default="auto", metavar="F",
                   help=f"trace format: auto (detect from content) or one of {', '.join(_core.FORMATS)} (default: auto)")
    p.add_argument("--block-size", default="4KiB", metavar="SIZE",
                   help="cache block size (default: 4KiB)")
    p.add_argument("--reads-only", action="store_true",
                   help="drop write requests (by default reads and writes are both cache accesses)")
    p.add_argument("--cluster", default="64KiB", metavar="SIZE",
                   help="largest disk request the I/O clusterer forms (default: 64KiB)")
    p.add_argument("--seed", type=int, default=42,
                   help="seed of every random choice; same inputs and seed give identical results (default: 42)")


def cmd_run(args: argparse.Namespace) -> int:
    from bufsim.api import _run

    results = _run(
        args.trace, args.policy or ["lru"], args.cache or ["64MiB"],
        prefetches=args.prefetch or ["none"], format=args.format, block_size=args.block_size,
        reads_only=args.reads_only, cluster=args.cluster, seed=args.seed, jobs=args.jobs,
        check=args.check,
    )
    if args.json:
        for r in results:
            print(json.dumps(r.to_dict()))
        return 0
    print(results_table(results))
    return 0


def results_table(results) -> str:
    """The run table; read-ahead columns appear when some run prefetches."""
    prefetching = any(r.prefetch != "none" for r in results)
    headers = ["policy"] + (["prefetch"] if prefetching else []) + [
        "cache", "blocks", "requests", "accesses", "hits", "misses", "hit ratio", "disk reqs"]
    if prefetching:
        headers += ["sync", "async", "blocks read", "prefetched", "unused"]
    rows = []
    for r in results:
        row = [r.policy] + ([r.prefetch] if prefetching else []) + [
            human_bytes(r.cache_blocks * r.block_size), r.cache_blocks, r.requests, r.accesses,
            r.hits, r.misses, f"{r.hit_ratio:.4f}", r.disk_requests]
        if prefetching:
            row += [r.sync_requests, r.async_requests, r.blocks_read, r.prefetched, r.prefetched_unused]
        rows.append(row)
    right = [False] + ([False] if prefetching else []) + [True] * (len(headers) - 1 - prefetching)
    return format_table(headers, rows, right)


def cmd_sweep(args: argparse.Namespace) -> int:
    from bufsim.sweeps import SweepSpec, run_sweep

    if args.config:
        spec = SweepSpec.from_toml(args.config)
        spec.traces += args.trace
        for name in ("policy", "cache", "prefetch"):
            if getattr(args, name):
                setattr(spec, {"policy": "policies", "cache": "caches", "prefetch": "prefetches"}[name],
                        getattr(args, name))
    else:
        if not args.trace:
            raise SpecError("give at least one TRACE (or --config FILE)")
        spec = SweepSpec(traces=args.trace, policies=args.policy or ["lru"], caches=args.cache or ["64MiB"],
                         prefetches=args.prefetch or ["none"], format=args.format, block_size=args.block_size,
                         reads_only=args.reads_only, cluster=args.cluster, seed=args.seed)
    df = run_sweep(spec, args.out, resume=args.resume, jobs=args.jobs, scheduler=args.scheduler,
                   progress=not args.quiet)
    if args.json:
        for row in df.to_dict("records"):
            print(json.dumps({k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()
                              if k not in ("config", "finished_at")}, default=str))
    else:
        from bufsim.api import Result

        results = [Result(**{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()
                             if k in Result.__dataclass_fields__}) for row in df.to_dict("records")]
        print(results_table(results))
        print(f"\n{len(df)} runs in {args.out}")
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    from bufsim.sweeps import ResultsStore

    if not os.path.exists(args.db):
        raise FileNotFoundError(f"{args.db}: no such results database; run `bufsim sweep` first")
    store = ResultsStore(args.db)
    try:
        if args.action == "export":
            if not args.parquet:
                raise SpecError("say where to write: bufsim results export DB --parquet OUT.parquet")
            n = store.export_parquet(args.parquet)
            print(f"{n} runs written to {args.parquet}")
        else:
            df = store.frame()
            cols = ["trace", "policy", "prefetch", "cache_blocks", "accesses", "misses", "hit_ratio", "disk_requests"]
            print(df[cols].assign(trace=df["trace"].map(os.path.basename)).to_string(index=False))
    finally:
        store.close()
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from bufsim import plots

    df = plots.load(args.source)
    caches = [] if not args.cache else [
        _core.size_to_blocks(c, int(df["block_size"].iloc[0]) if "block_size" in df.columns and len(df) else 4096)
        for c in args.cache]
    df = plots.select(df, traces=args.trace or [], policies=args.policy or [], prefetches=args.prefetch or [],
                      caches=caches)
    kw = {"stacked": not args.lines} if args.kind == "partitions" else {}
    result = plots.KINDS[args.kind](df, args.out, title=args.title, **kw)
    if result.out is None:
        raise SpecError(f"{args.source}: nothing to plot for `{args.kind}` ({'; '.join(result.notes)})")
    for note in result.notes:
        print(f"bufsim: note: {note}", file=sys.stderr)
    print(f"wrote {result.out}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from bufsim import report

    n = report.write(args.db, args.out, traces=args.trace or [], policies=args.policy or [],
                     prefetches=args.prefetch or [])
    print(f"wrote {args.out} ({n} runs)")
    return 0


def cmd_prefetchers(args: argparse.Namespace) -> int:
    for p in _core.prefetchers():
        print(f"{p['name']}: {p['paper']}")
        for name, default, doc in p["params"]:
            print(f"    {name}={default}  {doc}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from bufsim import reproduce

    return reproduce.main(args.paper, json_out=args.json)


def cmd_policies(args: argparse.Namespace) -> int:
    infos = _core.policies()
    if args.json:
        for p in infos:
            print(json.dumps(p))
        return 0
    for p in infos:
        aliases = f" (also {', '.join(p['aliases'])})" if p["aliases"] else ""
        print(f"{p['name']}{aliases}: {p['summary']}")
        if p["preset_of"]:
            print(f"    preset of: {p['preset_of']}")
        print(f"    paper: {p['paper']}")
        for name, default, doc in p["params"]:
            print(f"    {name}={default}  {doc}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="bufsim",
        description="Trace-driven buffer cache simulator: replacement policies, read-ahead, "
        "disk timing and partitioned caches on real traces.",
        epilog="Sizes take units: 64MiB, 4KiB, 1GiB, or a block count such as 2000blocks. "
        "Run `bufsim COMMAND --help` for a command's options.",
    )
    ap.add_argument("--version", action="version", version=f"bufsim {_core.__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="simulate policies x cache sizes over a trace and print a table",
                         description="Simulate every --policy at every --cache size over TRACE. The trace "
                         "is decoded once and the runs share it, in parallel on all cores.")
    run.add_argument("trace", help="trace file (formats: see --format)")
    run.add_argument("--policy", "-p", action="append", metavar="SPEC",
                     help="policy spec such as lru, lfu(aging=dynamic); repeat for several (default: lru). "
                     "`bufsim policies` lists them")
    run.add_argument("--cache", "-c", action="append", metavar="SIZE",
                     help="cache size such as 64MiB or 2000blocks; repeat for several (default: 64MiB)")
    run.add_argument("--prefetch", action="append", metavar="SPEC",
                     help="read-ahead: none, linux, linux-ondemand, bsd or simple(min=3,max=8); repeat for "
                     "several (default: none). `bufsim prefetchers` lists them")
    add_trace_options(run)
    run.add_argument("--jobs", "-j", type=int, default=0, help="worker threads (default: all cores)")
    run.add_argument("--json", action="store_true", help="print one JSON object per run instead of a table")
    run.add_argument("--check", action="store_true", help="verify cache and policy invariants after each run")
    run.set_defaults(func=cmd_run)

    pol = sub.add_parser("policies", help="list replacement policies with parameters, defaults and papers")
    pol.add_argument("--json", action="store_true", help="one JSON object per policy")
    pol.set_defaults(func=cmd_policies)

    pre = sub.add_parser("prefetchers", help="list read-ahead algorithms with parameters and sources")
    pre.set_defaults(func=cmd_prefetchers)

    sw = sub.add_parser("sweep", help="run policies x read-ahead x cache sizes over traces into a results database",
                        description="Run every combination over every TRACE, in parallel on all cores (or on a "
                        "Dask cluster with --scheduler), writing each finished run to a DuckDB file. A sweep "
                        "killed at any moment keeps every finished run; --resume skips them.")
    sw.add_argument("trace", nargs="*", help="trace files")
    sw.add_argument("--policy", "-p", action="append", metavar="SPEC", help="policy spec; repeat for several")
    sw.add_argument("--cache", "-c", action="append", metavar="SIZE",
                    help="cache size, or a range START:END:x2 (geometric) or START:END:+STEP; repeatable")
    sw.add_argument("--prefetch", action="append", metavar="SPEC", help="read-ahead spec; repeatable (default: none)")
    add_trace_options(sw)
    sw.add_argument("--config", metavar="FILE", help="TOML experiment file (see docs/sweeps.md)")
    sw.add_argument("--out", "-o", default="results.duckdb", metavar="DB", help="results database (default: results.duckdb)")
    sw.add_argument("--resume", action="store_true", help="skip runs already in the database")
    sw.add_argument("--jobs", "-j", type=int, default=0, help="local worker threads (default: all cores)")
    sw.add_argument("--scheduler", metavar="ADDR", help="run on a Dask cluster, e.g. tcp://host:8786")
    sw.add_argument("--json", action="store_true", help="print the rows as JSON lines")
    sw.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    sw.set_defaults(func=cmd_sweep)

    res = sub.add_parser("results", help="show or export a results database")
    res.add_argument("action", choices=["show", "export"])
    res.add_argument("db", nargs="?", default="results.duckdb", help="database (default: results.duckdb)")
    res.add_argument("--parquet", metavar="FILE", help="with export: write the runs table as Parquet")
    res.set_defaults(func=cmd_results)

    from bufsim.plots import KINDS

    plt = sub.add_parser("plot", help="draw a figure (PNG, PDF or SVG) from a results database, Parquet or CSV file",
                         description="Draws one figure. KIND: hit-ratio (hit ratio vs cache size), prefetch (the "
                         "prefetching paper's three panels: hit ratio, disk requests, execution time vs cache "
                         "size), mrc (miss ratio curves), seq-cdf (DULO sequence-size CDFs), partitions "
                         "(partition sizes over time), tdist (temporal distance histogram). Panels whose "
                         "columns are absent are left out with a note. Shapes: docs/plots.md.")
    plt.add_argument("kind", choices=list(KINDS), help="what to draw")
    plt.add_argument("source", nargs="?", default="results.duckdb",
                     help="results database (.duckdb), .parquet, .csv or .json (default: results.duckdb)")
    plt.add_argument("--out", "-o", required=True, metavar="FILE", help="figure file; .png, .pdf or .svg")
    plt.add_argument("--trace", action="append", metavar="T", help="only this trace (path, file name or hash prefix); repeatable")
    plt.add_argument("--policy", "-p", action="append", metavar="SPEC", help="only this policy; repeatable")
    plt.add_argument("--prefetch", action="append", metavar="SPEC", help="only this read-ahead setting; repeatable")
    plt.add_argument("--cache", "-c", action="append", metavar="SIZE", help="only this cache size; repeatable")
    plt.add_argument("--lines", action="store_true", help="partitions: lines instead of stacked areas")
    plt.add_argument("--title", metavar="TEXT", help="a title above the figure (default: none)")
    plt.set_defaults(func=cmd_plot)

    rpt = sub.add_parser("report", help="write a self-contained HTML report of a results database",
                         description="One HTML file with a summary of the sweep, interactive plots (hover for "
                         "values, click the legend to toggle series) and sortable tables. It loads nothing "
                         "from the network.")
    rpt.add_argument("db", nargs="?", default="results.duckdb", help="results database or .parquet (default: results.duckdb)")
    rpt.add_argument("--out", "-o", default="report.html", metavar="FILE", help="HTML file (default: report.html)")
    rpt.add_argument("--trace", action="append", metavar="T", help="only this trace; repeatable")
    rpt.add_argument("--policy", "-p", action="append", metavar="SPEC", help="only this policy; repeatable")
    rpt.add_argument("--prefetch", action="append", metavar="SPEC", help="only this read-ahead setting; repeatable")
    rpt.set_defaults(func=cmd_report)

    from bufsim.reproduce import REPRODUCTIONS

    rep = sub.add_parser("reproduce", help="rerun a paper's worked example or experiment and print our numbers beside the paper's",
                         description="Builds the paper's input, runs the real engine on it and prints our "
                         "numbers beside the published ones.")
    rep.add_argument("paper", choices=sorted(REPRODUCTIONS), help="what to reproduce")
    rep.add_argument("--json", action="store_true", help="print one JSON object per row")
    rep.set_defaults(func=cmd_reproduce)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    from bufsim._core import BufsimError

    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return func(args)
    except (BufsimError, OSError) as e:
        print(f"bufsim: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        try:
            print("bufsim: interrupted", file=sys.stderr)
        except OSError:
            pass  # stderr already gone (the parent stopped listening)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
