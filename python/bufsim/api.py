"""The Python API: ``run`` configurations into results, ``simulate`` one, ``sweep`` many into
a DataFrame. Options and result fields are the core's tables (``bufsim.options`` and
:data:`RESULT_FIELDS`); nothing here lists them again."""

from __future__ import annotations

import numbers
import os
import warnings

from bufsim import _core
from bufsim._core import SpecError
from bufsim.errors import path_of, shown
from bufsim.options import Options, block_size_bytes, size_text
from bufsim.results import RESULT_FIELDS, TIMING_FIELDS, Result, result_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping, Optional, Sequence

    import pandas

    from bufsim.options import PathLike, SizeLike

__all__ = [
    "Options",
    "Result",
    "RESULT_FIELDS",
    "TIMING_FIELDS",
    "block_size_bytes",
    "devices",
    "policies",
    "prefetchers",
    "result_of",
    "run",
    "simulate",
    "size_text",
    "sweep",
]


def _listed(values: Any, what: str, example: str) -> list[str]:
    if isinstance(values, (str, numbers.Integral)):
        values = [values]
    try:
        values = list(values)
    except TypeError:
        # A wrong type is named as a wrong value is, not left to the binding's TypeError.
        raise SpecError(f"give a {what} or a list of them ({example}), not {shown(values)}") from None
    if not values:
        raise SpecError(f"no {what} given; {example}")
    return values


def run(
    trace: PathLike,
    policies: Sequence[str] | str,
    caches: Sequence[SizeLike] | SizeLike,
    options: Optional[Mapping[str, Any]] = None,
    *,
    prefetches: Sequence[str] | str = ("none",),
    progress: Optional[bool] = None,
) -> list:
    """Runs every policy x read-ahead setting x cache size over ``trace`` (a path, or a trace
    decoded once, ``bufsim._core.Trace``) with ``options`` (an
    :class:`Options` or a mapping of option names, ``bufsim options`` lists them) and returns
    one :class:`Result` per run, in that order. The trace is decoded once and the runs go in
    parallel unless ``options`` sets ``jobs``. Progress (reading, then simulating, with the time
    left) shows on standard error when it is a terminal; ``progress=True`` or ``False`` decides."""
    from bufsim.progress import track

    opts = options if isinstance(options, Options) else Options(options)
    policies = [str(p) for p in _listed(policies, "policy", "name at least one, such as 'lru'")]
    caches = [size_text(c, "cache size") for c in _listed(caches, "cache size", "give at least one, such as '64MiB'")]
    prefetches = [str(p) for p in _listed(prefetches, "prefetch setting", "use 'none' to turn read-ahead off")]
    if isinstance(trace, _core.Trace):
        # A trace decoded once for many calls (its own format and skip report hold).
        rows = trace.run(policies, caches, prefetches, opts.to_json())
        trace = trace.path
    else:
        trace = path_of(trace, "trace")
        rows = track(_core.run, trace, policies, caches, prefetches, opts.to_json(), show=progress)
    results = [result_of(r) for r in rows]
    if results and results[0].skipped:
        from bufsim.formats import warn_skipped

        warn_skipped(trace, results[0].skipped)
    if results and results[0].cache_steps_unreached:
        warnings.warn(
            unreached_steps_text(trace, results[0].cache_steps, results[0].cache_steps_unreached), stacklevel=3
        )
    if results and results[0].requests == 0:
        # A header-only trace (or one whose every record was skipped or filtered out): zeros
        # that are not a measurement.
        warnings.warn(f"{os.fspath(trace)}: the trace holds no requests; every count is 0", stacklevel=3)
    return results


def unreached_steps_text(trace: PathLike, cache_steps: str, unreached: int) -> str:
    """The warning for the last ``unreached`` of ``cache_steps`` (the result field's text), whose
    request indices the trace never reached."""
    steps = cache_steps.split(";")
    late = steps[len(steps) - unreached :]
    return (
        f"{os.fspath(trace)}: the trace ends before request {late[0].split('=')[0]}: cache steps "
        f"{';'.join(late)} never applied (request indices count from 0, every record of the trace counted)"
    )


def simulate(
    trace: PathLike, policy: str = "lru", cache: SizeLike = "64MiB", *, prefetch: str = "none", **options: Any
):
    """Simulates one policy at one cache size over ``trace`` and returns its :class:`Result`.

    ``policy`` is a spec string (``"lru"``, ``"lfu(aging=dynamic)"``; see :func:`policies`),
    ``cache`` a size (an int is blocks), ``prefetch`` a read-ahead spec (``"none"``,
    ``"linux"``, ``"linux-ondemand"``, ``"bsd"``, ``"simple(min=3,max=8)"``; see
    :func:`prefetchers`). Every other keyword is a run option of the core's table (``bufsim
    options`` lists them with defaults): ``block_size``, ``cluster``, ``seed``, ``file_gap``;
    timed mode (docs/timing.md) with ``timing``, ``device``, ``io_scheduler``, ``think``,
    ``single_stream``, any of which turns it on; ``first_level`` (a :class:`bufsim.FirstLevel`)
    for the second level of a hierarchy (docs/hierarchy.md); storage-aware caching
    (docs/storage-aware.md) with ``array``, ``device_for`` (``{0: "ibm-9lzx(age=10)"}`` or
    ``["0-3=ibm-9lzx(age=2)"]``), ``network``, ``closed`` and ``faults``.

    Raises ``FileNotFoundError``, ``TraceFormatError`` (malformed or undetectable trace) or
    ``SpecError`` (bad policy, size or option). With ``skip_bad`` malformed records are counted
    and passed over instead (``Result.skipped_records``, and a
    ``bufsim.formats.SkippedRecordsWarning`` naming where they are).
    """
    return run(trace, [policy], [cache], Options(options).replace(jobs=options.get("jobs", 1)), prefetches=[prefetch])[
        0
    ]


def sweep(
    trace: PathLike | Sequence[PathLike],
    policies: Sequence[str] | str,
    caches: Sequence[SizeLike] | SizeLike,
    *,
    prefetches: Sequence[str] | str = ("none",),
    out: PathLike | None = None,
    resume: bool = False,
    dask: str | None = None,
    progress: Optional[bool] = None,
    **options: Any,
) -> "pandas.DataFrame":
    """Runs every trace x policy x read-ahead setting x cache size and returns one DataFrame
    row per run, in that order, its columns the fields of :class:`Result`. Each trace is
    decoded once; runs use all cores unless ``jobs`` says otherwise. ``caches`` may hold ranges
    such as ``"1024blocks:131072blocks:x2"``. Every other keyword is a run option, as for
    :func:`simulate`.

    With ``out`` (a DuckDB file, as ``bufsim sweep --out``) every finished run is also
    committed to its ``runs`` table the moment it ends, so an interrupted sweep loses nothing;
    ``resume=True`` skips runs already there, ``dask="tcp://host:8786"`` runs on a Dask
    cluster, and progress shows on stderr when it is a terminal (``progress=True`` or ``False`` decides). The rows then carry the table's extra
    columns (``key``, ``trace``, ``trace_hash``, ``bufsim_version``, ``seconds``, ...). Without
    ``out`` the sweep stays in memory (and several traces get a ``trace`` column)."""
    import pandas as pd

    from bufsim.sweeps import SweepSpec, cache_range, result_of_row, run_sweep

    if isinstance(trace, (str, os.PathLike)):
        traces = [os.fspath(trace)]
    else:
        traces = [path_of(t, "trace") for t in _listed(trace, "trace", "name at least one trace file")]
    if not traces:
        raise SpecError("no trace given; name at least one trace file")
    # Lists once, as run() takes them: a single name or size, or any iterable (a generator is
    # read here, not exhausted by a check before the runs).
    policies = [str(p) for p in _listed(policies, "policy", "name at least one, such as 'lru'")]
    caches = _listed(caches, "cache size", "give at least one, such as '64MiB'")
    prefetches = [str(p) for p in _listed(prefetches, "prefetch setting", "use 'none' to turn read-ahead off")]
    opts = Options(options)
    if out is not None:
        if opts.get("check"):
            raise SpecError("check=True works in memory only; leave out `out` to use it")
        jobs = opts.get("jobs", 0)
        spec = SweepSpec(traces, list(policies), list(caches), list(prefetches), options=opts.replace(jobs=None))
        from bufsim.progress import wanted

        shown = progress if progress is not None else wanted()
        rows = run_sweep(spec, path_of(out, "out"), resume=resume, jobs=jobs, dask=dask, progress=shown)
        # Each row read back as a Result, so its columns equal an in-memory sweep's (JSON decoded,
        # count-mode timing fields None), followed by the table's own columns (key, trace, ...).
        records = rows.to_dict("records")
        df = pd.DataFrame([result_of_row(r).to_dict() for r in records], columns=[f["name"] for f in RESULT_FIELDS])
        extra = [c for c in rows.columns if c not in df.columns]
        return pd.concat([df, rows[extra].reset_index(drop=True)], axis=1)
    if resume or dask:
        raise SpecError("resume and dask need a results database: pass out='results.duckdb'")
    bs = opts.resolved(policies, prefetches=prefetches)["block_size"]
    sizes = [s for c in caches for s in cache_range(size_text(c, "cache size"), bs)]
    frames = []
    for t in traces:
        results = run(t, policies, sizes, opts, prefetches=prefetches)
        df = pd.DataFrame([r.to_dict() for r in results], columns=[f["name"] for f in RESULT_FIELDS])
        if len(traces) > 1:
            df.insert(0, "trace", t)
        frames.append(df)
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def registry(kind: str) -> list[dict[str, Any]]:
    """One registry of the core: ``policy``, ``prefetch``, ``device``, ``scheduler`` or
    ``generator``. Each entry has kind, name, aliases, paper, summary, ``preset_of``, ``params``
    (each ``(name, default, doc)``) with their ``ranges`` in the same order, and the capability
    flags ``needs_future`` and ``partitioned``."""
    if not isinstance(kind, str):
        raise SpecError(f"unknown registry {kind!r:.60}; use one of policy, prefetch, device, scheduler, generator")
    return _core.registry(kind)


def policies() -> list[dict[str, Any]]:
    """The policy registry (policies, then presets): see :func:`registry`."""
    return registry("policy")


def prefetchers() -> list[dict[str, Any]]:
    """The read-ahead algorithms: see :func:`registry`."""
    return registry("prefetch")


def devices() -> list[dict[str, Any]]:
    """Device models, device presets and I/O schedulers of timed mode, kind ``device``,
    ``preset`` or ``scheduler``: see :func:`registry`."""
    models = [dict(d, kind="preset" if d["preset_of"] else "device") for d in registry("device")]
    return models + registry("scheduler")
