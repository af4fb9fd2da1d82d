"""The Python API: ``simulate`` one configuration, ``sweep`` many into a DataFrame."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Sequence, Union

from bufsim import _core
from bufsim._core import SpecError

if TYPE_CHECKING:
    import pandas

PathLike = Union[str, "os.PathLike[str]"]
SizeLike = Union[int, str]
"""A size: an ``int`` is a number of blocks; a string carries its unit (``"64MiB"``, ``"2000blocks"``)."""


@dataclass(frozen=True)
class Result:
    """Counters of one (policy, cache size) run over a trace."""

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

    @property
    def miss_ratio(self) -> float:
        return 1.0 - self.hit_ratio if self.accesses else 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    if n <= 0:
        raise SpecError(f"block size {block_size!r} must be at least 1 byte")
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
    )
    return [Result(**row) for row in rows]


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
) -> Result:
    """Simulates one policy at one cache size over ``trace`` and returns its counters.

    ``policy`` is a spec string (``"lru"``, ``"lfu(aging=dynamic)"``; see :func:`policies`),
    ``cache`` a size (an int is blocks), ``prefetch`` a read-ahead spec (``"none"``,
    ``"linux"``, ``"linux-ondemand"``, ``"bsd"``, ``"simple(min=3,max=8)"``; see
    :func:`prefetchers`), ``cluster`` the largest disk request. Raises ``FileNotFoundError``, ``TraceFormatError``
    (malformed or undetectable trace) or ``SpecError`` (bad policy, size or option).
    """
    return _run(
        trace, [policy], [cache], prefetches=[prefetch], format=format, block_size=block_size,
        reads_only=reads_only, cluster=cluster, seed=seed, jobs=1, check=check,
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
    out: PathLike | None = None,
    resume: bool = False,
    scheduler: str | None = None,
    progress: bool = False,
) -> "pandas.DataFrame":
    """Runs every trace x policy x read-ahead setting x cache size and returns one DataFrame
    row per run, in that order. Each trace is decoded once; runs use all cores unless ``jobs``
    says otherwise. ``caches`` may hold ranges such as ``"1024blocks:131072blocks:x2"``.

    With ``out`` (a DuckDB file, as ``bufsim sweep --out``) every finished run is also
    committed to its ``runs`` table the moment it ends, so an interrupted sweep loses nothing;
    ``resume=True`` skips runs already there, ``scheduler="tcp://host:8786"`` runs on a Dask
    cluster, ``progress=True`` shows progress on stderr. The rows then carry the table's extra
    columns (``key``, ``trace``, ``trace_hash``, ``bufsim_version``, ``seconds``, ...). Without
    ``out`` the sweep stays in memory (and several traces get a ``trace`` column)."""
    import pandas as pd

    from bufsim.sweeps import SweepSpec, cache_range, run_sweep

    traces = [os.fspath(trace)] if isinstance(trace, (str, os.PathLike)) else [os.fspath(t) for t in trace]
    if isinstance(policies, str):
        policies = [policies]
    if isinstance(prefetches, str):
        prefetches = [prefetches]
    if out is not None:
        if check:
            raise SpecError("check=True runs the invariant checks in memory only; leave out `out` to use it")
        spec = SweepSpec(traces=traces, policies=list(policies), caches=list(caches), prefetches=list(prefetches),
                         format=format, block_size=block_size, reads_only=reads_only, cluster=cluster, seed=seed)
        return run_sweep(spec, os.fspath(out), resume=resume, jobs=jobs, scheduler=scheduler, progress=progress)
    if resume or scheduler:
        raise SpecError("resume and scheduler need a results database: pass out='results.duckdb'")
    bs = block_size_bytes(block_size)
    sizes = [s for c in caches for s in cache_range(size_text(c, "cache size"), bs)]
    frames = []
    for t in traces:
        results = _run(
            t, policies, sizes, prefetches=prefetches, format=format, block_size=block_size,
            reads_only=reads_only, cluster=cluster, seed=seed, jobs=jobs, check=check,
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
