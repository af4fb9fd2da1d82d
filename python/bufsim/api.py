"""The Python API: ``simulate`` one configuration, ``sweep`` many into a DataFrame."""

from __future__ import annotations

import os
import warnings
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from bufsim import _core
from bufsim._core import SpecError

if TYPE_CHECKING:
    import pandas

PathLike = Union[str, "os.PathLike[str]"]
SizeLike = Union[int, str]
"""A size: an ``int`` is a number of blocks; a string carries its unit (``"64MiB"``, ``"2000blocks"``)."""


DEFAULT_DEVICE = "st39102lw"
DEFAULT_IO_SCHEDULER = "noop"


@dataclass(frozen=True)
class Result:
    """Counters of one (policy, cache size) run over a trace; with ``timing``, also its execution
    time and I/O timing (the fields from ``device`` on, ``None`` in count mode; see
    docs/timing.md)."""

    policy: str
    prefetch: str
    cache_blocks: int
    block_size: int
    requests: int
    accesses: int
    hits: int
    misses: int
    hit_ratio: float
    write_accesses: int
    write_misses: int
    evictions: int
    disk_requests: int
    sync_requests: int
    async_requests: int
    blocks_read: int
    prefetched: int
    prefetch_hits: int
    prefetched_unused: int
    # Disk requests by size in blocks ({size: requests}; 128 stands for 128 or more).
    request_sizes: dict[int, int] = field(default_factory=dict)
    # What the policy reports about itself, e.g. DULO's block table memory.
    policy_metrics: dict[str, float] = field(default_factory=dict)
    # Partitioned policies (AMP, PCC, DEAR; storage-aware static, eager-lru, lazy-lru, lazy-clock):
    # {"unit": "accesses", "samples": [[time, partition, blocks], ...]} ("unit": "s" with times in
    # simulated seconds for storage-aware policies in timed mode), the shape `bufsim plot
    # partitions` reads; None for the others.
    partition_timeline: Optional[dict] = None
    # Timed mode: the settings...
    device: Optional[str] = None
    scheduler: Optional[str] = None
    think: Optional[str] = None
    single_stream: Optional[bool] = None
    # ...and the results (times of the simulated run).
    exec_time_s: Optional[float] = None
    io_time_s: Optional[float] = None
    stall_time_s: Optional[float] = None
    think_time_s: Optional[float] = None
    end_time_s: Optional[float] = None
    streams: Optional[int] = None
    inflight_misses: Optional[int] = None
    sync_blocks: Optional[int] = None
    sync_time_ms: Optional[float] = None
    async_blocks: Optional[int] = None
    async_time_ms: Optional[float] = None
    write_requests: Optional[int] = None
    write_blocks: Optional[int] = None
    write_time_ms: Optional[float] = None
    service_mean_ms: Optional[float] = None
    service_p50_ms: Optional[float] = None
    service_p90_ms: Optional[float] = None
    service_p99_ms: Optional[float] = None
    response_mean_ms: Optional[float] = None
    response_p50_ms: Optional[float] = None
    response_p90_ms: Optional[float] = None
    response_p99_ms: Optional[float] = None
    devices: Optional[list] = None
    # Storage-aware caching (docs/storage-aware.md): requested MB (10^6 bytes) per second of
    # execution time, and the storage settings of the run.
    throughput_mb_s: Optional[float] = None
    array: Optional[str] = None
    device_for: Optional[str] = None
    network: Optional[str] = None
    closed: Optional[int] = None
    faults: Optional[str] = None

    @property
    def timed(self) -> bool:
        return self.exec_time_s is not None

    def sequence_size_cdf(self) -> list[tuple[int, float]]:
        """DULO's sequence-size CDF (Figures 3 and 4): for each request size s seen, the share
        of the blocks read from disk that came in requests of at most s blocks."""
        total = sum(size * n for size, n in self.request_sizes.items())
        out, acc = [], 0
        for size in sorted(self.request_sizes):
            acc += size * self.request_sizes[size]
            out.append((size, acc / total))
        return out
    skipped_records: int = 0
    """Malformed trace records passed over (``skip_bad=True``); 0 otherwise."""
    skipped: str = ""
    """Where the first skipped records are, one line ("" when none were skipped)."""

    @property
    def miss_ratio(self) -> float:
        return 1.0 - self.hit_ratio if self.accesses else 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


TIMING_FIELDS = [f.name for f in fields(Result) if f.default is None]
"""Fields that only timed runs fill."""


def size_text(size: SizeLike, what: str = "size") -> str:
    """Normalizes a size for the core: ints are block counts."""
    if isinstance(size, bool):
        raise SpecError(f"{what} must be a number of blocks or a string such as '64MiB', not {size!r}")
    if isinstance(size, int):
        if size <= 0:
            raise SpecError(f"{what} {size} must be a positive number of blocks")
        return f"{size}blocks"
    if isinstance(size, str):
        return size
    raise SpecError(f"{what} must be a number of blocks or a string such as '64MiB', not {size!r}")


def block_size_bytes(block_size: SizeLike) -> int:
    """Block size in bytes: an int is bytes here, a string carries its unit (``"4KiB"``)."""
    if isinstance(block_size, bool) or not isinstance(block_size, (int, str)):
        raise SpecError(f"block size must be bytes or a string such as '4KiB', not {block_size!r}")
    if isinstance(block_size, int):
        n = block_size
    else:
        text = block_size.strip()
        n = _core.size_to_blocks(text, 1) if not text.endswith("blocks") else -1
        if n < 0:
            raise SpecError(f"block size `{text}` must be in bytes, such as 4KiB")
    # The core's rule (run.rs, MIN_BLOCK_SIZE/MAX_BLOCK_SIZE), checked here too so helpers that
    # only convert sizes (filter, analyze) refuse the same values with the same words.
    if not (512 <= n <= 1 << 30) or n & (n - 1):
        raise SpecError(f"block size {n} B must be a power of two from 512 B (a sector) to 1 GiB, such as 4KiB")
    return n


def _run(
    trace: PathLike,
    policies: Sequence[str],
    caches: Sequence[SizeLike],
    *,
    prefetches: Sequence[str] = ("none",),
    format: str,
    block_size: SizeLike,
    reads_only: bool,
    cluster: SizeLike = "64KiB",
    seed: int,
    jobs: int,
    check: bool,
    timing: Optional[bool] = None,
    device: Optional[str] = None,
    scheduler: Optional[str] = None,
    think: Union[str, float, None] = None,
    single_stream: bool = False,
    file_gap: SizeLike = 0,
    first_level: Any = None,
    skip_bad: bool = False,
    array: Union[str, int, None] = None,
    device_for: Any = None,
    network: Optional[str] = None,
    closed: Optional[int] = None,
    faults: Any = None,
) -> list[Result]:
    if isinstance(policies, str):
        policies = [policies]
    if not policies:
        raise SpecError("no policy given; name at least one, such as 'lru'")
    if not caches:
        raise SpecError("no cache size given; give at least one, such as '64MiB'")
    if isinstance(prefetches, str):
        prefetches = [prefetches]
    if not prefetches:
        raise SpecError("no prefetch setting given; use 'none' to turn read-ahead off")
    if seed < 0 or jobs < 0:
        raise SpecError("seed and jobs must be zero or more")
    storage, timed_storage = storage_args(array, device_for, network, closed, faults)
    if timed_storage and timing is False:
        raise SpecError("device_for, network, closed and faults only apply to timed runs; drop timing=False")
    t = timing_args(True if timed_storage and timing is None else timing, device, scheduler, think, single_stream)
    rows = _core.run(
        os.fspath(trace),
        [str(p) for p in policies],
        [size_text(c, "cache size") for c in caches],
        prefetches=[str(p) for p in prefetches],
        format=format,
        block_size=block_size_bytes(block_size),
        reads_only=reads_only,
        cluster=size_text(cluster, "cluster size"),
        seed=seed,
        jobs=jobs,
        check=check,
        file_gap=gap_text(file_gap),
        first_level=_first_level(first_level),
        skip_bad=skip_bad,
        storage=storage,
        **t,
    )
    echo = {**timing_echo(t), **storage_echo(storage, t)}
    results = [Result(**{**row, "request_sizes": dict(row["request_sizes"])}, **echo) for row in rows]
    if results:
        from bufsim.formats import warn_skipped

        warn_skipped(trace, results[0].skipped)
        if results[0].requests == 0:
            warnings.warn(f"{os.fspath(trace)}: the trace holds no requests; every count is 0", stacklevel=3)
    return results


def device_for_pairs(device_for: Any) -> list[tuple[int, str]]:
    """Per-device specs as ``[(device, spec)]`` from a dict ``{3: "ibm-9lzx(age=10)"}``, pairs,
    or strings ``"3=SPEC"``, ``"0-3=SPEC"`` (a range) or ``"2,5=SPEC"`` (a list)."""
    if device_for is None:
        return []
    items: list = list(device_for.items()) if isinstance(device_for, dict) else (
        [device_for] if isinstance(device_for, str) else list(device_for))
    out: list[tuple[int, str]] = []
    for item in items:
        if isinstance(item, str):
            key, sep, spec = item.partition("=")
            if not sep or not spec.strip():
                raise SpecError(f"device spec `{item}` must be ID=SPEC, such as 3=ibm-9lzx(age=10) or 0-7=ibm-9lzx")
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            key, spec = item
        else:
            raise SpecError(f"device spec {item!r} must be ID=SPEC or a (device, spec) pair")
        for part in str(key).split(","):
            lo, dash, hi = part.strip().partition("-")
            try:
                ids = range(int(lo), int(hi) + 1) if dash else [int(lo)]
            except ValueError:
                raise SpecError(f"device `{part.strip()}` in `{key}={spec}` must be a device id, a range such as 0-7, "
                                "or ids separated by commas") from None
            if not ids:
                raise SpecError(f"device range `{part.strip()}` in `{key}={spec}` is empty; write it low-high, such as 0-7")
            for d in ids:
                if not 0 <= d < 65535:
                    raise SpecError(f"device {d} in `{key}={spec}` is not a device id (0 to 65534)")
                out.append((d, str(spec).strip()))
    return out


def storage_args(array: Union[str, int, None], device_for: Any, network: Optional[str], closed: Optional[int],
                 faults: Any) -> tuple[Optional[tuple], bool]:
    """The core's storage tuple ``(array, device_for, network, closed, faults)`` (``None`` when
    nothing is set) and whether the settings need timed mode (everything but the array)."""
    pairs = device_for_pairs(device_for)
    if isinstance(faults, str):
        faults = [faults]
    faults = [str(f) for f in (faults or [])]
    if closed is not None and (isinstance(closed, bool) or not isinstance(closed, int) or closed < 1):
        raise SpecError(f"closed must be a number of outstanding requests of at least 1, not {closed!r}")
    if closed is not None and closed > _core.MAX_CLOSED:
        raise SpecError(f"a closed workload takes at most {_core.MAX_CLOSED} outstanding requests, not {closed}")
    if isinstance(array, bool):
        raise SpecError(f"array must be a spec such as 'raid0(devices=16,unit=8KiB)' or a device count, not {array!r}")
    array_text = str(array) if array is not None else None
    if array_text is None and not pairs and network is None and closed is None and not faults:
        return None, False
    timed = bool(pairs or network is not None or closed is not None or faults)
    return (array_text, pairs, str(network or "none"), closed, faults), timed


def storage_echo(storage: Optional[tuple], t: dict[str, Any]) -> dict[str, Any]:
    """The storage settings a result records (strings, so they fit a table)."""
    if storage is None:
        return {}
    array, pairs, network, closed, faults = storage
    echo: dict[str, Any] = {"array": array}
    if t["timing"]:
        echo.update(device_for=";".join(f"{d}={s}" for d, s in pairs) or None, network=network, closed=closed,
                    faults=";".join(faults) or None)
    return echo


def _first_level(first_level: Any) -> tuple | None:
    from bufsim.hierarchy import FirstLevel

    if first_level is None:
        return None
    if not isinstance(first_level, FirstLevel):
        raise SpecError(f"first_level must be a bufsim.FirstLevel, not {first_level!r}")
    return first_level.to_core()


def timing_args(timing: Optional[bool], device: Optional[str], scheduler: Optional[str],
                think: Union[str, float, None], single_stream: bool) -> dict[str, Any]:
    """Keyword arguments of the core for timed mode. Any timing option turns it on unless
    ``timing=False`` says otherwise, which is then an error."""
    given = [n for n, v in (("device", device), ("scheduler", scheduler), ("think", think)) if v is not None]
    if single_stream:
        given.append("single_stream")
    if timing is None:
        timing = bool(given)
    elif not timing and given:
        raise SpecError(f"{', '.join(given)} only apply to timed runs; drop timing=False")
    if not timing:
        return {"timing": False}
    return {
        "timing": True,
        "device": str(device or DEFAULT_DEVICE),
        "scheduler": str(scheduler or DEFAULT_IO_SCHEDULER),
        "think": think_text(think),
        "single_stream": bool(single_stream),
    }


def timing_echo(t: dict[str, Any]) -> dict[str, Any]:
    """The settings a timed result records."""
    if not t["timing"]:
        return {}
    return {k: t[k] for k in ("device", "scheduler", "think", "single_stream")}


def think_text(think: Union[str, float, None]) -> str:
    """``None`` or ``"trace"``: think times from the trace; a number is seconds; a string
    carries its unit (``"0.1ms"``)."""
    if think is None:
        return "trace"
    if isinstance(think, bool):
        raise SpecError(f"think must be 'trace', a time such as '0.1ms' or seconds, not {think!r}")
    if isinstance(think, (int, float)):
        if think < 0:
            raise SpecError(f"think time {think} must not be negative")
        return f"{think!r}s" if think else "0"
    if isinstance(think, str):
        return think
    raise SpecError(f"think must be 'trace', a time such as '0.1ms' or seconds, not {think!r}")


def gap_text(gap: SizeLike) -> str:
    """A file gap: like a size, but 0 is allowed (no gap)."""
    if isinstance(gap, int) and not isinstance(gap, bool) and gap == 0:
        return "0blocks"
    return size_text(gap, "file gap")


def simulate(
    trace: PathLike,
    policy: str = "lru",
    cache: SizeLike = "64MiB",
    *,
    prefetch: str = "none",
    format: str = "auto",
    block_size: SizeLike = 4096,
    reads_only: bool = False,
    cluster: SizeLike = "64KiB",
    seed: int = 42,
    check: bool = False,
    timing: Optional[bool] = None,
    device: Optional[str] = None,
    scheduler: Optional[str] = None,
    think: Union[str, float, None] = None,
    single_stream: bool = False,
    file_gap: SizeLike = 0,
    first_level: Any = None,
    skip_bad: bool = False,
    array: Union[str, int, None] = None,
    device_for: Any = None,
    network: Optional[str] = None,
    closed: Optional[int] = None,
    faults: Any = None,
) -> Result:
    """Simulates one policy at one cache size over ``trace`` and returns its counters.

    ``policy`` is a spec string (``"lru"``, ``"lfu(aging=dynamic)"``; see :func:`policies`),
    ``cache`` a size (an int is blocks), ``prefetch`` a read-ahead spec (``"none"``,
    ``"linux"``, ``"linux-ondemand"``, ``"bsd"``, ``"simple(min=3,max=8)"``; see
    :func:`prefetchers`), ``cluster`` the largest disk request, ``file_gap`` free space between
    the files of a file trace on the device. With ``first_level`` (a :class:`bufsim.FirstLevel`)
    the run simulates the second level of that hierarchy (docs/hierarchy.md).

    ``timing=True`` runs timed mode (docs/timing.md): ``device`` and ``scheduler`` are specs
    (see :func:`devices`; default ``st39102lw`` and ``noop``), ``think`` is ``"trace"`` (from
    the trace's times), a time such as ``"0.1ms"`` or a number of seconds, and
    ``single_stream`` merges all pids into one stream. Giving any of them turns timing on.

    Storage-aware caching (docs/storage-aware.md): ``array`` stripes the trace over a RAID-0
    array (``"raid0(devices=16,unit=8KiB)"`` or a device count; count mode too);
    ``device_for`` gives single devices their own spec (``{0: "ibm-9lzx(age=10)"}`` or
    ``["0-3=ibm-9lzx(age=2)"]``), ``network`` the network (``"loggp"``), ``closed`` a closed
    workload with that many outstanding requests, ``faults`` performance faults
    (``["device=6,at=500s,slowdown=2"]``); these four turn timing on. Timed results then carry
    ``throughput_mb_s``.
    Raises ``FileNotFoundError``, ``TraceFormatError`` (malformed or undetectable trace) or
    ``SpecError`` (bad policy, size or option). With ``skip_bad`` malformed records are counted
    and passed over instead (``Result.skipped_records``, and a
    ``bufsim.formats.SkippedRecordsWarning`` naming where they are).
    """
    return _run(
        trace, [policy], [cache], prefetches=[prefetch], format=format, block_size=block_size,
        reads_only=reads_only, cluster=cluster, seed=seed, jobs=1, check=check, timing=timing,
        device=device, scheduler=scheduler, think=think, single_stream=single_stream, file_gap=file_gap,
        first_level=first_level, skip_bad=skip_bad, array=array, device_for=device_for, network=network,
        closed=closed, faults=faults,
    )[0]


def sweep(
    trace: PathLike | Sequence[PathLike],
    policies: Sequence[str],
    caches: Sequence[SizeLike],
    *,
    prefetches: Sequence[str] = ("none",),
    format: str = "auto",
    block_size: SizeLike = 4096,
    reads_only: bool = False,
    cluster: SizeLike = "64KiB",
    seed: int = 42,
    jobs: int = 0,
    check: bool = False,
    timing: Optional[bool] = None,
    device: Optional[str] = None,
    scheduler: Optional[str] = None,
    think: Union[str, float, None] = None,
    single_stream: bool = False,
    file_gap: SizeLike = 0,
    first_level: Any = None,
    skip_bad: bool = False,
    array: Union[str, int, None] = None,
    device_for: Any = None,
    network: Optional[str] = None,
    closed: Optional[int] = None,
    faults: Any = None,
    out: PathLike | None = None,
    resume: bool = False,
    dask: str | None = None,
    progress: bool = False,
) -> "pandas.DataFrame":
    """Runs every trace x policy x read-ahead setting x cache size and returns one DataFrame
    row per run, in that order. Each trace is decoded once; runs use all cores unless ``jobs``
    says otherwise. ``caches`` may hold ranges such as ``"1024blocks:131072blocks:x2"``. Timing,
    hierarchy (``first_level``), storage (``array``, ``device_for``, ``network``, ``closed``,
    ``faults``) and ``skip_bad`` options as for :func:`simulate`.

    With ``out`` (a DuckDB file, as ``bufsim sweep --out``) every finished run is also
    committed to its ``runs`` table the moment it ends, so an interrupted sweep loses nothing;
    ``resume=True`` skips runs already there, ``dask="tcp://host:8786"`` runs on a Dask
    cluster, ``progress=True`` shows progress on stderr. The rows then carry the table's extra
    columns (``key``, ``trace``, ``trace_hash``, ``bufsim_version``, ``seconds``, ...). Without
    ``out`` the sweep stays in memory (and several traces get a ``trace`` column)."""
    import pandas as pd

    from bufsim.sweeps import SweepSpec, cache_range, result_of_row, run_sweep

    traces = [os.fspath(trace)] if isinstance(trace, (str, os.PathLike)) else [os.fspath(t) for t in trace]
    if isinstance(policies, str):
        policies = [policies]
    if isinstance(prefetches, str):
        prefetches = [prefetches]
    if out is not None:
        if check or skip_bad:
            raise SpecError("check=True and skip_bad=True work in memory only; leave out `out` to use them")
        storage = dict(array=array, device_for=device_for, network=network, closed=closed, faults=faults)
        timed_storage = storage_args(**storage)[1]
        t = timing_args(True if timed_storage and timing is None else timing, device, scheduler, think, single_stream)
        spec = SweepSpec(traces=traces, policies=list(policies), caches=list(caches), prefetches=list(prefetches),
                         format=format, block_size=block_size, reads_only=reads_only, cluster=cluster, seed=seed,
                         timing=t["timing"], devices=[t["device"]] if t["timing"] else None,
                         io_schedulers=[t["scheduler"]] if t["timing"] else None,
                         think=t.get("think", "trace"), single_stream=bool(t.get("single_stream", False)),
                         file_gap=gap_text(file_gap), first_level=first_level,
                         storage={k: v for k, v in storage.items() if v is not None} or None)
        rows = run_sweep(spec, os.fspath(out), resume=resume, jobs=jobs, scheduler=dask, progress=progress)
        # Each row read back as a Result, so its columns equal an in-memory sweep's (JSON decoded,
        # count-mode timing fields None), followed by the table's own columns (key, trace, ...).
        records = rows.to_dict("records")
        df = pd.DataFrame([result_of_row(r).to_dict() for r in records])
        extra = [c for c in rows.columns if c not in df.columns]
        return pd.concat([df, rows[extra].reset_index(drop=True)], axis=1)
    if resume or dask:
        raise SpecError("resume and dask need a results database: pass out='results.duckdb'")
    bs = block_size_bytes(block_size)
    sizes = [s for c in caches for s in cache_range(size_text(c, "cache size"), bs)]
    frames = []
    for t in traces:
        results = _run(
            t, policies, sizes, prefetches=prefetches, format=format, block_size=block_size,
            reads_only=reads_only, cluster=cluster, seed=seed, jobs=jobs, check=check, timing=timing,
            device=device, scheduler=scheduler, think=think, single_stream=single_stream, file_gap=file_gap,
            first_level=first_level, skip_bad=skip_bad, array=array, device_for=device_for, network=network,
            closed=closed, faults=faults,
        )
        df = pd.DataFrame([r.to_dict() for r in results])
        if len(traces) > 1:
            df.insert(0, "trace", t)
        frames.append(df)
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def policies() -> list[dict[str, Any]]:
    """The policy registry: name, aliases, paper, summary, parameters ``(name, default, doc)``."""
    return _core.policies()


def prefetchers() -> list[dict[str, Any]]:
    """The read-ahead algorithms: name, source, parameters ``(name, default, doc)``."""
    return _core.prefetchers()


def devices() -> list[dict[str, Any]]:
    """Device models, device presets and I/O schedulers of timed mode: kind (``device``,
    ``preset``, ``scheduler``), name, aliases, source, summary, ``preset_of`` and parameters
    ``(name, default, doc)``."""
    return _core.devices()
