"""The ``bufsim`` command line: one module per command group. Heavy modules (pandas,
matplotlib) are imported only by the subcommands that need them, so ``bufsim run`` starts fast."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Sequence

from bufsim import _core
from bufsim.cli import amp, analysis, catalog, figures, simulation, traces, workloads
from bufsim.cli.options import EXIT_USAGE

__all__ = ["build_parser", "main", "EXIT_USAGE"]


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps help text between words only: names such as `block-csv` stay whole."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="bufsim",
        description="Trace-driven buffer cache simulator: replacement policies, read-ahead, "
        "disk timing and partitioned caches on real traces.",
        epilog="Sizes take units: 64MiB, 4KiB, 1GiB, or a block count such as 2000blocks. "
        "Run `bufsim COMMAND --help` for a command's options.",
    )
    ap.add_argument("--version", action="version", version=f"bufsim {_core.__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    # In the order `bufsim --help` lists them.
    simulation.add_run(sub)
    traces.add_filter_and_convert(sub)
    catalog.add_commands(sub)
    simulation.add_sweep(sub)
    traces.add_collect(sub)
    analysis.add_commands(sub)
    figures.add_commands(sub)
    amp.add_commands(sub)
    workloads.add_commands(sub)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    from bufsim._core import BufsimError
    from bufsim.errors import guard

    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return guard(func, args)
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
