"""The ``bufsim`` command line. Heavy modules (pandas, matplotlib) are imported only by the
subcommands that need them, so ``bufsim run`` starts fast."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, Sequence

from bufsim import _core

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
    p.add_argument("--seed", type=int, default=42,
                   help="seed of every random choice; same inputs and seed give identical results (default: 42)")


def cmd_run(args: argparse.Namespace) -> int:
    from bufsim.api import _run

    results = _run(
        args.trace, args.policy or ["lru"], args.cache or ["64MiB"],
        format=args.format, block_size=args.block_size, reads_only=args.reads_only,
        seed=args.seed, jobs=args.jobs, check=args.check,
    )
    if args.json:
        for r in results:
            print(json.dumps(r.to_dict()))
        return 0
    headers = ["policy", "cache", "blocks", "requests", "accesses", "hits", "misses", "hit ratio"]
    rows = [
        [r.policy, human_bytes(r.cache_blocks * r.block_size), r.cache_blocks, r.requests,
         r.accesses, r.hits, r.misses, f"{r.hit_ratio:.4f}"]
        for r in results
    ]
    print(format_table(headers, rows, [False, True, True, True, True, True, True, True]))
    return 0


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
    add_trace_options(run)
    run.add_argument("--jobs", "-j", type=int, default=0, help="worker threads (default: all cores)")
    run.add_argument("--json", action="store_true", help="print one JSON object per run instead of a table")
    run.add_argument("--check", action="store_true", help="verify cache and policy invariants after each run")
    run.set_defaults(func=cmd_run)

    pol = sub.add_parser("policies", help="list replacement policies with parameters, defaults and papers")
    pol.add_argument("--json", action="store_true", help="one JSON object per policy")
    pol.set_defaults(func=cmd_policies)
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
        print("bufsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
