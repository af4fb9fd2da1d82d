"""Sweeps: many configurations over one or more traces, results kept in DuckDB.

Every run is keyed by a hash of its full configuration and the content hash of its trace, and
written in its own transaction the moment it finishes, so a sweep killed at any point (SIGINT or
SIGKILL) loses no finished run and leaves no partial row; ``resume`` skips what is already there.
Runs go to local threads (the simulation releases the GIL, and each trace is decoded once and
shared) or, given a Dask scheduler's address, to a Dask cluster whose workers load traces by path.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, field, make_dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

from bufsim import _core
from bufsim._core import SpecError
from bufsim.results import RESULT_FIELDS, TIMING_FIELDS, Result
from bufsim.options import OPTION_FIELDS, Options, SizeLike, size_text
from bufsim.errors import check_not_input, check_output, check_scheduler, database_message, not_utf8

DEFAULT_DB = "results.duckdb"

# The options that make a run what it is (what `jobs` or `check` say never changes a number;
# the format is a column of its own, the trace's detected format). Storage options share one
# column, `storage`: a JSON object of those set ("" for none).
RUN_OPTIONS = [f for f in OPTION_FIELDS if f.section not in ("execution", "storage") and f.name != "format"]
STORAGE_OPTIONS = [f.name for f in OPTION_FIELDS if f.section == "storage"]

# When an option enters a run's key: timing options in timed runs, any other option when it
# differs from its default, and always the four that keys carried before there were others
# (so keys of count-mode runs are the ones earlier versions wrote).
_KEYED_ALWAYS = ("block_size", "reads_only", "cluster", "seed")


def _in_key(f: Any, value: Any, timed: bool) -> bool:
    if f.name in _KEYED_ALWAYS:
        return True
    if f.section == "timing":
        return timed
    return value != f.default


CONFIG_COLUMNS = (
    [
        ("key", "VARCHAR NOT NULL"),
        ("bufsim_version", "VARCHAR"),
        ("trace", "VARCHAR NOT NULL"),
        ("trace_hash", "VARCHAR"),
        ("format", "VARCHAR"),
        ("policy", "VARCHAR"),
        ("prefetch", "VARCHAR"),
        ("cache_blocks", "BIGINT"),
    ]
    + [(f.name, f.sql) for f in RUN_OPTIONS]
    + [("storage", "VARCHAR")]
)
_CONFIG_NAMES = {n for n, _ in CONFIG_COLUMNS} | set(STORAGE_OPTIONS)
# Result fields (crates/bufsim-core/src/row.rs) not already among the run's settings.
STAT_COLUMNS = [(f["name"], f["sql"]) for f in RESULT_FIELDS if f["name"] not in _CONFIG_NAMES and not f["timed"]]
# Timed runs only (NULL for count-mode runs).
TIMING_COLUMNS = [(f["name"], f["sql"]) for f in RESULT_FIELDS if f["name"] not in _CONFIG_NAMES and f["timed"]]
COLUMNS = (
    CONFIG_COLUMNS
    + STAT_COLUMNS
    + [("config", "JSON"), ("seconds", "DOUBLE"), ("finished_at", "TIMESTAMP")]
    + TIMING_COLUMNS
)
# A row is one run under one trace path: the key names the run (its trace by content), so the
# same run given under two paths (a copy of a trace) has a row for each path.
PRIMARY_KEY = ("key", "trace")
_JSON_KINDS = ("histogram", "json")
_KIND = {f["name"]: f["kind"] for f in RESULT_FIELDS}


# The most sizes one cache range may give.
MAX_RANGE_SIZES = 100_000


def cache_range(text: str, block_size: int = 4096) -> list[str]:
    """Expands ``START:END:xK`` (geometric) or ``START:END:+STEP`` (arithmetic) into sizes in
    blocks; a plain size stays as it is. ``1024blocks:8192blocks:x2`` gives 1024, 2048, 4096,
    8192 blocks; the step of ``+`` is a size (``+4MiB``) or a block count (``+1024``). A range
    of more than :data:`MAX_RANGE_SIZES` sizes is refused before any is listed."""
    parts = text.split(":")
    if len(parts) == 1:
        return [text]
    if len(parts) != 3:
        raise SpecError(f"cache range `{text}` must be START:END:xFACTOR or START:END:+STEP")
    start, end = (_core.size_to_blocks(p, block_size) for p in parts[:2])
    step = parts[2].strip()
    if start <= 0 or end < start:
        raise SpecError(f"cache range `{text}`: need 0 < START <= END (in blocks: {start}, {end})")
    if step[:1] in ("x", "X", "*"):
        try:
            factor = float(step[1:])
        except ValueError:
            raise SpecError(f"cache range `{text}`: `{step}` is not a factor like x2") from None
        if not (factor > 1 and math.isfinite(factor)):
            raise SpecError(f"cache range `{text}`: the factor must be a finite number above 1, like x2")
        out = _geometric(text, start, end, factor)
    elif step.startswith("+"):
        amount = step[1:].strip()
        n = int(amount) if amount.isdigit() else _core.size_to_blocks(amount, block_size)
        if n <= 0:
            raise SpecError(f"cache range `{text}`: the step must be at least one block")
        count = (end - start) // n + 1
        if count > MAX_RANGE_SIZES:
            raise SpecError(_too_many(text, f"{count:,}"))
        out = list(range(start, end + 1, n))
    else:
        raise SpecError(f"cache range `{text}`: the step must look like x2 or +1024")
    return [f"{b}blocks" for b in out]


def _too_many(text: str, count: str) -> str:
    return f"cache range `{text}` gives {count} sizes (at most {MAX_RANGE_SIZES:,}); use a coarser step"


def _geometric(text: str, start: int, end: int, factor: float) -> list[int]:
    """``round(start * factor**k)`` for k = 0, 1, ... up to ``end``, each size once. While a
    step is under one block (below ``1 / (factor - 1)`` blocks) the rounded sizes climb one
    block at a time, so that stretch is every whole size and is counted, not stepped through
    (a factor of x1.0000000001 would take billions of steps)."""
    v = float(start)
    out: list[int] = []
    dense = 1 / (factor - 1)
    if dense > start:
        # The first step of at least one block, and every size below it.
        k = math.ceil(math.log(dense / start) / math.log(factor))
        v = start * factor**k
        top = min(end, round(v))
        if top - start + 1 > MAX_RANGE_SIZES:
            raise SpecError(_too_many(text, f"{top - start + 1:,}" if top == end else f"over {MAX_RANGE_SIZES:,}"))
        out = list(range(start, top + 1))
    # From here each step adds at least one block: as many steps as sizes.
    while round(v) <= end:
        if not out or round(v) != out[-1]:
            out.append(round(v))
            if len(out) > MAX_RANGE_SIZES:
                raise SpecError(_too_many(text, f"over {MAX_RANGE_SIZES:,}"))
        v *= factor
    return out


def file_hash(path: str) -> str:
    """SHA-256 of a trace's bytes: results stay tied to the content, not the name."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _key(self: Any) -> str:
    config = {k: getattr(self, k) for k in ("trace_hash", "format", "policy", "prefetch", "cache_blocks")}
    config.update(
        {f.name: getattr(self, f.name) for f in RUN_OPTIONS if _in_key(f, getattr(self, f.name), bool(self.timing))}
    )
    if self.storage:
        config["storage"] = self.storage
    config["bufsim_version"] = _core.__version__
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _options_of(self: Any) -> Options:
    """The run's options as the core takes them back (canonical values, unset ones left out)."""
    storage = json.loads(self.storage) if self.storage else {}
    return Options({f.name: getattr(self, f.name) for f in RUN_OPTIONS}, format=self.format, **storage)


RunSpec = make_dataclass(
    "RunSpec",
    [("trace", str), ("trace_hash", str), ("format", str), ("policy", str), ("prefetch", str), ("cache_blocks", int)]
    + [(f.name, Any, field(default=f.default)) for f in RUN_OPTIONS]
    + [("storage", str, field(default=""))]
    # How the trace is read, not what a run computes: out of the key (a trace with malformed
    # records gives no rows without it).
    + [("skip_bad", bool, field(default=False))],
    frozen=True,
    namespace={
        "key": property(_key),
        "options": _options_of,
        "__doc__": "One run of a sweep, fully specified: the trace, the grid point and every run option "
        "in canonical form (the core's option table after ``cache_blocks``).",
    },
)
RunSpec.__module__ = __name__  # pickled to Dask workers by name


class SweepSpec:
    """The grid of a sweep: traces x policies x read-ahead x cache sizes, and for timed runs x
    devices x I/O schedulers; every other run option (keywords, or ``options``) the same for
    all. ``storage`` is a table of storage options (``array``, ``device_for``, ``network``,
    ``closed``, ``faults``), as a TOML file's ``[storage]`` section."""

    GRID = ("traces", "policies", "caches", "prefetches", "devices", "io_schedulers")
    STORAGE_KEYS = tuple(f.name for f in OPTION_FIELDS if f.section == "storage")

    def __init__(
        self,
        traces: Sequence[str],
        policies: Sequence[str],
        caches: Sequence[SizeLike],
        prefetches: Optional[Sequence[str]] = None,
        *,
        devices: Optional[Sequence[str]] = None,
        io_schedulers: Optional[Sequence[str]] = None,
        storage: Any = None,
        options: Optional[Mapping[str, Any]] = None,
        **settings: Any,
    ):
        self.traces = list(traces)
        self.policies = list(policies)
        self.caches = list(caches)
        self.prefetches = list(prefetches or ["none"])
        self.devices = list(devices) if devices else None
        self.io_schedulers = list(io_schedulers) if io_schedulers else None
        self.storage = storage
        self.options = Options(options, **settings)

    def storage_settings(self) -> dict[str, Any]:
        """The storage table's options (checked: a table of known keys)."""
        if not self.storage:
            return {}
        if not isinstance(self.storage, Mapping):
            raise SpecError(
                f"storage must be a table of {', '.join(self.STORAGE_KEYS)} (in TOML a [storage] "
                f"section), not {self.storage!r}"
            )
        unknown = sorted(set(self.storage) - set(self.STORAGE_KEYS))
        if unknown:
            raise SpecError(f"storage: unknown key(s) {', '.join(unknown)}; known: {', '.join(self.STORAGE_KEYS)}")
        return dict(self.storage)

    @property
    def timed(self) -> bool:
        """Timing is on if asked for or if any timing or storage setting is given (the core's rule)."""
        grid = {"device": (self.devices or [None])[0], "io_scheduler": (self.io_schedulers or [None])[0]}
        return self.options.replace(**self.storage_settings(), **grid).resolved()["timing"]

    @classmethod
    def from_toml(cls, path: str) -> "SweepSpec":
        """Reads an experiment file: the grid (``traces``, ``policies``, ``caches``,
        ``prefetches``, ``devices``, ``io_schedulers``), any run option by name (``bufsim
        options``), a ``[first_level]`` table for hierarchies and a ``[storage]`` table for
        storage-aware caching (see docs/sweeps.md, docs/timing.md, docs/hierarchy.md and
        docs/storage-aware.md)."""
        import tomllib

        from bufsim.collect import open_input

        try:
            f, early = open_input(path)  # a named pipe without a writer says that it waits
            with f:
                data = tomllib.loads((early + f.read()).decode("utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(f"{path}: no such experiment file; check the path") from None
        except IsADirectoryError:
            raise SpecError(f"{path}: is a directory; give the experiment file (.toml) for --config") from None
        except UnicodeDecodeError as e:
            raise SpecError(
                f"{path}: not valid TOML ({not_utf8(e)}); give the experiment file (.toml) for --config"
            ) from None
        except tomllib.TOMLDecodeError as e:
            raise SpecError(f"{path}: not valid TOML: {e}") from None
        known = set(cls.GRID) | {"storage"} | {f.name for f in RUN_OPTIONS} | {"format"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SpecError(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        for required in ("traces", "policies", "caches"):
            if required not in data:
                raise SpecError(f"{path}: missing `{required}`")
        for key in cls.GRID:
            value = data.get(key)
            items = (str, int) if key == "caches" else (str,)
            if value is not None and not (
                isinstance(value, list) and all(isinstance(v, items) and not isinstance(v, bool) for v in value)
            ):
                what = "strings or whole numbers" if key == "caches" else "strings"
                raise SpecError(f"{path}: `{key}` must be a list of {what}, not {type(value).__name__} {value!r:.60}")
        base = Path(path).resolve().parent
        data["traces"] = [str(base / t) if not os.path.isabs(t) else t for t in data["traces"]]
        grid = {k: data.pop(k) for k in cls.GRID if k in data}
        storage = data.pop("storage", None)
        try:
            # Checked now, so a wrong value is named with the file it came from.
            spec = cls(**grid, storage=storage, options=data)
            spec.options.replace(**spec.storage_settings()).resolved()
            spec._check_grid()
        except SpecError as e:
            raise SpecError(f"{path}: {e}") from None
        return spec

    def _check_grid(self) -> None:
        """Checks each value of the grid as :meth:`runs` does, a wrong one named by its key
        (``policies: unknown policy ...``); the traces are looked at only by :meth:`runs`."""
        base = self.options.replace(**self.storage_settings())
        for key, option in (("devices", "device"), ("io_schedulers", "io_scheduler")):
            with _named(key):
                for value in getattr(self, key) or []:
                    base.replace(**{option: value}).resolved()
        grid = base.replace(device=(self.devices or [None])[0], io_scheduler=(self.io_schedulers or [None])[0])
        with _named("policies"):
            for p in self.policies:
                _core.canonical_policy(p)
            grid.resolved(self.policies)
        with _named("prefetches"):
            for f in self.prefetches:
                _core.canonical_prefetch(f)
            grid.resolved(prefetches=self.prefetches)
        with _named("caches"):
            self._cache_blocks(grid.resolved()["block_size"])

    def _cache_blocks(self, bs: int) -> list[int]:
        """The cache sizes of the grid in ``bs``-byte blocks, ranges expanded."""
        sizes: list[int] = []
        for c in self.caches:
            for s in cache_range(size_text(c, "cache size"), bs):
                blocks = _core.size_to_blocks(s, bs)
                if blocks <= 0:
                    raise SpecError(f"cache size `{s}` holds no whole {bs}-byte block")
                sizes.append(blocks)
        return sizes

    def runs(self) -> Iterator[Any]:
        """Every run of the grid, each option checked by the core before any run starts."""
        base = self.options.replace(**self.storage_settings())
        grid_options = [
            base.replace(device=d, io_scheduler=s)
            for d in (self.devices or [None])
            for s in (self.io_schedulers or [None])
        ]
        resolved = [o.resolved(self.policies, prefetches=self.prefetches) for o in grid_options]
        sizes = self._cache_blocks(resolved[0]["block_size"])
        for t in self.traces:
            if os.path.isdir(t):
                raise SpecError(f"{t}: is a directory; give a trace file")
            if t == "-" or (os.path.exists(t) and not os.path.isfile(t)):
                raise SpecError(
                    f"{t}: a sweep reads its traces by path, again on resume and on Dask workers; "
                    "save standard input or a pipe to a file first (`bufsim convert - -o t.bst`)"
                )
            if not os.path.exists(t):
                raise FileNotFoundError(f"{t}: no such file; check the path")
        hashes = {t: file_hash(t) for t in self.traces}
        fmt = resolved[0]["format"]
        formats = {t: (_core.detect_format(t) if fmt == "auto" else fmt) for t in self.traces}
        # One spelling per policy and read-ahead setting, so `LRU` and `lru`, `LINUX` and
        # `linux(min=3)` share one key (and are run once).
        policies = [_core.canonical_policy(p) for p in self.policies]
        prefetches = [_core.canonical_prefetch(f) for f in self.prefetches]
        for t, p, f, c, o in itertools.product(self.traces, policies, prefetches, sizes, resolved):
            storage = {k: o[k] for k in STORAGE_OPTIONS if o[k] is not None}
            yield RunSpec(
                t,
                hashes[t],
                formats[t],
                p,
                f,
                c,
                **{k.name: o[k.name] for k in RUN_OPTIONS},
                storage=json.dumps(storage, sort_keys=True) if storage else "",
                skip_bad=bool(o.get("skip_bad")),
            )


@contextmanager
def _named(key: str) -> Iterator[None]:
    """A SpecError inside as ``KEY: message``."""
    try:
        yield
    except SpecError as e:
        raise SpecError(f"{key}: {e}") from None


# Columns every runs table bufsim has written holds (the first version's): a `runs` table
# without them is some other program's, and bufsim neither reads nor changes it.
REQUIRED_COLUMNS = ("key", "trace", "policy", "prefetch", "cache_blocks", "accesses", "hits", "misses", "finished_at")


@contextmanager
def database_errors(path: str) -> Iterator[None]:
    """DuckDB's errors on the results database at ``path`` as one-line SpecErrors naming it
    (locked, corrupt, or what DuckDB said); see :func:`bufsim.errors.database_message`."""
    import duckdb

    try:
        yield
    except duckdb.InterruptException:
        raise KeyboardInterrupt from None
    except duckdb.Error as e:
        raise SpecError(database_message(e, path)) from None


def check_results_file(path: str, option: str | None = None) -> None:
    """Refuses a path that is not a DuckDB database file (the magic bytes at offset 8): DuckDB
    opens some other files (a CSV, a Parquet file) as empty in-memory databases without
    complaint, so reads would find nothing and writes would be lost. ``option``: the option that
    named an output (a sweep's ``-o``), said in the advice."""
    if os.path.isdir(path):
        raise SpecError(
            f"{path}: is a directory; give a file name for {option}"
            if option
            else f"{path}: is a directory; give a results database file (the one `bufsim sweep -o DB` wrote)"
        )
    advice = (
        f"a sweep would keep none of its runs there: give {option} a new file name or a results database"
        if option
        else "give the file `bufsim sweep -o DB` wrote"
    )
    if not os.path.isfile(path):  # a FIFO's open would wait for a writer
        raise SpecError(f"{path}: not a results database (not a regular file); {advice}")
    with open(path, "rb") as f:
        magic = f.read(12)[8:]
    if magic != b"DUCK":
        raise SpecError(f"{path}: not a results database (not a valid DuckDB database file); {advice}")


def check_store(path: str, option: str = "-o") -> None:
    """Refuses, before a sweep runs, an output its results cannot be kept in: a directory, a
    name in a directory that does not exist, an existing file that is not a DuckDB database, or
    a name DuckDB takes for an in-memory database, which keeps nothing (empty, ``:memory:``), or
    one of only spaces."""
    if isinstance(path, str) and (not path.strip() or path.startswith(":memory:")):
        raise SpecError(
            f"{option} {path!r}: {'an empty path' if not path.strip() else 'an in-memory database'}, which "
            "would keep no run; give the results database's file name"
        )
    check_output(path, option)
    if os.path.lexists(path):
        check_results_file(path, option)


def _table_columns(con: Any, table: str = "runs") -> set[str]:
    """The columns of ``table`` (none when there is no such table)."""
    query = "SELECT column_name FROM information_schema.columns WHERE table_name = ?"
    return {n for (n,) in con.execute(query, [table]).fetchall()}


def _check_runs_columns(have: set[str], path: str, table: str = "runs") -> None:
    """Refuses a ``table`` with columns ``have`` that is not bufsim's (no table: nothing to refuse)."""
    missing = [c for c in REQUIRED_COLUMNS if c not in have]
    if have and missing:
        raise SpecError(
            f"{path}: its `{table}` table is not bufsim's (it lacks {', '.join(missing)}); give a results "
            "database `bufsim sweep -o DB` wrote"
        )


def _primary_key(con: Any) -> list[str]:
    """The columns of the ``runs`` table's primary key (none: [])."""
    found = con.execute(
        "SELECT constraint_column_names FROM duckdb_constraints() "
        "WHERE table_name = 'runs' AND constraint_type = 'PRIMARY KEY'"
    ).fetchall()
    return list(found[0][0]) if found else []


def _key_rows_by_path(con: Any) -> None:
    """Gives a ``runs`` table keyed by ``key`` alone (bufsim before rows by path) the primary
    key (key, trace), keeping every row and column, in one transaction. DuckDB cannot change a
    table's primary key, so the table is copied."""
    cols = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'runs' "
        "ORDER BY ordinal_position"
    ).fetchall()
    defs = ", ".join(f'"{n}" {t}' + (" NOT NULL" if n in PRIMARY_KEY else "") for n, t in cols)
    names = ", ".join(f'"{n}"' if n != "trace" else "coalesce(trace, '')" for n, _ in cols)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"CREATE TABLE runs_by_path ({defs}, PRIMARY KEY ({', '.join(PRIMARY_KEY)}))")
        con.execute(f"INSERT INTO runs_by_path SELECT {names} FROM runs")
        con.execute("DROP TABLE runs")
        con.execute("ALTER TABLE runs_by_path RENAME TO runs")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def read_only_results(path: str, table: str = "runs"):
    """A read-only DuckDB connection to the results database at ``path``, which must hold
    ``table`` (a ``runs`` table: with bufsim's columns); SpecError otherwise. Read-only because
    looking must never change the database (a store adds its table and columns to what it
    opens)."""
    import duckdb

    check_results_file(path)
    with database_errors(path):
        con = duckdb.connect(path, read_only=True)
        try:
            tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            if table not in tables:
                raise SpecError(
                    f"{path}: no `{table}` table; is this a bufsim results database (`bufsim sweep -o DB`)?"
                )
            if table == "runs":
                _check_runs_columns(_table_columns(con), path)
        except BaseException:
            con.close()
            raise
    return con


def finite_columns(con: Any, columns: list[str] | None = None) -> str:
    """The select list of the runs table's ``columns`` (None: all, in the table's order) with
    every NaN or infinite number as a NULL. bufsim never writes one, but a database edited by
    hand may hold it: JSON has no such numbers, a reader would take `nan` for a value, and
    `results show` prints a NULL as every other missing value, so export and show read the
    table through this."""
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE runs)").fetchall())

    def column(c: str) -> str:
        q = '"' + c.replace('"', '""') + '"'
        return f"CASE WHEN isfinite({q}) THEN {q} END AS {q}" if types.get(c) in ("DOUBLE", "FLOAT") else q

    return ", ".join(column(c) for c in (columns or types))


# What `export` writes, chosen by the output's extension.
EXPORT_FORMATS = {".csv": "(FORMAT CSV, HEADER)", ".jsonl": "(FORMAT JSON)", ".parquet": "(FORMAT PARQUET)"}


def export_runs(con: Any, out: str, db: str | None = None, rows: Any = None, columns: list[str] | None = None) -> int:
    """Writes the runs table of the connection ``con`` (to the database ``db``) to ``out`` as
    CSV, JSON lines or Parquet, by its extension; returns the number of runs written. ``rows``
    (a DataFrame with ``key`` and ``trace``) keeps only those runs, ``columns`` only those
    columns, in that order; None keeps all. A regular file (or the file a symbolic link names)
    is written beside itself and renamed into place, so a failed export leaves no half file; a
    device or FIFO (``/dev/stdout``, a named pipe) is written into, never replaced. A number
    that is NaN or infinite is written as a NULL (``null`` in JSON lines, an empty CSV cell)."""
    ext = os.path.splitext(out)[1].lower()
    if ext not in EXPORT_FORMATS:
        raise SpecError(f"{out}: unknown export format `{ext or '(none)'}`; name the file .csv, .jsonl or .parquet")
    check_output(out, "-o")
    target = os.path.realpath(out)
    check_not_input(out, db, "the results database itself", "-o")
    import duckdb

    chosen = finite_columns(con, columns)
    kept = ""
    if rows is not None:
        # Chosen by their primary key, so the file holds DuckDB's own values and types, not
        # pandas' copies of them.
        con.register("_bufsim_kept", rows[list(PRIMARY_KEY)])
        kept = f" WHERE ({', '.join(PRIMARY_KEY)}) IN (SELECT {', '.join(PRIMARY_KEY)} FROM _bufsim_kept)"

    def copy(to: str) -> None:
        try:
            con.execute(
                f"COPY (SELECT {chosen} FROM runs{kept} ORDER BY key, trace) TO '{_sql_text(to)}' {EXPORT_FORMATS[ext]}"
            )
        except duckdb.Error as e:
            text = " ".join(str(e).split()).replace(to, out)
            raise SpecError(f"{out}: cannot write the export ({text}); check the path and the free space") from None

    try:
        if os.path.exists(target) and not os.path.isfile(target):
            with tempfile.TemporaryDirectory(prefix="bufsim-export-") as tmp:
                part = os.path.join(tmp, f"runs{ext}")
                copy(part)
                with open(part, "rb") as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        else:
            part = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.{os.getpid()}.partial{ext}")
            try:
                copy(part)
                os.replace(part, target)
            finally:
                if os.path.exists(part):
                    os.remove(part)
    except OSError as e:
        raise SpecError(
            f"{out}: cannot write the export ({e.strerror or e}); check the path and its permissions"
        ) from None
    return con.execute(f"SELECT count(*) FROM runs{kept}").fetchone()[0]


class ResultsStore:
    """The ``runs`` table of a DuckDB file, one committed row per finished run and trace path."""

    def __init__(self, path: str):
        import duckdb

        self.path = path
        check_store(path)
        with database_errors(path):
            self.db = duckdb.connect(path)
            try:
                have = _table_columns(self.db)
                _check_runs_columns(have, path)
                if not have:
                    cols = ", ".join(f'"{n}" {t}' for n, t in COLUMNS)
                    self.db.execute(f"CREATE TABLE runs ({cols}, PRIMARY KEY ({', '.join(PRIMARY_KEY)}))")
                else:
                    # Databases written before timed mode lack its columns.
                    for n, t in COLUMNS:
                        if n not in have:
                            self.db.execute(f'ALTER TABLE runs ADD COLUMN "{n}" {t}')
                    if _primary_key(self.db) != list(PRIMARY_KEY):
                        _key_rows_by_path(self.db)
                # Rows present when the sweep started: only those need INSERT OR REPLACE, which
                # costs DuckDB about 2.5x a plain INSERT (3.8 ms against 1.4 ms a row, on the main
                # thread that otherwise only waits for runs).
                self.existing = self.done_rows()
            except BaseException:
                self.db.close()
                raise

    def done_rows(self) -> set[tuple[str, str]]:
        """The (key, trace path) of every row."""
        return set(self.db.execute("SELECT key, trace FROM runs").fetchall())

    def write(self, spec: Any, result: Mapping[str, Any], seconds: float) -> None:
        row = {**{n: result.get(n) for n, _ in STAT_COLUMNS + TIMING_COLUMNS}, **asdict(spec)}
        row.update(key=spec.key, bufsim_version=_core.__version__)
        for n, _ in STAT_COLUMNS + TIMING_COLUMNS:
            if _KIND[n] in _JSON_KINDS and row[n] is not None:
                row[n] = json.dumps(row[n], sort_keys=n == "policy_metrics")
            elif isinstance(row[n], float) and not math.isfinite(row[n]):
                row[n] = None  # no NaN in the table: NULL, as export writes it
        row["config"] = json.dumps(asdict(spec), sort_keys=True)
        row["seconds"] = seconds
        names = [n for n, _ in COLUMNS if n != "finished_at"]
        marks = ", ".join("?" for _ in names)
        quoted = ", ".join(f'"{n}"' for n in names)
        self._execute(
            f"{self._verb(spec)} INTO runs ({quoted}, finished_at) VALUES ({marks}, now())",
            [row[n] for n in names],
        )
        self.existing.add((spec.key, spec.trace))

    def copy(self, spec: Any) -> None:
        """Files the run of ``spec``, already in the table under another path of the same
        trace content, under ``spec``'s path too (its counters as they are, its configuration
        naming this path)."""
        self._execute(
            f"{self._verb(spec)} INTO runs SELECT * REPLACE (? AS trace, ? AS config, now() AS finished_at) "
            "FROM runs WHERE key = ? ORDER BY finished_at DESC, trace LIMIT 1",
            [spec.trace, json.dumps(asdict(spec), sort_keys=True), spec.key],
        )
        self.existing.add((spec.key, spec.trace))

    def _verb(self, spec: Any) -> str:
        return "INSERT OR REPLACE" if (spec.key, spec.trace) in self.existing else "INSERT"

    def _execute(self, sql: str, params: list[Any]) -> None:
        # One statement is one transaction: a row is there whole or not at all. DuckDB turns a
        # Ctrl-C that lands inside a statement into its own InterruptException (rolling the
        # statement back); make it the KeyboardInterrupt every other interrupted call raises.
        import duckdb

        try:
            self.db.execute(sql, params)
        except duckdb.InterruptException:
            raise KeyboardInterrupt from None

    def frame(self, rows: Sequence[tuple[str, str]] | None = None):
        """The rows (all, or those of these (key, trace path) pairs in this order)."""
        if rows is None:
            return self.db.execute("SELECT * FROM runs ORDER BY finished_at, key, trace").df()
        self.db.execute("CREATE OR REPLACE TEMP TABLE wanted (key VARCHAR, trace VARCHAR, pos INTEGER)")
        self.db.executemany("INSERT INTO wanted VALUES (?, ?, ?)", [(k, t, i) for i, (k, t) in enumerate(rows)])
        return self.db.execute("SELECT runs.* FROM runs JOIN wanted USING (key, trace) ORDER BY wanted.pos").df()

    def close(self) -> None:
        self.db.close()


def _sql_text(s: str) -> str:
    return s.replace("'", "''")


def decode_json(column: str, value: Any) -> Any:
    """A JSON column's text as its Python value (anything else passes through)."""
    if not isinstance(value, str) or _KIND.get(column) not in _JSON_KINDS:
        return value
    v = json.loads(value)
    return {int(k): int(n) for k, n in v.items()} if _KIND[column] == "histogram" else v


def _plain(v: Any) -> Any:
    """A DataFrame cell as a plain Python value; a NULL (None, NaN, pandas' NA) as ``None``."""
    if v is None or v is getattr(sys.modules.get("pandas"), "NA", None):
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and v != v:  # NaN: a NULL in a numeric column
        return None
    return v


def result_of_row(row: Mapping[str, Any]) -> Any:
    """A :class:`bufsim.Result` from a row of the ``runs`` table (NULLs become ``None``)."""
    vals = {k: decode_json(k, _plain(v)) for k, v in row.items()}
    if vals.get("storage"):
        vals.update(json.loads(vals["storage"]))
    if not vals.get("timing"):
        for k in TIMING_FIELDS:
            vals[k] = None
    for f in RESULT_FIELDS:
        # Integer columns with NULLs come back from pandas as floats.
        if f["kind"] == "int" and vals.get(f["name"]) is not None:
            vals[f["name"]] = int(vals[f["name"]])
    return Result(**{f["name"]: vals.get(f["name"]) for f in RESULT_FIELDS})


def json_of_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row of the ``runs`` table as the JSON object ``bufsim sweep --json`` prints: the run's
    result exactly as ``bufsim run --json`` gives it (the core's encoding: timing fields left
    out of a count-mode run), with the sweep's own columns (``key``, ``trace``, the options,
    ``seconds``) in table order, NULLs as ``null``; ``config`` and ``finished_at`` left out."""
    from bufsim.tables import results_text

    result = json.loads(results_text([result_of_row(row)], as_json=True))
    out = {}
    for k, v in row.items():
        if k in ("config", "finished_at"):
            continue
        if k in _KIND:
            if k in result:
                out[k] = result[k]
        else:
            out[k] = _plain(v)
    # What the table keeps in another column (`array`, in `storage`), as `run --json` gives it.
    out.update({k: v for k, v in result.items() if k not in out})
    return out


def _run_spec(spec: Any, trace: Any) -> dict[str, Any]:
    [row] = trace.run(
        [spec.policy], [f"{spec.cache_blocks}blocks"], [spec.prefetch], spec.options().replace(jobs=1).to_json()
    )
    return row


_WORKER_TRACES: dict[tuple[str, str], Any] = {}


def run_one(spec_dict: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """Runs one configuration; in a Dask worker the trace is loaded once per worker and kept."""
    spec = RunSpec(**spec_dict)
    key = (spec.trace, spec.trace_hash)
    trace = _WORKER_TRACES.get(key)
    if trace is None:
        trace = _WORKER_TRACES[key] = _core.Trace(spec.trace, format=spec.format, skip_bad=spec.skip_bad)
    t0 = time.perf_counter()
    row = _run_spec(spec, trace)
    return row, time.perf_counter() - t0


def run_sweep(
    spec: SweepSpec,
    out: str = DEFAULT_DB,
    *,
    resume: bool = False,
    jobs: int = 0,
    dask: str | None = None,
    progress: Optional[bool] = True,
):
    """Runs the sweep into the DuckDB file ``out`` and returns its rows (a DataFrame) in grid
    order. With ``resume`` runs already in ``out`` are skipped. ``progress``: a bar of runs done
    with the time left on standard error (True), none (False), or one when it is a terminal
    (None); a resumed sweep's note of what it skipped is printed unless it is False."""
    from bufsim.progress import bar as progress_bar

    # spec.runs() checks every option, policy and read-ahead spec first: a typo must not
    # surface after an hour.
    jobs = Options(jobs=jobs).resolved()["jobs"]
    if dask:
        check_scheduler(dask)
        reach_scheduler(dask)
    runs = list(spec.runs())
    if not runs:
        raise SpecError("the sweep is empty: give at least one trace, policy and cache size")
    with ExitStack() as cleanup:
        # Connected before the results file is opened: an address where no scheduler answers
        # leaves no file behind.
        client = cleanup.enter_context(connect_scheduler(dask)) if dask else None
        store = ResultsStore(out)  # refuses an output that is not a results database, untouched
        cleanup.callback(store.close)
        # One row per run and trace path: a grid that names a run twice (`-p lru -p lru`) has
        # it once; a trace given under two paths (a copy) has a row under each.
        rows = list({(r.key, r.trace): r for r in runs}.values())
        wanted = [r for r in rows if (r.key, r.trace) not in store.existing] if resume else rows
        # A run of this trace content already kept under another path is filed under this one
        # too, not simulated again.
        kept = {k for k, _ in store.existing} if resume else set()
        copies = [r for r in wanted if r.key in kept]
        todo: dict[str, list[RunSpec]] = {}  # key -> the rows of that run (one per path)
        for r in wanted:
            if r.key not in kept:
                todo.setdefault(r.key, []).append(r)
        writes = sum(len(g) for g in todo.values())
        if resume and progress is not False:
            other = f" ({len(copies)} of them under another path with the same content)" if copies else ""
            print(
                f"sweep: {len(rows) - writes} of {len(rows)} runs already in {out}{other}, skipped; {writes} to run",
                file=sys.stderr,
            )
        for r in copies:
            store.copy(r)
        with progress_bar(total=writes, desc="sweep", unit="run", show=progress) as bar:
            if dask:
                _run_dask(list(todo.values()), store, bar, client, dask)
            else:
                _run_local(list(todo.values()), store, bar, jobs, progress)
        return store.frame([(r.key, r.trace) for r in runs])


def _write(store: ResultsStore, group: list[RunSpec], result: Mapping[str, Any], seconds: float, bar: Any) -> None:
    """Commits one finished run under every path it was given with."""
    for r in group:
        store.write(r, result, seconds)
        bar.update(1)
    bar.refresh()  # each finished run is drawn, however fast the runs are


def longest_first(groups: list[list[RunSpec]]) -> list[list[RunSpec]]:
    """The order to start runs in (each a group of rows, one per trace path): largest caches
    first. A run's cost grows with its cache (more memory touched, deeper heaps), so the last
    runs to start are the short ones and no core idles long at the end while one big run
    finishes. Results are stored and returned in grid order regardless."""
    return sorted(groups, key=lambda g: -g[0].cache_blocks)


def _run_local(todo: list[list[RunSpec]], store: ResultsStore, bar: Any, jobs: int, progress: Optional[bool]) -> None:
    from bufsim.progress import track

    workers = jobs or os.cpu_count() or 1
    by_trace: dict[tuple[str, str], list[list[RunSpec]]] = {}
    for g in todo:
        by_trace.setdefault((g[0].trace, g[0].trace_hash), []).append(g)
    # One trace at a time: decoded once, shared by the threads, dropped before the next.
    for (path, _), groups in by_trace.items():
        first = groups[0][0]
        trace = track(_core.Trace, path, format=first.format, skip_bad=first.skip_bad, show=progress)

        def work(g: list[RunSpec], trace: _core.Trace = trace):
            t0 = time.perf_counter()
            res = _run_spec(g[0], trace)
            return g, res, time.perf_counter() - t0

        with ThreadPoolExecutor(max_workers=workers) as pool, _InterruptAsFlag() as interrupted:
            pending = {pool.submit(work, g) for g in longest_first(groups)}
            try:
                while pending:
                    finished, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                    for f in finished:
                        _write(store, *f.result(), bar)
                    if interrupted.set:
                        raise KeyboardInterrupt
            except BaseException:
                for f in pending:
                    f.cancel()
                raise


class _InterruptAsFlag:
    """While active in the main thread, SIGINT only sets a flag that the sweep loop checks.
    A KeyboardInterrupt raised asynchronously can land while the main thread holds a future's
    lock inside ``concurrent.futures.wait``; the workers then block on that lock forever and
    shutting the pool down hangs. Raising it from the loop, between waits, holds no lock."""

    def __init__(self):
        self.set = False
        self._old = None

    def __enter__(self) -> "_InterruptAsFlag":
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():

            def flag(signum, frame):
                self.set = True

            self._old = signal.signal(signal.SIGINT, flag)
        return self

    def __exit__(self, *exc) -> None:
        import signal

        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


# How long a Dask sweep waits for a first worker before saying so.
WORKER_WAIT_S = 60


# How long a Dask sweep waits for the scheduler's port to answer before saying so.
CONNECT_WAIT_S = 5


def reach_scheduler(address: str) -> None:
    """Fails at once when nothing answers at a TCP scheduler address (connection refused, no
    such host, no answer within :data:`CONNECT_WAIT_S` s), where Dask's client would retry for
    its whole timeout before saying so."""
    import socket

    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp", "tls", "ws", "wss"):
        return  # inproc:// and ucx:// are not plain TCP
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_WAIT_S):
            pass
    except socket.gaierror:
        raise SpecError(f"--dask {address}: no such host `{host}`; check the address") from None
    except ConnectionRefusedError:
        raise SpecError(
            f"--dask {address}: connection refused: no Dask scheduler listens there; start one "
            "(`dask scheduler`) or check the address"
        ) from None
    except TimeoutError:
        raise SpecError(
            f"--dask {address}: no answer within {CONNECT_WAIT_S} s; check the address and that the scheduler runs"
        ) from None
    except OSError as e:
        raise SpecError(f"--dask {address}: cannot connect ({e.strerror or e}); check the address") from None


# How long a Dask sweep waits for the scheduler's handshake once its port has answered. Dask's
# client waits without a bound on a peer that accepts and never speaks, whatever its timeout.
HANDSHAKE_WAIT_S = 2 * CONNECT_WAIT_S


def connect_scheduler(address: str) -> Any:
    """A Dask client of the scheduler at ``address``, or a SpecError within about
    :data:`HANDSHAKE_WAIT_S` s when what answers there is not a Dask scheduler: a server of
    another protocol makes Dask's client read its reply as a message length (an HTTP server's
    one asks for exabytes), and one that stays silent keeps it waiting forever. The client is
    made in a daemon thread so a wait that never ends is abandoned, not joined."""
    from dask.distributed import Client

    outcome: dict[str, Any] = {}
    lock = threading.Lock()

    def connect() -> None:
        try:
            client = Client(address, timeout=f"{HANDSHAKE_WAIT_S}s")
        except BaseException as e:  # handed to the caller's thread
            outcome["error"] = e
            return
        with lock:
            late = outcome.get("abandoned", False)
            outcome["client"] = client
        if late:
            client.close()  # the caller has given up on it: nothing else would close it

    thread = threading.Thread(target=connect, name="bufsim-dask-connect", daemon=True)
    thread.start()
    try:
        # A little over Dask's own timeout, so its error (when it gives one) is the one reported.
        thread.join(HANDSHAKE_WAIT_S + 2)
    finally:  # on Ctrl-C too: a client that comes later is closed by the thread
        with lock:
            client = outcome.get("client")
            outcome["abandoned"] = client is None
    if client is not None:
        return client
    error = outcome.get("error")
    if error is None:
        why = f"no Dask handshake within {HANDSHAKE_WAIT_S} s"
    elif isinstance(error, (ValueError, TypeError)):
        # Addresses Dask parses but cannot reach from here: an inproc:// address of another
        # process, a ucx:// address without UCX installed.
        raise SpecError(
            f"--dask {address}: Dask cannot connect there ({_first_line(error)}); "
            "give the tcp://HOST:PORT address `dask scheduler` prints"
        ) from None
    elif isinstance(error, OSError):
        why = _first_line(error)
    elif isinstance(error, MemoryError):
        # Another protocol's first bytes read as a message length: numpy's message about
        # allocating exabytes would only mislead.
        why = "what answers does not speak Dask's protocol"
    else:
        why = f"what answers does not speak Dask's protocol: {_first_line(error)}"
    raise SpecError(
        f"--dask {address}: no Dask scheduler answers there ({why}); give the address `dask scheduler` prints"
    ) from None


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else type(e).__name__


def _run_dask(todo: list[list[RunSpec]], store: ResultsStore, bar: Any, client: Any, address: str) -> None:
    from dask.distributed import as_completed

    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except TimeoutError:
        raise SpecError(
            f"the Dask scheduler at {address} has had no worker for {WORKER_WAIT_S} s; start one "
            f"(`dask worker {address}`) and run the sweep again with --resume"
        ) from None
    futures = {
        client.submit(run_one, asdict(g[0]), pure=False, key=f"bufsim-{g[0].key}-{time.time_ns()}"): g
        for g in longest_first(todo)
    }
    for fut in as_completed(futures):
        res, secs = fut.result()
        _write(store, futures[fut], res, secs, bar)
