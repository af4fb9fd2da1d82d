"""Command-line flags of run options, generated from the core's option table, and the first
level's flags. Flags are named as the Python keywords they set."""

from __future__ import annotations

import argparse
import re
import sys

from bufsim import _core
from bufsim._core import SpecError
from bufsim.errors import U64_MAX, whole

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Sequence

EXIT_USAGE = 2

# Titles of the option groups `--help` shows, by section of the core's option table.
SECTION_TITLES = {
    "trace": "trace",
    "run": "simulation",
    "timing": "timed mode (docs/timing.md; any of these turns timing on)",
    "layout": "layout",
    "storage": "storage-aware caching (docs/storage-aware.md; all but --array turn timing on)",
    "execution": "execution",
}


# Options a sweep takes several values of (its grid), one value elsewhere.
GRID_OPTIONS = tuple(_core.GRID_OPTIONS)

# What the table cannot say itself: lists only known at run time.
EXTRA_HELP = {
    "format": lambda: (
        f"; one of {', '.join(_core.FORMATS)}; blkparse(event=C) or (event=D) takes "
        "completions or dispatches instead of queue events"
    )
}


class KeyedAppend(argparse._AppendAction):
    """A repeatable ``KEY=VALUE`` option (``--device-for 3=ssd``) that refuses an entry naming
    every key of an earlier one again: the later would win and the earlier do nothing, silently.
    ``keys`` reads an entry's keys (``None``: unreadable, left to the option's own check);
    ``noun`` names a key in errors."""

    def __init__(self, *args, keys: Callable[[str], set[int] | None], noun: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.keys, self.noun = keys, noun

    def __call__(self, parser, namespace, values, option_string=None):
        entries = given_values(parser).setdefault(self, [])
        new = self.keys(values)
        for earlier, old in entries:
            if new is not None and old is not None and old <= new:
                ids = ", ".join(map(str, sorted(old)[:3])) + (", ..." if len(old) > 3 else "")
                plural = "s" if len(old) > 1 else ""
                how = (
                    f"give each {self.noun} once"
                    if old == new
                    else f"a later entry wins, so {earlier} would do nothing: give a range before its exceptions"
                )
                parser.error(
                    f"{long_name(self)} given twice for {self.noun}{plural} {ids} ({earlier}, {values}): {how}"
                )
        entries.append((values, new))
        super().__call__(parser, namespace, values, option_string)


def given_values(parser) -> dict:
    """What this parse of ``parser`` has taken so far, by action (``_Parser`` resets it)."""
    return parser.__dict__.setdefault("given", {})


def long_name(action: argparse.Action) -> str:
    """How errors name an option: its long flag (``--policy``, not ``-p``)."""
    return next((s for s in action.option_strings if s.startswith("--")), action.option_strings[0])


def entry_keys(name: str) -> Callable[[str], set[int] | None]:
    """The keys of one entry of the keyed option ``name`` (``--device-for 0-7=SPEC`` names
    devices 0 to 7), as the core reads them: its canonical form has one ``ID=VALUE`` per key.
    ``None`` for an entry the core refuses; the run says why."""

    def keys(entry: str) -> set[int] | None:
        from bufsim.options import Options

        try:
            canonical = Options({name: [entry]}).resolved().get(name) or ""
        except SpecError:
            return None
        return {int(item.partition("=")[0]) for item in canonical.split(";") if item} or None

    return keys


def client_ids(entry: str) -> set[int] | None:
    """The client of a ``--first-level-clients`` entry ``ID=SPEC@SIZE``."""
    ident = entry.partition("=")[0].strip()
    return {int(ident)} if ident.isdigit() else None


def number_or_text(text: str, lo: int = 0, hi: int = U64_MAX) -> int | str:
    """Integer options that also take units (block sizes): digits, signed or not, are a number
    from ``lo`` to ``hi`` (a refusal then names the range), the rest text for the core."""
    if not text.strip().removeprefix("-").isdigit():
        return text
    return whole(str(int(text)), lo, hi)  # leading zeros allowed, as int() reads them


def option_type(f) -> Callable[[str], int | str]:
    """The argparse type of an option of the core's table: a number in the range the core
    declares for it (``OptionField.range``), so an out-of-range value is refused with the
    range the core holds it to."""
    lo, hi = f.range or (0, U64_MAX)
    if f.sql == "UBIGINT":
        return lambda text: whole(text, lo, hi)
    if f.sql == "BIGINT":
        return lambda text: number_or_text(text, lo, hi)
    return str


def add_options(
    p: argparse.ArgumentParser, sections: Sequence[str], *, grid: bool = False, only: Sequence[str] = ()
) -> None:
    """One flag per run option of these sections of the core's option table, named as its
    Python keyword (``io_scheduler`` is ``--io-scheduler``), documented by the table. Unset
    flags stay out of the options, so the core's defaults hold. ``grid``: sweeps repeat
    ``--device`` and ``--io-scheduler``; ``only``: just these options of the sections."""
    from bufsim.options import OPTION_FIELDS

    groups: dict[str, argparse._ArgumentGroup] = {}
    for f in OPTION_FIELDS:
        if f.section not in sections or (only and f.name not in only):
            continue
        if f.section not in groups:
            groups[f.section] = p.add_argument_group(SECTION_TITLES[f.section])
        g = groups[f.section]
        names = list(f.flags)  # the core's spelling, which the native entry point reads too
        repeat = f.many and (grid or f.name not in GRID_OPTIONS)
        extra = EXTRA_HELP[f.name]() if f.name in EXTRA_HELP else ""
        help = f"{f.doc.rstrip('.')}{extra}{'; repeatable' if repeat else ''} (default: {f.shown_default})".replace(
            "%", "%%"
        )
        if f.sql == "BOOLEAN" and f.default is True:
            # On by default: the flag turns it off.
            g.add_argument(*names, dest=f.name, action="store_false", default=None, help=f"turn off: {help}")
        elif f.sql == "BOOLEAN":
            g.add_argument(*names, dest=f.name, action="store_true", default=None, help=help)
        else:
            keyed = {"keys": entry_keys(f.name), "noun": f.keyed} if f.keyed else {}
            g.add_argument(
                *names,
                dest=f.name,
                action=(KeyedAppend if keyed else "append") if repeat else "store",
                **keyed,
                type=option_type(f),
                default=None,
                metavar=f.name.upper(),
                help=help,
            )


def options_of(args: argparse.Namespace):
    """The options the command line set (flags from :func:`add_options`, and a first level)."""
    from bufsim.options import OPTION_FIELDS, Options

    given = {f.name: getattr(args, f.name) for f in OPTION_FIELDS if f.name != "first_level" and hasattr(args, f.name)}
    if hasattr(args, "first_level"):
        given["first_level"] = first_level_of(args)
    return Options(given)


def add_first_level_options(p: argparse.ArgumentParser, required: bool = False) -> None:
    from bufsim.hierarchy import CLIENT_COLUMNS, FirstLevel

    default = FirstLevel.DEFAULTS
    g = p.add_argument_group(
        "hierarchy (MQ paper)",
        "simulate the second level: the trace first goes through "
        "first-level client caches and only their misses (or write-backs) go on",
    )
    g.add_argument(
        "--first-level", metavar="SPEC", required=required, help="first-level policy of every client, e.g. lru"
    )
    g.add_argument(
        "--first-level-cache",
        metavar="SIZE",
        help=f"first-level cache size of every client (default: {default['cache']}; 0 passes everything)",
    )
    g.add_argument(
        "--first-level-client",
        choices=CLIENT_COLUMNS,
        default=default["client"],
        help=f"trace column telling clients apart (default: {default['client']})",
    )
    g.add_argument(
        "--first-level-clients",
        action=KeyedAppend,
        keys=client_ids,
        noun="client",
        metavar="ID=SPEC@SIZE",
        default=[],
        help="a different first level for one client, e.g. 3=lru@16MiB; repeatable",
    )
    g.add_argument(
        "--first-level-write-back",
        action="store_true",
        help="write-back first level: writes reach the second level when dirty blocks are evicted "
        "(default: every first-level miss goes down as itself)",
    )


def first_level_of(args: argparse.Namespace):
    from bufsim.hierarchy import FirstLevel

    if not args.first_level:
        given = (
            args.first_level_clients
            or args.first_level_write_back
            or args.first_level_client != "all"
            or args.first_level_cache is not None
        )
        if given:
            raise SpecError(
                "--first-level-cache, --first-level-client, --first-level-clients and --first-level-write-back "
                "describe a first level: give --first-level SPEC too"
            )
        return None
    clients = dict(FirstLevel.parse_client(c) for c in args.first_level_clients)
    cache = FirstLevel.DEFAULTS["cache"] if args.first_level_cache is None else args.first_level_cache
    return FirstLevel(
        args.first_level,
        cache,
        client=args.first_level_client,
        write_back=args.first_level_write_back,
        clients=clients,
    )


_SI_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kKMGT])B\s*")


def note_si_sizes(sizes: Sequence[object] | None, block_size: object = None) -> None:
    """Says on standard error what a decimal (SI) size became: ``64MB`` is 64,000,000 bytes, not
    the 64 MiB a reader may expect, and a cache holds whole blocks of it."""
    from bufsim.api import block_size_bytes

    bs = block_size_bytes(block_size if block_size is not None else 4096)
    for size in sizes or []:
        m = _SI_SIZE.fullmatch(str(size))
        if not m:
            continue
        power = "kMGT".index(m.group(2).replace("K", "k")) + 1
        nbytes = float(m.group(1)) * 1000**power
        blocks = _core.size_to_blocks(str(size), bs)
        binary = f"{m.group(1)}{'KMGT'[power - 1]}iB"
        print(
            f"bufsim: note: {str(size).strip()} is {nbytes:,.0f} bytes (decimal units), {blocks:,} blocks of {bs:,} B "
            f"({blocks * bs / 2**20:,.1f} MiB); write {binary} for {m.group(1)} x 2^{10 * power} bytes",
            file=sys.stderr,
        )
