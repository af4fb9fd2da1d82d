"""The ``bufsim`` command line: one module per command group. Heavy modules (pandas,
matplotlib) are imported only by the subcommands that need them, and a command's parser is
built alone when the command line names it, so ``bufsim run`` starts fast."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from bufsim import _core
from bufsim.cli.options import EXIT_USAGE, given_values, long_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, NoReturn, Sequence

__all__ = ["build_parser", "main", "EXIT_USAGE"]


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps help text between words only: names such as `block-csv` stay whole."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        # argparse builds a formatter for every option it adds; left to itself it would import
        # shutil (and bz2, lzma) at start-up for the terminal's width.
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _terminal_columns() -> int:
    """The width help is wrapped to: ``COLUMNS`` when set, else the terminal's, else 80 (what
    ``shutil.get_terminal_size`` would say)."""
    try:
        columns = int(os.environ["COLUMNS"])
        if columns > 0:
            return columns
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class StoreOnce(argparse._StoreAction):
    """The action of every option that keeps one value: given twice, it is refused (argparse
    would keep the last without a word) and the error says which commands take several."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = given_values(parser)
        if self in given:
            name = long_name(self)
            several = _commands_taking_several(name, parser.prog)
            command = parser.prog.removeprefix("bufsim").strip()
            if several and command:
                what = f"`{command}` takes one {self.dest.replace('_', ' ')}; {several}"
            else:
                what = "give it once"
            parser.error(f"{name} given twice ({given[self]}, {values}): {what}")
        given[self] = values
        super().__call__(parser, namespace, values, option_string)


def _commands_taking_several(name: str, prog: str) -> str:
    """``"`sweep` takes several"``: the other commands where option ``name`` repeats ("" for
    none). Only said in an error, so the whole command line is built."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    several = [
        f"`{command}`"
        for command, p in sub.choices.items()
        if p.prog != prog
        and any(isinstance(a, argparse._AppendAction) and name in a.option_strings for a in p._actions)
    ]
    if not several:
        return ""
    listed = ", ".join(several[:-1]) + " and " + several[-1] if len(several) > 1 else several[0]
    return f"{listed} {'take' if len(several) > 1 else 'takes'} several"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        # Every option that keeps one value, in every command and group, refuses a second.
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def parse_known_args(self, args=None, namespace=None):
        self.given = {}  # what StoreOnce and KeyedAppend have taken in this parse
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        """A usage error on one line, as every other error (argparse prints the whole usage
        first): what is wrong and where the command's options are described."""
        m = re.fullmatch(r"argument (--[\w-]+)(?:/[\w-]+)*: expected one argument", message)
        if m:
            # argparse takes a value that starts with `-` (`--think -1s`) for another option.
            message += f" (a value that starts with `-` goes after `=`: {m.group(1)}=VALUE)"
        from bufsim.errors import printable

        self.exit(2, f"bufsim: error: {printable(message)}; see `{self.prog} --help`\n")


# The function of each command module that adds the commands listed, in the order
# `bufsim --help` lists them.
ADDERS = [
    ("simulation", "add_run", ["run"]),
    ("traces", "add_filter_and_convert", ["filter-trace", "convert"]),
    ("catalog", "add_commands", ["policies", "prefetchers", "devices", "options"]),
    ("simulation", "add_sweep", ["sweep", "results"]),
    ("traces", "add_collect", ["collect"]),
    ("analysis", "add_commands", ["analyze", "mrc"]),
    ("figures", "add_commands", ["plot", "heatmap", "report", "reproduce"]),
    ("amp", "add_commands", ["generate", "timeline", "detect"]),
    ("workloads", "add_commands", ["workloads"]),
    ("validate", "add_commands", ["validate"]),
]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or only what parsing `bufsim COMMAND ...` needs when `command`
    names one (its module alone is imported)."""
    ap = _Parser(
        prog="bufsim",
        description="Trace-driven buffer cache simulator: replacement policies, read-ahead, "
        "disk timing and partitioned caches on real traces.",
        epilog="Sizes take units: 64MiB, 4KiB, 1GiB, or a block count such as 2000blocks. "
        "Run `bufsim COMMAND --help` for a command's options.",
    )
    ap.add_argument("--version", action="version", version=f"bufsim {_core.__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    known = command is not None and any(command in names for _, _, names in ADDERS)
    for module, adder, names in ADDERS:
        if not known or command in names:
            getattr(importlib.import_module(f"bufsim.cli.{module}"), adder)(sub)
    for name, parser in sub.choices.items():
        if name in PROGRESS_COMMANDS:
            parser.add_argument(
                "--progress",
                action=argparse.BooleanOptionalAction,
                default=None,
                help="progress bars with the time left on stderr (default: only when stderr is a terminal)",
            )
        example = EXAMPLES[name]
        parser.epilog = f"{parser.epilog}\n\n" if parser.epilog else ""
        parser.epilog += "Example:\n" + "\n".join(f"  {line}" for line in example)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
    return ap


# The commands that can run longer than a couple of seconds: they show progress (bufsim.progress).
PROGRESS_COMMANDS = ("run", "convert", "sweep", "collect", "analyze", "mrc", "heatmap", "report", "reproduce")

# One example per command, shown at the end of its --help (a test checks every command has one).
EXAMPLES = {
    "run": [
        'bufsim run trace.csv -p lru -p "lirs(hir=1%)" -c 16MiB -c 64MiB',
        "bufsim run trace.csv -p lru -c 64MiB --timing --device ssd --io-scheduler deadline --json",
    ],
    "filter-trace": ["bufsim filter-trace trace.csv -o second-level.csv --first-level lru --first-level-cache 16MiB"],
    "convert": [
        "bufsim convert trace.csv.gz -o trace.bst",
        "zcat trace.csv.gz | bufsim convert - -o trace.bst",
        "bufsim convert trace.csv -o trace.oracleGeneral",
    ],
    "policies": ["bufsim policies", "bufsim policies --json"],
    "prefetchers": ["bufsim prefetchers"],
    "devices": ["bufsim devices"],
    "options": ["bufsim options", "bufsim options --results"],
    "sweep": [
        "bufsim sweep trace.csv -p lru -p arc -c 1024blocks:131072blocks:x2 --prefetch none --prefetch linux "
        "-o results.duckdb",
        "bufsim sweep trace.csv -p lru -c 64MiB -o results.duckdb --resume",
    ],
    "results": [
        "bufsim results show results.duckdb --where policy=lru",
        "bufsim results export results.duckdb -o runs.csv",
    ],
    "collect": [
        "bufsim collect -o grep.csv -- grep -r TODO /usr/include",
        "bufsim collect --tracer kernel -o cat.csv -- cat /var/log/syslog",
    ],
    "analyze": ["bufsim analyze trace.csv", "bufsim analyze trace.csv --json > analysis.json"],
    "mrc": ["bufsim mrc trace.csv --shards 0.01", "bufsim mrc trace.csv --json > mrc.json"],
    "plot": ["bufsim plot mrc results.duckdb -o mrc.pdf", "bufsim plot mrc mrc.json -o mrc.png"],
    "heatmap": ["bufsim heatmap trace.csv -p arc -c 1024blocks -c 4096blocks --windows 20 -o arc.png"],
    "report": ["bufsim report results.duckdb -o report.html"],
    "reproduce": ["bufsim reproduce prefetch-table1", "bufsim reproduce storage-aware --quick --json"],
    "generate": ["bufsim generate --list", "bufsim generate amp-mix --seed 1 -o mix.csv"],
    "timeline": ["bufsim timeline trace.csv -p amp -c 2000blocks --plot amp.png"],
    "detect": ["bufsim detect trace.csv"],
    "workloads": ["bufsim workloads", "bufsim workloads --json"],
    "validate": [
        "bufsim validate --memory 32MiB --memory 128MiB -- cat /usr/lib/x86_64-linux-gnu/libc.so.6",
        "bufsim validate -m 64MiB --json --plot v.png -- sqlite3 db.sqlite 'select count(*) from t'",
    ],
}


def main(argv: Sequence[str] | None = None) -> int:
    from bufsim._core import BufsimError
    from bufsim.errors import NamedOutput, guard, os_message, say

    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(words)
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        say("error", "give a command, such as `bufsim run TRACE -c 64MiB`; `bufsim --help` lists them all")
        return EXIT_USAGE
    if getattr(args, "progress", None) is not None:
        # Every bar the command draws, however deep (reproduce's runs, report's steps), follows it.
        from bufsim.progress import ENV

        os.environ[ENV] = "1" if args.progress else "0"
    stdout = sys.stdout
    sys.stdout = NamedOutput(stdout, "standard output")
    try:
        status = guard(func, args)
        # What the command printed is still buffered: a full or closed output fails here, where it
        # is reported, rather than at the interpreter's exit, which would drop it and exit 0.
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader stopped early (`bufsim ... | head`): not an error. Point stdout at
        # /dev/null so the interpreter's final flush does not complain again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except BufsimError as e:
        say("error", str(e))
        # A tracer's own error says how to exit (127: the command was not found).
        return getattr(e, "exit_status", EXIT_USAGE)
    except OSError as e:
        say("error", os_message(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        try:
            print("bufsim: interrupted", file=sys.stderr)
        except OSError:
            pass  # stderr already gone (the parent stopped listening)
        return 130
    finally:
        sys.stdout = stdout
