"""`bufsim run`, `bufsim sweep` and `bufsim results`: simulations and their database."""

from __future__ import annotations

import argparse
import json
import numbers
import os

from bufsim import _core
from bufsim._core import SpecError
from bufsim.errors import say
from bufsim.cli.options import add_first_level_options, add_options, note_si_sizes, options_of
from bufsim.tables import results_table, results_text

# Said when a trace has a header but no request, so a table of zeros is not taken for a result.
EMPTY_TRACE = "the trace holds no requests (it is empty, or holds only a header or comments)"


def cmd_run(args: argparse.Namespace) -> int:
    import warnings

    from bufsim.api import run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skipped records are reported below, once
        results = run(
            args.trace,
            args.policy or ["lru"],
            args.cache or ["64MiB"],
            options_of(args),
            prefetches=args.prefetch or ["none"],
            progress=args.progress,
        )
    # After the runs, so a failing command still prints one line.
    note_si_sizes(args.cache, args.block_size)
    if results:
        warn_skipped(args.trace, results[0].skipped)
    if results:
        warn_if_empty(args.trace, results[0].requests)
        warn_unreached_steps(args.trace, results[0].cache_steps, results[0].cache_steps_unreached)
    print(results_text(results, args.json))
    return 0


def warn_if_empty(trace: str, count: int, then: str = "every count below is 0") -> None:
    """Says on standard error that a trace holds no requests (``count``: its requests or block
    accesses), so a table of zeros (or an empty output: ``then`` says which) is not taken for a
    result."""
    if count == 0:
        say("warning", f"{trace}: {EMPTY_TRACE}; {then}")


def warn_unreached_steps(trace: str, cache_steps: str | None, unreached: int | None) -> None:
    """Says on standard error that cache steps came after the trace's last request (a sweep's
    row read back from an older database may hold no count, or NaN)."""
    if isinstance(unreached, numbers.Integral) and unreached > 0:
        from bufsim.api import unreached_steps_text

        say("warning", unreached_steps_text(trace, cache_steps or "", unreached))


def warn_skipped(trace: str, skipped: str) -> None:
    """Says on standard error that a trace read with --skip-bad passed over malformed records:
    ``skipped`` is the core's line (how many, and where the first are; "" for none)."""
    if skipped:
        from bufsim.formats import skipped_text

        say("warning", skipped_text(trace, skipped))


def cmd_sweep(args: argparse.Namespace) -> int:
    from bufsim.sweeps import SweepSpec, run_sweep

    options = options_of(args)
    grid = {
        "policies": args.policy,
        "caches": args.cache,
        "prefetches": args.prefetch,
        "devices": options.get("device"),
        "io_schedulers": options.get("io_scheduler"),
    }
    options = options.replace(device=None, io_scheduler=None, jobs=None)
    if args.config:
        # The experiment file, with what the command line gives on top.
        spec = SweepSpec.from_toml(args.config)
        spec.traces += args.trace
        for name, values in grid.items():
            if values:
                setattr(spec, name, list(values))
        spec.options = spec.options.replace(**options)
    else:
        if not args.trace:
            raise SpecError("give at least one TRACE (or --config FILE)")
        spec = SweepSpec(
            args.trace,
            args.policy or ["lru"],
            args.cache or ["64MiB"],
            args.prefetch,
            devices=grid["devices"],
            io_schedulers=grid["io_schedulers"],
            options=options,
        )
    df = run_sweep(
        spec,
        args.out,
        resume=args.resume,
        jobs=args.jobs or 0,
        dask=args.dask,
        progress=False if args.quiet else args.progress,
    )
    note_si_sizes(args.cache, args.block_size)
    from bufsim.sweeps import json_of_row, result_of_row

    rows = df.to_dict("records")
    # Each trace's reader says what it skipped; every run of a trace has the same line.
    for trace, skipped in dict.fromkeys((row["trace"], row.get("skipped") or "") for row in rows):
        warn_skipped(trace, skipped)
    # As `run` says it: a trace without requests gives rows of zeros, not results.
    for trace, requests in dict.fromkeys((row["trace"], row.get("requests")) for row in rows):
        if requests is not None:
            warn_if_empty(trace, requests)
    for trace, steps, unreached in dict.fromkeys(
        (row["trace"], row.get("cache_steps"), row.get("cache_steps_unreached")) for row in rows
    ):
        warn_unreached_steps(trace, steps, unreached)
    if args.json:
        for row in rows:
            print(json.dumps(json_of_row(row), default=str))
    else:
        # The run table has no trace column: several traces get a table each, under its path.
        by_trace: dict[str, list] = {}
        for row in rows:
            by_trace.setdefault(row["trace"], []).append(result_of_row(row))
        tables = [results_table(results) for results in by_trace.values()]
        if len(by_trace) > 1:
            tables = [f"{trace}:\n{table}" for trace, table in zip(by_trace, tables)]
        print("\n\n".join(tables))
        # One row per grid cell (a run named twice, `-p lru -p LRU`, is shown twice), one per
        # run in the database: count those.
        print(f"\n{len(df.drop_duplicates(subset=['key', 'trace']))} runs in {args.out}")
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    from bufsim.sweeps import database_errors, export_runs, finite_columns, read_only_results

    if not os.path.lexists(args.db):
        raise FileNotFoundError(f"{args.db}: no such results database; run `bufsim sweep` first")
    if args.action == "export" and not args.out:
        raise SpecError("say where to write: bufsim results export DB -o OUT.csv (or .jsonl, .parquet)")
    if args.action == "show" and args.out:
        # Refused, not ignored: a user who asked for a file must not find none.
        raise SpecError(
            f"--out {args.out}: show prints to the terminal; to write a file use "
            f"bufsim results export {args.db} -o {args.out}"
        )
    # Read-only: looking at or exporting a database never changes it.
    con = read_only_results(args.db)
    try:
        with database_errors(args.db):
            if args.action == "export":
                # The --where and --columns of show, so an export holds the runs show lists; the
                # table is read into pandas only to filter it.
                rows = (
                    _where(con.execute(f"SELECT {finite_columns(con)} FROM runs").df(), args.where)
                    if args.where
                    else None
                )
                columns = _columns([d[0] for d in con.execute("SELECT * FROM runs LIMIT 0").description], args.columns)
                n = export_runs(con, args.out, args.db, rows=rows, columns=columns)
                matched = f" (no runs match {' and '.join(args.where)})" if args.where and not n else ""
                print(f"{n} runs written to {args.out}{matched}")
            else:
                # A NaN or infinity a hand edit left is a NULL, as export writes it.
                runs = con.execute(f"SELECT {finite_columns(con)} FROM runs ORDER BY finished_at, key, trace").df()
                print(_runs_text(runs, args))
    finally:
        con.close()
    return 0


# What `results show` prints without --columns (those the database has), and for timed runs.
SHOWN = ["trace", "policy", "prefetch", "cache_blocks", "accesses", "misses", "miss_ratio", "disk_requests"]
SHOWN_TIMED = ["device", "io_scheduler", "exec_time_s", "io_time_s", "stall_time_s"]


def _runs_text(df, args: argparse.Namespace) -> str:
    import pandas as pd

    df = _where(df, args.where)
    cols = _columns(list(df.columns), args.columns)
    if cols is None:
        cols = SHOWN
        if "exec_time_s" in df and df["exec_time_s"].notna().any():
            cols = cols + SHOWN_TIMED
        cols = [c for c in cols if c in df.columns]
    if df.empty:
        # Said in words, not as pandas' "Empty DataFrame".
        return f"no runs match {' and '.join(args.where)}" if args.where else "no runs in this database"
    shown = df[cols]
    if "trace" in cols:
        shown = shown.assign(trace=df["trace"].map(lambda t: os.path.basename(str(t))))
    # A NULL (a timing field of a count-mode run) is `-`, as bufsim's other tables show a
    # missing value, not pandas' NaN, None or <NA>. `na_rep` replaces it in a column of floats
    # (kept as floats, so their digits line up); in any other column (whole numbers, text) it
    # is written in.
    other = [c for c in shown.columns if not pd.api.types.is_float_dtype(shown[c]) and shown[c].isna().any()]
    shown = shown.assign(**{c: shown[c].astype(object).where(shown[c].notna(), "-") for c in other})
    return shown.to_string(index=False, na_rep="-")


def _where(df, conds: list[str] | None):
    """The runs of ``df`` that every ``--where COLUMN=VALUE`` keeps (`show` and `export`)."""
    for cond in conds or []:
        column, sep, value = cond.partition("=")
        if not sep or column not in df.columns:
            raise SpecError(f"--where {cond!r}: give COLUMN=VALUE with a column of the runs table")
        if value.startswith("="):
            # `policy==lru`: a value that starts with `=` is a doubled sign far more often than
            # a value of the table.
            raise SpecError(f"--where {cond!r}: write one `=`, as in {column}={value.lstrip('=')}")
        df = df[_matches(df, column, value, cond)]
    return df


def _columns(known: list[str], text: str | None) -> list[str] | None:
    """The columns ``--columns A,B`` names, in its order, each one of ``known`` (`show` and
    `export`); None without the option."""
    if not text:
        return None
    cols = [c.strip() for c in text.split(",") if c.strip()]
    if not cols:
        raise SpecError(f"--columns {text!r}: give column names separated by commas, such as policy,misses")
    unknown = [c for c in cols if c not in known]
    if unknown:
        raise SpecError(f"--columns: no column {', '.join(unknown)}; known: {', '.join(known)}")
    twice = list(dict.fromkeys(c for c in cols if cols.count(c) > 1))
    if twice:
        raise SpecError(f"--columns {text!r}: {', '.join(twice)} named twice; name each column once")
    return cols


_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


def _matches(df, column: str, value: str, cond: str):
    """The rows of ``df`` that ``--where COLUMN=VALUE`` keeps, compared as the column's type:
    a number column by value (``hit_ratio=0`` finds 0.0), a yes/no column by truth
    (``reads_only=true``), a trace by path, file name (as `show` prints it) or hash prefix,
    other text as written, and a policy or read-ahead spec in any spelling."""
    import pandas as pd

    from bufsim.plots import refuse_unmatched_specs, select, spellings

    col, text = df[column], value.strip()
    if pd.api.types.is_bool_dtype(col):
        if text.lower() not in _TRUE + _FALSE:
            raise SpecError(f"--where {cond!r}: {column} is true or false; give {column}=true or {column}=false")
        return (col == (text.lower() in _TRUE)).fillna(False).astype(bool)
    if pd.api.types.is_numeric_dtype(col):
        try:
            # Whole numbers as integers: a 64-bit seed has more digits than a float keeps.
            number = int(text) if text.lstrip("+-").isdigit() else float(text)
        except ValueError:
            raise SpecError(f"--where {cond!r}: {column} holds numbers; give one, such as {column}=1024") from None
        return (col == number).fillna(False).astype(bool)  # a NULL (a count-mode timing field) is no match
    if column == "trace":
        # As `show` prints it (the file name), the path, or a hash prefix: plot's --trace.
        return df.index.isin(select(df, traces=[value]).index)
    # A policy or read-ahead spec matches in any spelling (the table holds the canonical one);
    # one the core cannot read that matches nothing is refused with the core's reason.
    refuse_unmatched_specs(column, [value], col.dropna(), option=f"--where {cond!r}")
    return col.astype(str).isin(spellings(column, [value]))


def add_run(sub) -> None:
    run = sub.add_parser(
        "run",
        help="simulate policies x cache sizes over a trace and print a table",
        description="Simulate every --policy at every --cache size over TRACE. The trace "
        "is decoded once and the runs share it, in parallel on all cores.",
    )
    run.add_argument("trace", help="trace file, or - for standard input (formats: see --format)")
    run.add_argument(
        "--policy",
        "-p",
        action="append",
        metavar="SPEC",
        help="policy spec such as lru, lfu(aging=dynamic); repeat for several (default: lru). "
        "`bufsim policies` lists them",
    )
    run.add_argument(
        "--cache",
        "-c",
        action="append",
        metavar="SIZE",
        help="cache size such as 64MiB or 2000blocks; repeat for several (default: 64MiB)",
    )
    run.add_argument(
        "--prefetch",
        action="append",
        metavar="SPEC",
        help="read-ahead: none, linux, linux-ondemand, bsd or simple(min=3,max=8); repeat for "
        "several (default: none). `bufsim prefetchers` lists them",
    )
    add_options(run, _core.RUN_SECTIONS)  # the sections the native entry point reads too
    add_first_level_options(run)
    run.add_argument("--json", action="store_true", help="print one JSON object per run instead of a table")
    run.set_defaults(func=cmd_run)


def add_sweep(sub) -> None:
    sw = sub.add_parser(
        "sweep",
        help="run policies x read-ahead x cache sizes over traces into a results database",
        description="Run every combination over every TRACE, in parallel on all cores (or on a "
        "Dask cluster with --dask), writing each finished run to a DuckDB file. A sweep "
        "killed at any moment keeps every finished run; --resume skips them.",
    )
    sw.add_argument("trace", nargs="*", help="trace files")
    sw.add_argument(
        "--policy", "-p", action="append", metavar="SPEC", help="policy spec; repeat for several (default: lru)"
    )
    sw.add_argument(
        "--cache",
        "-c",
        action="append",
        metavar="SIZE",
        help="cache size, or a range START:END:x2 (geometric) or START:END:+STEP; repeatable (default: 64MiB)",
    )
    sw.add_argument("--prefetch", action="append", metavar="SPEC", help="read-ahead spec; repeatable (default: none)")
    add_options(sw, ["trace", "run", "timing", "layout", "storage"], grid=True)
    add_options(sw, ["execution"], only=["jobs", "skip_bad"])
    add_first_level_options(sw)
    sw.add_argument("--config", metavar="FILE", help="TOML experiment file (see docs/sweeps.md)")
    sw.add_argument(
        "--out", "-o", default="results.duckdb", metavar="DB", help="results database (default: results.duckdb)"
    )
    sw.add_argument("--resume", action="store_true", help="skip runs already in the database")
    sw.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on the Dask cluster whose scheduler is at ADDRESS, e.g. tcp://host:8786 (default: local threads)",
    )
    sw.add_argument("--json", action="store_true", help="print the rows as JSON lines")
    sw.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    sw.set_defaults(func=cmd_sweep)

    res = sub.add_parser(
        "results",
        help="show or export a results database",
        description="show: a table of the runs (choose --columns, filter with --where). export: the runs "
        "table as CSV, JSON lines or Parquet, chosen by the extension of -o; --where and --columns choose "
        "its rows and columns as for show (default: all). Examples: bufsim results show "
        "results.duckdb --where policy=lru --columns policy,cache_blocks,miss_ratio; "
        "bufsim results export results.duckdb -o runs.csv --where policy=lru",
    )
    res.add_argument("action", choices=["show", "export"])
    res.add_argument("db", nargs="?", default="results.duckdb", help="database (default: results.duckdb)")
    res.add_argument("--out", "-o", metavar="FILE", help="with export: FILE.csv, FILE.jsonl or FILE.parquet")
    res.add_argument(
        "--columns",
        metavar="A,B,...",
        help="only these columns, in this order (default: show the main counters, export all)",
    )
    res.add_argument(
        "--where",
        action="append",
        metavar="COLUMN=VALUE",
        help="only these runs; repeatable. Numbers compare as numbers (hit_ratio=0), yes/no columns "
        "take true or false, a trace its path, file name or hash prefix, a policy any spelling",
    )
    res.set_defaults(func=cmd_results)
