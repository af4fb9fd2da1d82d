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
                   help=f"trace format: auto (detect from content) or one of {', '.join(_core.FORMATS)}; "
                   "blkparse(event=C) or (event=D) takes completions or dispatches instead of queue events (default: auto)")
    p.add_argument("--block-size", default="4KiB", metavar="SIZE",
                   help="cache block size (default: 4KiB)")
    p.add_argument("--reads-only", action="store_true",
                   help="drop write requests (by default reads and writes are both cache accesses)")
    p.add_argument("--cluster", default="64KiB", metavar="SIZE",
                   help="largest disk request the I/O clusterer forms (default: 64KiB)")
    p.add_argument("--seed", type=int, default=42,
                   help="seed of every random choice; same inputs and seed give identical results (default: 42)")


def add_first_level_options(p: argparse.ArgumentParser, required: bool = False) -> None:
    g = p.add_argument_group("hierarchy (MQ paper)", "simulate the second level: the trace first goes through "
                             "first-level client caches and only their misses (or write-backs) go on")
    g.add_argument("--l1", metavar="SPEC", required=required, help="first-level policy of every client, e.g. lru")
    g.add_argument("--l1-size", metavar="SIZE", default="8MiB",
                   help="first-level cache size of every client (default: 8MiB; 0 passes everything)")
    g.add_argument("--client", choices=["all", "pid", "device"], default="all",
                   help="trace column telling clients apart (default: all, one client)")
    g.add_argument("--l1-client", action="append", metavar="ID=SPEC@SIZE", default=[],
                   help="a different first level for one client, e.g. 3=lru@16MiB; repeatable")
    g.add_argument("--write-back", action="store_true",
                   help="write-back first level: writes reach the second level when dirty blocks are evicted "
                   "(default: every first-level miss goes down as itself)")


def first_level_of(args: argparse.Namespace):
    from bufsim.hierarchy import FirstLevel

    if not args.l1:
        if args.l1_client or args.write_back or args.client != "all":
            raise SpecError("--client, --l1-client and --write-back describe a first level: give --l1 SPEC too")
        return None
    clients = dict(FirstLevel.parse_client(c) for c in args.l1_client)
    return FirstLevel(args.l1, args.l1_size, client=args.client, write_back=args.write_back, clients=clients)


def add_timing_options(p: argparse.ArgumentParser, sweep: bool = False) -> None:
    """Timed mode (docs/timing.md). In `sweep`, --scheduler names the Dask scheduler, so the I/O
    scheduler is --io-scheduler there; devices and I/O schedulers are repeatable."""
    g = p.add_argument_group("timed mode (docs/timing.md; any of these but --file-gap implies --timing)")
    g.add_argument("--timing", action="store_true",
                   help="simulate time: think time, synchronous and asynchronous I/O, device queues; "
                   "adds execution time, I/O time, stall time and request latencies")
    g.add_argument("--device", action="append" if sweep else "store", metavar="SPEC",
                   help="device model for every device id, such as st39102lw, ibm-9lzx(age=5), "
                   "avg(seek=6.5ms,rotation=3.0ms) or ssd (default: st39102lw)"
                   + ("; repeat to sweep several" if sweep else "") + ". `bufsim devices` lists them")
    names = ["--io-scheduler"] if sweep else ["--scheduler", "--io-scheduler"]
    g.add_argument(*names, dest="io_scheduler", action="append" if sweep else "store", metavar="SPEC",
                   help="I/O scheduler of each device queue: noop, sstf, cscan, deadline(...) (default: noop)"
                   + ("; repeat to sweep several" if sweep else ""))
    g.add_argument("--think", metavar="T",
                   help="think time before each request: `trace` (issue time minus the previous request's "
                   "completion in the same stream, as traced) or a time such as 0.1ms (default: trace)")
    g.add_argument("--single-stream", action="store_true",
                   help="merge all processes (pids) into one stream, as the prefetching paper's AccuSim did")
    g.add_argument("--file-gap", default="0blocks", metavar="SIZE",
                   help="free space between consecutive files of a file trace on the device, e.g. 1MiB "
                   "(count mode too; default: none)")


def timing_kwargs(args: argparse.Namespace) -> dict:
    """The timing keyword arguments of bufsim.api for `run`."""
    given = args.timing or args.device is not None or args.io_scheduler is not None \
        or args.think is not None or args.single_stream
    return {"timing": bool(given) or None, "device": args.device, "scheduler": args.io_scheduler,
            "think": args.think, "single_stream": args.single_stream, "file_gap": args.file_gap}


# --- Storage-aware caching (issue 9): array, per-device specs, network, closed workload, faults ---

def add_storage_options(p: argparse.ArgumentParser) -> None:
    """Storage-aware caching's storage system (docs/storage-aware.md)."""
    g = p.add_argument_group("storage-aware caching (docs/storage-aware.md; all but --array imply --timing)")
    g.add_argument("--array", metavar="SPEC",
                   help="stripe the trace's logical volume over a RAID-0 array: raid0(devices=16,unit=8KiB) or a "
                   "device count such as 16 (count mode too)")
    g.add_argument("--device-for", action="append", default=[], metavar="ID=SPEC",
                   help="a device model for some devices, e.g. 3=ibm-9lzx(age=10), 0-7=ibm-9lzx(age=2) or 2,5=ssd; "
                   "repeatable; the others use --device")
    g.add_argument("--network", metavar="SPEC",
                   help="network between cache and devices: none, or loggp(latency=1us,overhead=0.4us,gap=76ns,"
                   "bandwidth=10Gb/s,header=64B) (the paper's §4.4 values are loggp's defaults; default: none)")
    g.add_argument("--closed", type=int, metavar="N",
                   help=f"closed workload: N requests outstanding (1 to {_core.MAX_CLOSED}), the trace's next request issued as "
                   "soon as one completes, the trace's think times taken as 0 (default: the trace's processes with "
                   "their think times)")
    g.add_argument("--fault", action="append", default=[], metavar="SPEC",
                   help="performance fault: device=6,at=500s,slowdown=2 slows every request device 6 starts from "
                   "500 s of simulated time on twofold; repeatable (on one device the latest in force wins)")


def storage_kwargs(args: argparse.Namespace) -> dict:
    """The storage keyword arguments of bufsim.api."""
    return {"array": args.array, "device_for": args.device_for or None, "network": args.network,
            "closed": args.closed, "faults": args.fault or None}


def cmd_run(args: argparse.Namespace) -> int:
    import warnings

    from bufsim.api import TIMING_FIELDS, _run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skipped records are reported below, once
        results = _run(
            args.trace, args.policy or ["lru"], args.cache or ["64MiB"],
            prefetches=args.prefetch or ["none"], format=args.format, block_size=args.block_size,
            reads_only=args.reads_only, cluster=args.cluster, seed=args.seed, jobs=args.jobs,
            check=args.check, first_level=first_level_of(args), skip_bad=args.skip_bad, **timing_kwargs(args),
            **storage_kwargs(args),
        )
    if results and results[0].skipped:
        print(f"bufsim: warning: {args.trace}: {results[0].skipped}", file=sys.stderr)
    if results and results[0].requests == 0:
        print(f"bufsim: warning: {args.trace}: {EMPTY_TRACE}", file=sys.stderr)
    if args.json:
        for r in results:
            d = r.to_dict()
            if not r.timed:
                d = {k: v for k, v in d.items() if k not in TIMING_FIELDS}
            print(json.dumps(d))
        return 0
    print(results_table(results))
    return 0


def results_table(results) -> str:
    """The run table; read-ahead columns appear when some run prefetches, timing columns when
    some run is timed."""
    prefetching = any(r.prefetch != "none" for r in results)
    timed = any(r.exec_time_s is not None for r in results)
    devices = sorted({r.device for r in results if r.device}) if timed else []
    headers = ["policy"] + (["prefetch"] if prefetching else []) + (["device"] if len(devices) > 1 else []) + [
        "cache", "blocks", "requests", "accesses", "hits", "misses", "hit ratio", "disk reqs"]
    if prefetching:
        headers += ["sync", "async", "blocks read", "prefetched", "unused"]
    if timed:
        headers += ["exec s", "MB/s", "io s", "stall s", "sync ms", "async ms", "p99 ms", "util"]
    rows = []
    for r in results:
        row = [r.policy] + ([r.prefetch] if prefetching else []) + ([r.device or ""] if len(devices) > 1 else []) + [
            human_bytes(r.cache_blocks * r.block_size), r.cache_blocks, r.requests, r.accesses,
            r.hits, r.misses, f"{r.hit_ratio:.4f}", r.disk_requests]
        if prefetching:
            row += [r.sync_requests, r.async_requests, r.blocks_read, r.prefetched, r.prefetched_unused]
        if timed:
            if r.exec_time_s is None:
                row += [""] * 8
            else:
                util = max((d["utilization"] for d in r.devices or []), default=0.0)
                mb_s = f"{r.throughput_mb_s:.2f}" if r.throughput_mb_s is not None else ""
                row += [f"{r.exec_time_s:.3f}", mb_s, f"{r.io_time_s:.3f}", f"{r.stall_time_s:.3f}",
                        f"{r.sync_time_ms:.2f}", f"{r.async_time_ms:.2f}", f"{r.response_p99_ms:.2f}",
                        f"{util:.2f}"]
        rows.append(row)
    left = 1 + prefetching + (len(devices) > 1)
    right = [False] * left + [True] * (len(headers) - left)
    return format_table(headers, rows, right)


def cmd_sweep(args: argparse.Namespace) -> int:
    from bufsim.sweeps import SweepSpec, run_sweep

    if args.config:
        spec = SweepSpec.from_toml(args.config)
        spec.traces += args.trace
        for name in ("policy", "cache", "prefetch", "device", "io_scheduler"):
            if getattr(args, name):
                setattr(spec, {"policy": "policies", "cache": "caches", "prefetch": "prefetches",
                               "device": "devices", "io_scheduler": "io_schedulers"}[name],
                        getattr(args, name))
        if args.think is not None:
            spec.think = args.think
        if args.single_stream:
            spec.single_stream = True
        if args.timing or args.device or args.io_scheduler or args.think is not None or args.single_stream:
            spec.timing = True
        if args.file_gap != "0blocks":
            spec.file_gap = args.file_gap
        storage = {k: v for k, v in storage_kwargs(args).items() if v is not None}
        if storage:
            spec.storage = {**(spec.storage or {}), **storage}
    else:
        if not args.trace:
            raise SpecError("give at least one TRACE (or --config FILE)")
        timing = bool(args.timing or args.device or args.io_scheduler or args.think is not None or args.single_stream)
        spec = SweepSpec(traces=args.trace, policies=args.policy or ["lru"], caches=args.cache or ["64MiB"],
                         prefetches=args.prefetch or ["none"], format=args.format, block_size=args.block_size,
                         reads_only=args.reads_only, cluster=args.cluster, seed=args.seed, timing=timing,
                         devices=args.device or None, io_schedulers=args.io_scheduler or None,
                         think=args.think or "trace", single_stream=args.single_stream, file_gap=args.file_gap,
                         storage={k: v for k, v in storage_kwargs(args).items() if v is not None} or None)
    df = run_sweep(spec, args.out, resume=args.resume, jobs=args.jobs, scheduler=args.scheduler,
                   progress=not args.quiet)
    if args.json:
        for row in df.to_dict("records"):
            print(json.dumps({k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()
                              if k not in ("config", "finished_at")}, default=str))
    else:
        from bufsim.sweeps import result_of_row

        results = [result_of_row(row) for row in df.to_dict("records")]
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
            if "exec_time_s" in df and df["exec_time_s"].notna().any():
                cols += ["device", "io_scheduler", "exec_time_s", "io_time_s", "stall_time_s"]
            print(df[cols].assign(trace=df["trace"].map(os.path.basename)).to_string(index=False))
    finally:
        store.close()
    return 0


def cmd_filter(args: argparse.Namespace) -> int:
    from bufsim.hierarchy import filter_trace

    df = filter_trace(args.trace, args.out, first_level_of(args), format=args.format,
                      block_size=args.block_size, reads_only=args.reads_only, seed=args.seed)
    if args.json:
        for row in df.to_dict("records"):
            print(json.dumps({k: int(v) for k, v in row.items()}))
        return 0
    headers = ["client", "l1 blocks", "accesses", "hits", "misses", "write-backs", "hit ratio"]
    rows = [[r.client, r.cache_blocks, r.accesses, r.hits, r.misses, r.write_backs,
             f"{r.hits / r.accesses:.4f}" if r.accesses else "-"] for r in df.itertuples()]
    print(format_table(headers, rows, [True] * len(headers)))
    print(f"\n{df.attrs['requests_written']} second-level requests ({int(df.misses.sum() + df.write_backs.sum())} "
          f"blocks) written to {args.out}")
    return 0


def cmd_devices(args: argparse.Namespace) -> int:
    infos = _core.devices()
    if args.json:
        for d in infos:
            print(json.dumps(d))
        return 0
    for title, kind in (("Device models (--device)", "device"), ("Device presets (--device)", "preset"),
                        ("I/O schedulers (--scheduler)", "scheduler")):
        print(f"{title}:")
        for d in (d for d in infos if d["kind"] == kind):
            aliases = f" (also {', '.join(d['aliases'])})" if d["aliases"] else ""
            print(f"  {d['name']}{aliases}: {d['summary']}")
            if d["preset_of"]:
                print(f"      preset of: {d['preset_of']}")
            print(f"      source: {d['source']}")
            for name, default, doc in d["params"]:
                print(f"      {name}={default}  {doc}")
        print()
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    import warnings

    from bufsim.formats import convert

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reported below, once
        c = convert(args.trace, args.out, format=args.format, skip_bad=args.skip_bad)
    if c.skipped:
        print(f"bufsim: warning: {args.trace}: {c.skipped}", file=sys.stderr)
    if args.json:
        print(json.dumps(c.to_dict()))
    else:
        names = f", {c.names} names" if c.names else ""
        print(f"{c.requests} requests ({c.format}{names}) written to {args.out} ({human_bytes(c.bytes)})")
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

    return reproduce.main(args.paper, json_out=args.json, quick=args.quick)


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


def cmd_collect(args: argparse.Namespace) -> int:
    from bufsim.collect import CollectError, collect, collect_from_log

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    options = dict(stack_depth=args.stack_depth, reads_only=args.reads_only, include=args.include or [],
                   exclude=args.exclude or [], no_libs=args.no_libs)
    try:
        if args.from_strace:
            if command:
                raise CollectError("give either --from-strace LOG or a command to run, not both")
            result = collect_from_log(args.from_strace, args.output, **options)
        elif args.tracer == "kernel":
            from bufsim.ktrace import collect_kernel

            if args.keep_strace:
                raise CollectError("--keep-strace goes with --tracer strace, not --tracer kernel")
            result = collect_kernel(command, args.output, stacks=not args.no_stacks, timeout=args.timeout,
                                    **options)
        else:
            if args.timeout is not None:
                raise CollectError("--timeout goes with --tracer kernel")
            result = collect(command, args.output, stacks=not args.no_stacks, keep_strace=args.keep_strace,
                             **options)
    except CollectError as e:
        print(f"bufsim: error: {e}", file=sys.stderr)
        return e.exit_status
    print(result.summary(), file=sys.stderr)
    return result.exit_status


# --- AMP (issue 7): generate, timeline, detect ---

def cmd_generate(args: argparse.Namespace) -> int:
    from bufsim.amp import generate, generators

    if args.list or not args.spec:
        for g in generators():
            print(f"{g['name']}: {g['summary']}")
            print(f"    source: {g['paper']}")
            for name, default, doc in g["params"]:
                print(f"    {name}={default}  {doc}")
        return 0 if args.list else EXIT_USAGE
    path = generate(args.spec, seed=args.seed, out=args.out)
    print(f"wrote {path}")
    return 0


def cmd_timeline(args: argparse.Namespace) -> int:
    from bufsim.amp import partition_timeline, plot_partition_timeline

    timing, storage = timing_kwargs(args), storage_kwargs(args)
    if timing["timing"] or any(v for v in storage.values()):
        # Storage-aware caching (Figure 8, left): sizes and wait times over simulated time.
        from bufsim.storage import partition_timeline as timed_timeline, plot_partition_timeline as plot_timed

        timing.pop("single_stream")
        df = timed_timeline(args.trace, args.policy, args.cache, format=args.format, block_size=args.block_size,
                            reads_only=args.reads_only, seed=args.seed, **timing, **storage)
        if args.plot:
            import re

            faulty = sorted({f"dev{m.group(1)}" for f in storage["faults"] or []
                             for m in [re.search(r"device=(\d+)", f)] if m})
            plot_timed(df, args.plot, title=f"{args.policy}, cache {args.cache}", highlight=faulty or None)
            print(f"wrote {args.plot}")
    else:
        df = partition_timeline(args.trace, args.policy, args.cache, format=args.format,
                                block_size=args.block_size, reads_only=args.reads_only, seed=args.seed)
        if args.plot:
            plot_partition_timeline(df, args.plot, title=f"{args.policy}, cache {args.cache}")
            print(f"wrote {args.plot}")
    if args.csv:
        df.to_csv(args.csv, index=False)
        print(f"wrote {args.csv}")
    if not args.plot and not args.csv:
        df.to_csv(sys.stdout, index=False)
    return 0


def cmd_detect(args: argparse.Namespace) -> int:
    from bufsim.amp import detect

    df = detect(args.trace, args.detector, format=args.format, block_size=args.block_size,
                reads_only=args.reads_only)
    if args.json:
        for row in df.to_dict("records"):
            print(json.dumps({k: (None if v != v else v) for k, v in row.items()}))
        return 0
    if df.empty:
        print("no program contexts in this trace (its ctx column is 0 or missing)")
        return 0
    print(df.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0


def add_amp_commands(sub) -> None:
    gen = sub.add_parser("generate", help="write a synthetic trace (AMP's Table 1 streams, looping/clustered mixes)",
                         description="Write the synthetic trace SPEC, generated from --seed, as interchange CSV "
                         "with a ctx column. `bufsim generate --list` lists the generators and their parameters.")
    gen.add_argument("spec", nargs="?", help="generator spec such as amp-c or amp-mix(loop1=2000,loop1-share=0.4)")
    gen.add_argument("--seed", type=int, default=1, help="seed of the generator (default: 1)")
    gen.add_argument("--out", "-o", metavar="FILE", help="output CSV (default: NAME-SEED.csv)")
    gen.add_argument("--list", action="store_true", help="list the generators")
    gen.set_defaults(func=cmd_generate)

    tl = sub.add_parser("timeline", help="partition sizes over time (AMP Figure 13; storage-aware Figure 8)",
                        description="Run one partitioned policy over TRACE and print its partition sizes over "
                        "virtual time as CSV (time,partition,ctx,blocks), or plot them as stacked areas. With timing "
                        "or storage options (storage-aware policies), the rows are time_s,partition,target,blocks,"
                        "wait_ms over simulated time (time in demand accesses with --array alone, which runs count "
                        "mode), one sample per repartitioning epoch, and the plot draws sizes and per-device wait "
                        "times.")
    tl.add_argument("trace", help="trace file")
    tl.add_argument("--policy", "-p", default="amp", metavar="SPEC",
                    help="amp, pcc, dear, static, eager-lru, lazy-lru or lazy-clock spec (default: amp)")
    tl.add_argument("--cache", "-c", default="64MiB", metavar="SIZE", help="cache size (default: 64MiB)")
    add_trace_options(tl)
    add_timing_options(tl)
    add_storage_options(tl)
    tl.add_argument("--csv", metavar="FILE", help="write the rows to FILE instead of standard output")
    tl.add_argument("--plot", metavar="PNG", help="draw the timeline into PNG: stacked areas (AMP), or partition "
                    "sizes above per-device wait times (storage-aware, faulty devices drawn thick)")
    tl.set_defaults(func=cmd_timeline)

    det = sub.add_parser("detect", help="classify each program context of a trace (loop, one-shot, other)",
                         description="Run an access-pattern detector over the program contexts (ctx column) of "
                         "TRACE, one detection over the whole trace, and print each context's pattern, R̄ "
                         "and loop estimates.")
    det.add_argument("trace", help="trace file")
    det.add_argument("--detector", "-d", default="amp", metavar="SPEC",
                     help="amp, pcc or dear with their parameters, e.g. amp(threshold=0.3) (default: amp)")
    add_trace_options(det)
    det.add_argument("--json", action="store_true", help="one JSON object per context")
    det.set_defaults(func=cmd_detect)


# ---- Trace analyses: bufsim analyze, bufsim mrc (python/bufsim/analysis.py) ----

def cmd_analyze(args: argparse.Namespace) -> int:
    from bufsim.analysis import analyze, format_analysis

    a = analyze(args.trace, format=args.format, block_size=args.block_size, reads_only=args.reads_only,
                working_set=not args.no_working_set, contexts=args.contexts, hill_fraction=args.hill,
                jobs=args.jobs, breakdown=args.breakdown, policies=args.policy, seed=args.seed)
    print(json.dumps(a.to_dict()) if args.json else format_analysis(a))
    return 0


def cmd_mrc(args: argparse.Namespace) -> int:
    from bufsim.analysis import format_mrc, mrc_report

    sizes = None
    if args.sizes:
        listed = [s.strip() for group in args.sizes for s in group.split(",") if s.strip()]
        sizes = "all" if listed == ["all"] else listed
    r = mrc_report(args.trace, sizes=sizes, shards=args.shards, shards_size=args.shards_size,
                   exact=not args.no_exact, seed=args.seed, format=args.format, block_size=args.block_size,
                   reads_only=args.reads_only)
    print(json.dumps(r) if args.json else format_mrc(r))
    return 0


def add_analysis_commands(sub) -> None:
    def trace_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("trace", help="trace file (formats: see --format)")
        p.add_argument("--format", default="auto", metavar="F",
                       help=f"trace format: auto (detect from content) or one of {', '.join(_core.FORMATS)} (default: auto)")
        p.add_argument("--block-size", default="4KiB", metavar="SIZE", help="cache block size (default: 4KiB)")
        p.add_argument("--reads-only", action="store_true", help="drop write requests, as `bufsim run --reads-only`")
        p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")

    an = sub.add_parser("analyze", help="characterize a trace: counts, sizes, locality, frequency, working set",
                        description="Characterize TRACE as bufsim simulates it (the same block accesses): request "
                        "and block counts, footprint, read/write mix, request sizes, fraction of consecutive "
                        "references and working-set size (prefetching paper §6.1), temporal distance histogram "
                        "with minDist/maxDist and frequency distribution (MQ paper §3), inter-reference gap CDF "
                        "per program context (AMP Figure 2). See docs/analysis.md.")
    trace_options(an)
    an.add_argument("--no-working-set", action="store_true",
                    help="skip the working-set search (it runs OPT about log2(footprint) times) and stream the trace")
    an.add_argument("--contexts", type=int, default=8, metavar="N",
                    help="program contexts shown in the gap table, the busiest first (default: 8)")
    an.add_argument("--hill", type=float, default=0.1, metavar="FRACTION",
                    help="a temporal-distance bin is in the hill while it holds at least this share of the peak (default: 0.1)")
    an.add_argument("--jobs", "-j", type=int, default=0, help="threads for the OPT runs (default: all cores)")
    an.add_argument("--breakdown", metavar="SIZE",
                    help="add the MQ paper's Table 3: each policy's hits and misses for re-references closer "
                    "than SIZE and farther, at a cache of SIZE")
    an.add_argument("--policy", "-p", action="append", metavar="SPEC",
                    help="policy of the breakdown; repeat for several (default: those of the paper's Table 3 "
                    "that bufsim has, and opt)")
    an.add_argument("--seed", type=int, default=42, help="seed of the breakdown's random policies (default: 42)")
    an.set_defaults(func=cmd_analyze)

    mr = sub.add_parser("mrc", help="LRU miss ratio curve in one pass (exact, and SHARDS sampling)",
                        description="The LRU miss ratio curve of TRACE from one pass: exact by stack distance "
                        "(Mattson; equal to `bufsim run --policy lru` at every size) and, with --shards or "
                        "--shards-size, its SHARDS estimate by spatial sampling with its error against the exact "
                        "curve. See docs/analysis.md.")
    trace_options(mr)
    mr.add_argument("--sizes", action="append", metavar="SIZES",
                    help="cache sizes, comma-separated or repeated (64MiB,2000blocks), or `all` for every size "
                    "(default: 1 block, then four sizes per doubling up to the footprint)")
    mr.add_argument("--shards", type=float, metavar="RATE", help="also estimate by SHARDS at this sampling rate, e.g. 0.01")
    mr.add_argument("--shards-size", type=int, metavar="BLOCKS",
                    help="also estimate by fixed-size SHARDS keeping at most this many sampled blocks, e.g. 8192")
    mr.add_argument("--no-exact", action="store_true", help="SHARDS only (no exact curve, so no error report)")
    mr.add_argument("--seed", type=int, default=42, help="seed of the SHARDS sampling hash (default: 42)")
    mr.set_defaults(func=cmd_mrc)


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
    add_timing_options(run)
    add_storage_options(run)
    run.add_argument("--jobs", "-j", type=int, default=0, help="worker threads (default: all cores)")
    run.add_argument("--json", action="store_true", help="print one JSON object per run instead of a table")
    run.add_argument("--check", action="store_true", help="verify cache and policy invariants after each run")
    add_first_level_options(run)
    run.add_argument("--skip-bad", action="store_true",
                     help="count and pass over malformed trace records (reported on stderr) instead of stopping at the first")
    run.set_defaults(func=cmd_run)

    flt = sub.add_parser("filter", help="write the second-level stream a trace makes through first-level caches",
                         description="Pass TRACE through first-level client caches (MQ paper) and write their misses "
                         "(and, with --write-back, write-backs) in order as a device-addressed block-csv trace, the "
                         "stream a shared second-level cache sees.")
    flt.add_argument("trace", help="trace file")
    flt.add_argument("--out", "-o", required=True, metavar="OUT.csv", help="where to write the second-level trace")
    add_trace_options(flt)
    add_first_level_options(flt, required=True)
    flt.add_argument("--json", action="store_true", help="print one JSON object per client")
    flt.set_defaults(func=cmd_filter)


    cv = sub.add_parser("convert", help="convert a trace into bufsim's binary format (.bst), the fastest to read",
                        description="Read TRACE in any format bufsim reads (gzip or zstd compressed or not) and write "
                        "it as a .bst file: fixed-size records with only the columns the trace has, read memory-mapped. "
                        "The output appears only if the whole trace was read.")
    cv.add_argument("trace", help="trace file (formats: see --format)")
    cv.add_argument("--out", "-o", required=True, metavar="OUT.bst", help="where to write the binary trace")
    cv.add_argument("--format", default="auto", metavar="F",
                    help=f"input format: auto (detect from content) or one of {', '.join(_core.FORMATS)}; "
                    "blkparse(event=C) or (event=D) takes completions or dispatches (default: auto)")
    cv.add_argument("--skip-bad", action="store_true",
                    help="count and leave out malformed records (reported on stderr) instead of stopping")
    cv.add_argument("--json", action="store_true", help="print what was written as one JSON object")
    cv.set_defaults(func=cmd_convert)

    pol = sub.add_parser("policies", help="list replacement policies with parameters, defaults and papers")
    pol.add_argument("--json", action="store_true", help="one JSON object per policy")
    pol.set_defaults(func=cmd_policies)

    pre = sub.add_parser("prefetchers", help="list read-ahead algorithms with parameters and sources")
    pre.set_defaults(func=cmd_prefetchers)

    dev = sub.add_parser("devices", help="list device models, presets and I/O schedulers of timed mode")
    dev.add_argument("--json", action="store_true", help="one JSON object per entry")
    dev.set_defaults(func=cmd_devices)

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
    add_timing_options(sw, sweep=True)
    add_storage_options(sw)
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

    col = sub.add_parser(
        "collect", help="run a command under strace and record its file I/O as a trace with program contexts",
        usage="bufsim collect -o TRACE [options] -- COMMAND [ARGS...]",
        description="Run COMMAND (and every process and thread it starts) under `strace -f -k -y -ttt -T` "
        "and write its reads and writes of regular files as bufsim interchange CSV: time_us, dur_us, pid, "
        "ctx (a hash of the call stack, AMP's program context), op, file (DEV:INO:PATH), offset, size. "
        "Needs strace (Debian/Ubuntu: apt-get install strace). With --tracer kernel (root, tracefs) the "
        "kernel's tracepoints record the same columns with true timing, and TRACE.pagecache.csv gets the page "
        "cache's own lookups, insertions, evictions, read-ahead and disk requests. See docs/collect.md.",
        epilog="Exit status: the command's own; 128+N if a signal N killed it; 127 if it was not found, "
        "126 if it is not executable; 2 for bufsim's own errors (bad options, strace missing). The trace "
        "written so far stays valid whatever stops the command.")
    col.add_argument("--output", "-o", required=True, metavar="TRACE", help="CSV trace to write")
    col.add_argument("--stack-depth", type=int, default=0, metavar="N",
                     help="frames hashed into the program context, innermost first, after skipping the C "
                     "library, loader and vDSO (default: 0, the whole stack, as AMP does)")
    col.add_argument("--no-stacks", action="store_true",
                     help="trace without -k (about 10x faster); every ctx is then 0")
    col.add_argument("--reads-only", action="store_true", help="record reads only")
    col.add_argument("--include", action="append", metavar="DIR",
                     help="record only files under DIR (symlinks resolved); repeatable")
    col.add_argument("--exclude", action="append", metavar="PATTERN",
                     help="skip files under a directory, or matching a glob such as '*.so*'; repeatable")
    from bufsim.collect_paths import NO_LIBS_PATTERNS

    col.add_argument("--no-libs", action="store_true",
                     help="skip the loader's and libraries' reads and pseudo-files: " + ", ".join(NO_LIBS_PATTERNS))
    col.add_argument("--tracer", choices=("strace", "kernel"), default="strace",
                     help="strace (default: whole user call stacks) or kernel (tracefs tracepoints, root only: "
                     "true timing, about 1/5 of strace's slowdown or less, and the page cache's own hits, "
                     "insertions, evictions, read-ahead and disk requests in TRACE.pagecache.csv)")
    col.add_argument("--timeout", type=float, metavar="SECONDS",
                     help="with --tracer kernel: kill the command after SECONDS; the trace stays valid")
    col.add_argument("--keep-strace", metavar="FILE", help="also save strace's raw output to FILE")
    col.add_argument("--from-strace", metavar="LOG",
                     help="convert a saved `strace -f [-k] -y -ttt -T` log instead of running a command")
    col.add_argument("command", nargs=argparse.REMAINDER, help="the command to trace, after --")
    col.set_defaults(func=cmd_collect)
    from bufsim.workloads import add_command as add_workloads_command

    add_workloads_command(sub)


    add_analysis_commands(sub)

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
    rep.add_argument("--quick", action="store_true",
                     help="a reduced version that finishes in a few minutes (storage-aware: a quarter of each trace and every "
                     "other age, about 8 times faster)")
    rep.set_defaults(func=cmd_reproduce)
    add_amp_commands(sub)
    return ap


# Said when a trace has a header but no request, so a table of zeros is not taken for a result.
EMPTY_TRACE = "the trace holds no requests (a header only?); every count below is 0"


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
    except BrokenPipeError:
        # The reader stopped early (`bufsim ... | head`): not an error. Point stdout at
        # /dev/null so the interpreter's final flush does not complain again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (BufsimError, OSError) as e:
        print(f"bufsim: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        try:
            print("bufsim: interrupted", file=sys.stderr)
        except OSError:
            pass  # stderr already gone (the parent stopped listening)
        return 130


if __name__ == "__main__":
    sys.exit(main())
