"""`bufsim validate`: the model beside the live kernel's page cache."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys


def cmd_validate(args: argparse.Namespace) -> int:
    from bufsim.validate import format_table, plot, to_json, validate

    if args.plot is not None:
        from bufsim.plots import check_figure_path

        check_figure_path(args.plot, "--plot")  # before the command runs, not after
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    # Its errors (CollectError) are BufsimErrors, which the command line prints with their exit status.
    with _command_output_to_stderr() if args.json else contextlib.nullcontext():
        results = validate(
            command,
            args.memory or [],
            out_dir=args.out_dir,
            policy=args.policy,
            prefetch=args.prefetch,
            timeout=args.timeout,
        )
    print(to_json(results) if args.json else format_table(results))
    if args.plot is not None:
        plot(results, args.plot)
    failed = [c.command_status for c in results if c.command_status]
    return failed[0] if failed else 0


@contextlib.contextmanager
def _command_output_to_stderr():
    """Points standard output at standard error while the command runs (it inherits both), so
    that with --json standard output holds only the JSON."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def add_commands(sub) -> None:
    p = sub.add_parser(
        "validate",
        help="run a command in a memory-limited cgroup and compare the kernel's page cache with the model",
        usage="bufsim validate --memory SIZE [--memory SIZE ...] [options] -- COMMAND [ARGS...]",
        description="As root: for each --memory SIZE, drop the page cache, run COMMAND in a memory cgroup "
        "limited to SIZE under the kernel tracer, replay its requests through the model (the linux policy "
        "and linux-6 read-ahead with the device's read_ahead_kb) with the memory the command's page cache "
        "had at each request (SIZE less the cgroup's anonymous, shared and kernel memory and untraced files' pages "
        "at that time, followed as cache steps), and "
        "print both side by side: pages brought into the cache, read-ahead decisions (the share the model "
        "made with the same start, size and async size), evicted pages (overlap of the two sets), disk "
        "requests. One validation runs at a time (each drops the page cache). See docs/validation.md.",
    )
    p.add_argument("--memory", "-m", action="append", metavar="SIZE", help="cgroup memory limit (repeatable)")
    p.add_argument(
        "--json", action="store_true", help="one JSON object per memory size (the command's own output goes to stderr)"
    )
    p.add_argument("--plot", metavar="OUT.png", help="also draw pages read and agreement by memory size")
    p.add_argument("--out-dir", metavar="DIR", help="keep the recorded traces here (default: a temporary directory)")
    p.add_argument("--policy", default="linux", metavar="SPEC", help="the model's policy (default: linux)")
    p.add_argument(
        "--prefetch",
        metavar="SPEC",
        help="the model's read-ahead (default: linux-6 with max = the device's read_ahead_kb / 4)",
    )
    p.add_argument("--timeout", type=float, metavar="S", help="kill the command after S seconds")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    p.set_defaults(func=cmd_validate)
