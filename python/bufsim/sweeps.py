"""Sweeps: many configurations over one or more traces, results kept in DuckDB.

Every run is keyed by a hash of its full configuration and the content hash of its trace, and
written in its own transaction the moment it finishes, so a sweep killed at any point (SIGINT or
SIGKILL) loses no finished run and leaves no partial row; ``resume`` skips what is already there.
Runs go to local threads (the simulation releases the GIL, and each trace is decoded once and
shared) or, given a scheduler address, to a Dask cluster whose workers load traces by path.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from bufsim import _core
from bufsim._core import SpecError
from bufsim.errors import check_fields, check_scheduler
from bufsim.api import (DEFAULT_DEVICE, DEFAULT_IO_SCHEDULER, TIMING_FIELDS, Result, SizeLike, block_size_bytes,
                        gap_text, size_text, storage_args, storage_echo, think_text)

DEFAULT_DB = "results.duckdb"

STAT_COLUMNS = [
    ("requests", "BIGINT"), ("accesses", "BIGINT"), ("hits", "BIGINT"), ("misses", "BIGINT"),
    ("hit_ratio", "DOUBLE"), ("write_accesses", "BIGINT"), ("write_misses", "BIGINT"),
    ("evictions", "BIGINT"), ("disk_requests", "BIGINT"), ("sync_requests", "BIGINT"),
    ("async_requests", "BIGINT"), ("blocks_read", "BIGINT"), ("prefetched", "BIGINT"),
    ("prefetch_hits", "BIGINT"), ("prefetched_unused", "BIGINT"),
]
# Timed runs only (NULL for count-mode runs).
TIMING_COLUMNS = [
    ("exec_time_s", "DOUBLE"), ("io_time_s", "DOUBLE"), ("stall_time_s", "DOUBLE"), ("think_time_s", "DOUBLE"),
    ("end_time_s", "DOUBLE"), ("streams", "BIGINT"), ("inflight_misses", "BIGINT"), ("sync_blocks", "BIGINT"),
    ("sync_time_ms", "DOUBLE"), ("async_blocks", "BIGINT"), ("async_time_ms", "DOUBLE"),
    ("write_requests", "BIGINT"), ("write_blocks", "BIGINT"), ("write_time_ms", "DOUBLE"),
    ("service_mean_ms", "DOUBLE"), ("service_p50_ms", "DOUBLE"), ("service_p90_ms", "DOUBLE"),
    ("service_p99_ms", "DOUBLE"), ("response_mean_ms", "DOUBLE"), ("response_p50_ms", "DOUBLE"),
    ("response_p90_ms", "DOUBLE"), ("response_p99_ms", "DOUBLE"), ("devices", "JSON"),
    ("throughput_mb_s", "DOUBLE"),
]
CONFIG_COLUMNS = [
    ("key", "VARCHAR PRIMARY KEY"), ("bufsim_version", "VARCHAR"), ("trace", "VARCHAR"),
    ("trace_hash", "VARCHAR"), ("format", "VARCHAR"), ("policy", "VARCHAR"),
    ("prefetch", "VARCHAR"), ("cache_blocks", "BIGINT"), ("block_size", "BIGINT"),
    ("reads_only", "BOOLEAN"), ("cluster", "VARCHAR"), ("seed", "UBIGINT"),
    ("timing", "BOOLEAN"), ("device", "VARCHAR"), ("io_scheduler", "VARCHAR"), ("think", "VARCHAR"),
    ("single_stream", "BOOLEAN"), ("file_gap", "VARCHAR"), ("first_level", "VARCHAR"),
    ("storage", "VARCHAR"),
]
# Structured results, stored as JSON text (docs/plots.md): request sizes as {"size": requests},
# policy metrics as {name: value}, partition timelines as {"unit", "samples"} (NULL when none).
JSON_STAT_COLUMNS = [("request_sizes", "JSON"), ("policy_metrics", "JSON"), ("partition_timeline", "JSON")]
COLUMNS = (CONFIG_COLUMNS + STAT_COLUMNS + JSON_STAT_COLUMNS + [("config", "JSON"), ("seconds", "DOUBLE"), ("finished_at", "TIMESTAMP")]
           + TIMING_COLUMNS)


def cache_range(text: str, block_size: int = 4096) -> list[str]:
    """Expands ``START:END:xK`` (geometric) or ``START:END:+STEP`` (arithmetic) into sizes in
    blocks; a plain size stays as it is. ``1024blocks:8192blocks:x2`` gives 1024, 2048, 4096,
    8192 blocks; the step of ``+`` is a size (``+4MiB``) or a block count (``+1024``)."""
    parts = text.split(":")
    if len(parts) == 1:
        return [text]
    if len(parts) != 3:
        raise SpecError(f"cache range `{text}` must be START:END:xFACTOR or START:END:+STEP")
    start, end = (_core.size_to_blocks(p, block_size) for p in parts[:2])
    step = parts[2].strip()
    if start <= 0 or end < start:
        raise SpecError(f"cache range `{text}`: need 0 < START <= END (in blocks: {start}, {end})")
    out: list[int] = []
    if step[:1] in ("x", "X", "*"):
        try:
            factor = float(step[1:])
        except ValueError:
            raise SpecError(f"cache range `{text}`: `{step}` is not a factor like x2") from None
        if not factor > 1:
            raise SpecError(f"cache range `{text}`: the factor must be above 1")
        v = float(start)
        while round(v) <= end:
            if not out or round(v) != out[-1]:
                out.append(round(v))
            v *= factor
    elif step.startswith("+"):
        amount = step[1:].strip()
        n = int(amount) if amount.isdigit() else _core.size_to_blocks(amount, block_size)
        if n <= 0:
            raise SpecError(f"cache range `{text}`: the step must be at least one block")
        out = list(range(start, end + 1, n))
    else:
        raise SpecError(f"cache range `{text}`: the step must look like x2 or +1024")
    if len(out) > 100_000:
        raise SpecError(f"cache range `{text}` gives {len(out)} sizes; use a coarser step")
    return [f"{b}blocks" for b in out]


def file_hash(path: str) -> str:
    """SHA-256 of a trace's bytes: results stay tied to the content, not the name."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep, fully specified."""

    trace: str
    trace_hash: str
    format: str
    policy: str
    prefetch: str
    cache_blocks: int
    block_size: int
    reads_only: bool
    cluster: str
    seed: int
    timing: bool = False
    device: Optional[str] = None
    io_scheduler: Optional[str] = None
    think: Optional[str] = None
    single_stream: bool = False
    file_gap: str = "0blocks"
    # The first level of a hierarchy (FirstLevel.to_json()), or "" for none.
    first_level: str = ""
    # Storage-aware settings (docs/storage-aware.md) as JSON [array, device_for, network,
    # closed, faults], or "" for none.
    storage: str = ""

    @property
    def key(self) -> str:
        config = asdict(self)
        del config["trace"]  # the content hash names the trace; paths may differ across machines
        # Settings at their count-mode defaults stay out, so count-mode keys are the ones
        # earlier versions wrote.
        if not self.timing:
            for k in ("timing", "device", "io_scheduler", "think", "single_stream"):
                del config[k]
        if self.file_gap == "0blocks":
            del config["file_gap"]
        if not self.first_level:
            del config["first_level"]
        if not self.storage:
            del config["storage"]
        config["bufsim_version"] = _core.__version__
        text = json.dumps(config, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass
class SweepSpec:
    """The grid of a sweep: traces x policies x read-ahead x cache sizes."""

    traces: list[str]
    policies: list[str]
    caches: list[SizeLike]
    prefetches: list[str] = field(default_factory=lambda: ["none"])
    format: str = "auto"
    block_size: SizeLike = 4096
    reads_only: bool = False
    cluster: SizeLike = "64KiB"
    seed: int = 42
    # Timed mode (docs/timing.md): every device x I/O scheduler is swept.
    timing: bool = False
    devices: Optional[list[str]] = None
    io_schedulers: Optional[list[str]] = None
    think: str = "trace"
    single_stream: bool = False
    file_gap: SizeLike = "0blocks"
    # The first level of a hierarchy (docs/hierarchy.md): a bufsim.FirstLevel, or in TOML a
    # [first_level] table of its fields; every run then simulates the second level.
    first_level: Any = None
    # Storage-aware caching (docs/storage-aware.md), the same for every run: a mapping with
    # keys array, device_for, network, closed, faults (in TOML a [storage] table).
    storage: Optional[dict] = None

    STORAGE_KEYS = ("array", "device_for", "network", "closed", "faults")

    def storage_settings(self) -> tuple[Optional[tuple], bool]:
        """The core's storage tuple and whether it needs timed mode."""
        if not self.storage:
            return None, False
        if not isinstance(self.storage, dict):
            raise SpecError(f"storage must be a table of {', '.join(self.STORAGE_KEYS)} (in TOML a [storage] "
                            f"section), not {self.storage!r}")
        unknown = sorted(set(self.storage) - set(self.STORAGE_KEYS))
        if unknown:
            raise SpecError(f"storage: unknown key(s) {', '.join(unknown)}; known: {', '.join(self.STORAGE_KEYS)}")
        return storage_args(**{k: self.storage.get(k) for k in self.STORAGE_KEYS})

    @property
    def timed(self) -> bool:
        """Timing is on if asked for or if any timing setting is given."""
        return bool(self.timing or self.devices or self.io_schedulers or self.single_stream
                    or self.think != "trace" or self.storage_settings()[1])

    @classmethod
    def from_toml(cls, path: str) -> "SweepSpec":
        """Reads an experiment file: keys ``traces``, ``policies``, ``caches``, ``prefetches``,
        ``format``, ``block_size``, ``reads_only``, ``cluster``, ``seed``, and for timed mode
        ``timing``, ``devices``, ``io_schedulers``, ``think``, ``single_stream``, ``file_gap``,
        a ``[first_level]`` table for hierarchies and a ``[storage]`` table for storage-aware
        caching (see docs/sweeps.md, docs/timing.md, docs/hierarchy.md and
        docs/storage-aware.md)."""
        import tomllib

        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(f"{path}: no such experiment file; check the path") from None
        except tomllib.TOMLDecodeError as e:
            raise SpecError(f"{path}: not valid TOML: {e}") from None
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SpecError(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        for required in ("traces", "policies", "caches"):
            if required not in data:
                raise SpecError(f"{path}: missing `{required}`")
        check_fields(path, data, cls)
        base = Path(path).resolve().parent
        data["traces"] = [str(base / t) if not os.path.isabs(t) else t for t in data["traces"]]
        if "first_level" in data:
            from bufsim.hierarchy import FirstLevel

            data["first_level"] = FirstLevel.from_mapping(data["first_level"], f"{path}: first_level")
        return cls(**data)

    def runs(self) -> Iterator[RunSpec]:
        bs = block_size_bytes(self.block_size)
        sizes: list[int] = []
        for c in self.caches:
            for s in cache_range(size_text(c, "cache size"), bs):
                blocks = _core.size_to_blocks(s, bs)
                if blocks <= 0:
                    raise SpecError(f"cache size `{s}` holds no whole {bs}-byte block")
                sizes.append(blocks)
        for t in self.traces:
            if t == "-" or (os.path.exists(t) and not os.path.isfile(t)):
                raise SpecError(f"{t}: a sweep reads its traces by path, again on resume and on Dask workers; "
                                "save standard input or a pipe to a file first (`bufsim convert - -o t.bst`)")
            if not os.path.exists(t):
                raise FileNotFoundError(f"{t}: no such file; check the path")
        hashes = {t: file_hash(t) for t in self.traces}
        formats = {t: (_core.detect_format(t) if self.format == "auto" else self.format) for t in self.traces}
        gap = gap_text(self.file_gap)
        first = self.first_level.to_json(bs) if self.first_level is not None else ""
        storage, _ = self.storage_settings()
        stored = json.dumps(list(storage)) if storage is not None else ""
        if self.timed:
            think = think_text(self.think)
            timings = [dict(timing=True, device=d, io_scheduler=s, think=think, single_stream=self.single_stream)
                       for d in (self.devices or [DEFAULT_DEVICE]) for s in (self.io_schedulers or [DEFAULT_IO_SCHEDULER])]
        else:
            timings = [{}]
        # One spelling per policy, so `LRU` and `lru` share one key (and are run once).
        policies = [_core.canonical_policy(p) for p in self.policies]
        for t, p, f, c, timing in itertools.product(self.traces, policies, self.prefetches, sizes, timings):
            yield RunSpec(t, hashes[t], formats[t], p, f, c, bs, self.reads_only,
                          size_text(self.cluster, "cluster size"), self.seed, file_gap=gap, first_level=first,
                          storage=stored, **timing)


class ResultsStore:
    """The ``runs`` table of a DuckDB file, one committed row per finished run."""

    def __init__(self, path: str):
        import duckdb

        self.path = path
        self.db = duckdb.connect(path)
        cols = ", ".join(f"{n} {t}" for n, t in COLUMNS)
        self.db.execute(f"CREATE TABLE IF NOT EXISTS runs ({cols})")
        # Databases written before timed mode lack its columns.
        have = {n for (n,) in self.db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'runs'").fetchall()}
        for n, t in COLUMNS:
            if n not in have:
                self.db.execute(f"ALTER TABLE runs ADD COLUMN {n} {t}")
        # Keys present when the sweep started: only those need INSERT OR REPLACE, which costs
        # DuckDB about 2.5x a plain INSERT (3.8 ms against 1.4 ms a row, on the main thread
        # that otherwise only waits for runs).
        self.existing = self.done_keys()

    def done_keys(self) -> set[str]:
        return {k for (k,) in self.db.execute("SELECT key FROM runs").fetchall()}

    def write(self, spec: RunSpec, result: dict[str, Any], seconds: float) -> None:
        row = {**asdict(spec), "key": spec.key, "bufsim_version": _core.__version__}
        row.update({n: result[n] for n, _ in STAT_COLUMNS})
        row["request_sizes"] = json.dumps({str(size): n for size, n in result["request_sizes"]})
        row["policy_metrics"] = json.dumps(result["policy_metrics"], sort_keys=True)
        timeline = result.get("partition_timeline")
        row["partition_timeline"] = None if timeline is None else json.dumps(timeline)
        row.update({n: result.get(n) for n, _ in TIMING_COLUMNS})
        if row["devices"] is not None:
            row["devices"] = json.dumps(row["devices"])
        row["config"] = json.dumps(asdict(spec), sort_keys=True)
        row["seconds"] = seconds
        names = [n for n, _ in COLUMNS if n != "finished_at"]
        marks = ", ".join("?" for _ in names)
        verb = "INSERT OR REPLACE" if spec.key in self.existing else "INSERT"
        # One statement is one transaction: a row is there whole or not at all. DuckDB turns a
        # Ctrl-C that lands inside a statement into its own InterruptException (rolling the
        # statement back); make it the KeyboardInterrupt every other interrupted call raises.
        import duckdb

        try:
            self.db.execute(
                f"{verb} INTO runs ({', '.join(names)}, finished_at) VALUES ({marks}, now())",
                [row[n] for n in names],
            )
        except duckdb.InterruptException:
            raise KeyboardInterrupt from None
        self.existing.add(spec.key)

    def frame(self, keys: Sequence[str] | None = None):
        if keys is None:
            return self.db.execute("SELECT * FROM runs ORDER BY finished_at, key").df()
        self.db.execute("CREATE OR REPLACE TEMP TABLE wanted (key VARCHAR, pos INTEGER)")
        self.db.executemany("INSERT INTO wanted VALUES (?, ?)", [(k, i) for i, k in enumerate(keys)])
        return self.db.execute(
            "SELECT runs.* FROM runs JOIN wanted USING (key) ORDER BY wanted.pos").df()

    def export_parquet(self, out: str) -> int:
        self.db.execute(f"COPY (SELECT * FROM runs ORDER BY key) TO '{_sql_text(out)}' (FORMAT PARQUET)")
        return self.db.execute("SELECT count(*) FROM runs").fetchone()[0]

    def close(self) -> None:
        self.db.close()


def _sql_text(s: str) -> str:
    return s.replace("'", "''")


class Progress:
    """A bar with ETA on a terminal; plain progress lines otherwise (logs, CI)."""

    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total, self.done = total, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = self.stream.isatty()
        self.start = time.monotonic()
        self.last_line = -1.0

    def step(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done)
        if self.tty:
            width = 30
            fill = int(width * self.done / self.total)
            self.stream.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} runs, "
                              f"ETA {eta:5.0f}s ")
            if self.done == self.total:
                self.stream.write("\n")
        elif self.done == self.total or elapsed - self.last_line >= 2.0:
            self.last_line = elapsed
            self.stream.write(f"sweep: {self.done}/{self.total} runs done, ETA {eta:.0f}s\n")
        self.stream.flush()


def core_kwargs(r: RunSpec) -> dict[str, Any]:
    """Keyword arguments of ``_core.Trace.run`` / ``_core.run`` for a run's settings."""
    kw: dict[str, Any] = {"block_size": r.block_size, "reads_only": r.reads_only, "cluster": r.cluster,
                          "file_gap": r.file_gap, "first_level": _first_level_core(r.first_level)}
    if r.timing:
        kw.update(timing=True, device=r.device, scheduler=r.io_scheduler, think=r.think,
                  single_stream=r.single_stream)
    if r.storage:
        kw["storage"] = _storage_core(r.storage)
    return kw


def _storage_core(text: str) -> tuple:
    """The core's storage tuple from a RunSpec's JSON (pairs back to tuples)."""
    array, pairs, network, closed, faults = json.loads(text)
    return (array, [tuple(p) for p in pairs], network, closed, faults)


def _first_level_core(text: str) -> tuple | None:
    from bufsim.hierarchy import FirstLevel

    return FirstLevel.from_json(text).to_core() if text else None


def result_row(r: RunSpec, res: dict[str, Any]) -> dict[str, Any]:
    """A core result with the run's timing settings, as :class:`bufsim.Result` names them."""
    if r.timing:
        res = {**res, "device": r.device, "scheduler": r.io_scheduler, "think": r.think,
               "single_stream": r.single_stream}
    if r.storage:
        res = {**res, **storage_echo(_storage_core(r.storage), {"timing": r.timing})}
    return res


# How each JSON column reads back as the Python value bufsim.Result holds.
JSON_DECODERS = {
    "devices": lambda v: v,
    "request_sizes": lambda v: {int(s): int(n) for s, n in v.items()},
    "partition_timeline": lambda v: v,
    "policy_metrics": lambda v: v,
}


def decode_json(column: str, value: Any) -> Any:
    """A JSON column's text as its Python value (anything else passes through)."""
    return JSON_DECODERS[column](json.loads(value)) if isinstance(value, str) else value


def result_of_row(row: dict[str, Any]) -> Result:
    """A :class:`bufsim.Result` from a row of the ``runs`` table (NULLs become ``None``)."""
    def plain(v: Any) -> Any:
        if v is None:
            return None
        if hasattr(v, "item"):
            v = v.item()
        if isinstance(v, float) and v != v:  # NaN: a NULL in a numeric column
            return None
        return v

    vals = {k: plain(v) for k, v in row.items()}
    vals["scheduler"] = vals.get("io_scheduler")
    for k in JSON_DECODERS:
        vals[k] = decode_json(k, vals.get(k))
    if not vals.get("timing"):
        for k in TIMING_FIELDS:
            vals[k] = None
    if isinstance(vals.get("storage"), str) and vals["storage"]:
        vals.update(storage_echo(_storage_core(vals["storage"]), {"timing": vals.get("timing")}))
    for k in ("streams", "inflight_misses", "sync_blocks", "async_blocks", "write_requests", "write_blocks"):
        if vals.get(k) is not None:
            vals[k] = int(vals[k])
    return Result(**{k: v for k, v in vals.items() if k in Result.__dataclass_fields__})


_WORKER_TRACES: dict[tuple[str, str], Any] = {}


def run_one(spec_dict: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """Runs one configuration; in a Dask worker the trace is loaded once per worker and kept."""
    spec = RunSpec(**spec_dict)
    key = (spec.trace, spec.trace_hash)
    trace = _WORKER_TRACES.get(key)
    if trace is None:
        trace = _WORKER_TRACES[key] = _core.Trace(spec.trace, format=spec.format)
    t0 = time.perf_counter()
    [result] = trace.run([spec.policy], [f"{spec.cache_blocks}blocks"], prefetches=[spec.prefetch],
                         seed=spec.seed, jobs=1, **core_kwargs(spec))
    return result_row(spec, result), time.perf_counter() - t0


def run_sweep(spec: SweepSpec, out: str = DEFAULT_DB, *, resume: bool = False, jobs: int = 0,
              scheduler: str | None = None, progress: bool = True):
    """Runs the sweep into the DuckDB file ``out`` and returns its rows (a DataFrame) in grid
    order. With ``resume`` runs already in ``out`` are skipped."""
    if scheduler:
        check_scheduler(scheduler)
    runs = list(spec.runs())
    if not runs:
        raise SpecError("the sweep is empty: give at least one trace, policy and cache size")
    # Validate every spec before any run: a typo must not surface after an hour.
    checked: set[tuple] = set()
    for r in runs:
        what = (r.policy, r.prefetch, r.device, r.io_scheduler, r.think, r.file_gap, r.first_level, r.storage)
        if what not in checked:
            checked.add(what)
            _validate(r)
    store = ResultsStore(out)
    try:
        done = store.existing if resume else set()
        # A grid that names a run twice (`-p lru -p lru`) runs it once.
        todo = list({r.key: r for r in runs if r.key not in done}.values())
        bar = Progress(len(todo), enabled=progress)
        if scheduler:
            _run_dask(todo, store, bar, scheduler)
        else:
            _run_local(todo, store, bar, jobs)
        return store.frame([r.key for r in runs])
    finally:
        store.close()


def _validate(r: RunSpec) -> None:
    import tempfile

    # A one-request trace in the run's own format would need per-format writers; the spec check
    # only needs the policy and read-ahead parsers, which a tiny csv exercises.
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write("op,file,offset,size\nR,f,0,1\n")
        name = f.name
    try:
        _core.run(name, [r.policy], ["1blocks"], prefetches=[r.prefetch], format="csv", **core_kwargs(r))
    except SpecError as e:
        raise SpecError(str(e)) from None
    finally:
        os.unlink(name)


def longest_first(runs: list[RunSpec]) -> list[RunSpec]:
    """The order to start runs in: largest caches first. A run's cost grows with its cache
    (more memory touched, deeper heaps), so the last runs to start are the short ones and no
    core idles long at the end while one big run finishes. Results are stored and returned in
    grid order regardless."""
    return sorted(runs, key=lambda r: -r.cache_blocks)


def _run_local(todo: list[RunSpec], store: ResultsStore, bar: Progress, jobs: int) -> None:
    workers = jobs or os.cpu_count() or 1
    by_trace: dict[tuple[str, str], list[RunSpec]] = {}
    for r in todo:
        by_trace.setdefault((r.trace, r.trace_hash), []).append(r)
    # One trace at a time: decoded once, shared by the threads, dropped before the next.
    for (path, _), runs in by_trace.items():
        trace = _core.Trace(path, format=runs[0].format)

        def work(r: RunSpec):
            t0 = time.perf_counter()
            [res] = trace.run([r.policy], [f"{r.cache_blocks}blocks"], prefetches=[r.prefetch],
                              seed=r.seed, jobs=1, **core_kwargs(r))
            return r, result_row(r, res), time.perf_counter() - t0

        with ThreadPoolExecutor(max_workers=workers) as pool, _InterruptAsFlag() as interrupted:
            pending = {pool.submit(work, r) for r in longest_first(runs)}
            try:
                while pending:
                    finished, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                    for f in finished:
                        r, res, secs = f.result()
                        store.write(r, res, secs)
                        bar.step()
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


def _run_dask(todo: list[RunSpec], store: ResultsStore, bar: Progress, scheduler: str) -> None:
    from dask.distributed import Client, as_completed

    with Client(scheduler, timeout="30s") as client:
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_S)
        except TimeoutError:
            raise SpecError(f"the Dask scheduler at {scheduler} has had no worker for {WORKER_WAIT_S} s; start one "
                            f"(`dask worker {scheduler}`) and run the sweep again with --resume") from None
        futures = {client.submit(run_one, asdict(r), pure=False, key=f"bufsim-{r.key}-{time.time_ns()}"): r
                   for r in longest_first(todo)}
        for fut in as_completed(futures):
            res, secs = fut.result()
            store.write(futures[fut], res, secs)
            bar.step()
