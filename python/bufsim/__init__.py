"""bufsim: a trace-driven buffer cache simulator.

    >>> import bufsim
    >>> r = bufsim.simulate("trace.csv", policy="lru", cache="64MiB")   # doctest: +SKIP
    >>> r.hit_ratio                                                      # doctest: +SKIP

The simulation runs in Rust (``bufsim._core``); this package holds the Python conveniences:
results as plain objects and pandas DataFrames, the ``bufsim`` command line, and errors as
specific exceptions carrying the same one-line messages the command line prints.
"""

from __future__ import annotations

from bufsim._core import BufsimError, SpecError, TraceFormatError, __version__

# Not imported at run time (typing itself costs start-up time); type checkers and
# readers see what the package exports.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from bufsim.api import RESULT_FIELDS, Result, devices, policies, prefetchers, registry, run, simulate, sweep
    from bufsim.options import OPTION_FIELDS, Options
    from bufsim.hierarchy import FirstLevel, filter_trace
    from bufsim.amp import detect, generate, generators, partition_timeline, plot_partition_timeline
    from bufsim.analysis import Analysis, analyze, distance_breakdown, mrc
    from bufsim.formats import SkippedRecordsWarning, convert

# The API's names load with their module on first use, so the command line (a subpackage,
# which imports this file first) starts without them.
_LAZY = {
    "bufsim.api": [
        "RESULT_FIELDS",
        "Result",
        "devices",
        "policies",
        "prefetchers",
        "registry",
        "run",
        "simulate",
        "sweep",
    ],
    "bufsim.options": ["OPTION_FIELDS", "Options"],
    "bufsim.hierarchy": ["FirstLevel", "filter_trace"],
    "bufsim.amp": ["detect", "generate", "generators", "partition_timeline", "plot_partition_timeline"],
    "bufsim.analysis": ["Analysis", "analyze", "distance_breakdown", "mrc"],
    "bufsim.formats": ["SkippedRecordsWarning", "convert"],
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    import importlib

    module = _MODULE_OF.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif name.startswith("_"):
        raise AttributeError(f"module 'bufsim' has no attribute {name!r}")
    else:
        # A submodule not imported yet (`bufsim.results` after `import bufsim`), as when this
        # file imported the API eagerly.
        try:
            value = importlib.import_module(f"bufsim.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"bufsim.{name}":
                raise
            raise AttributeError(f"module 'bufsim' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = [
    "__version__",
    "Analysis",
    "analyze",
    "BufsimError",
    "convert",
    "detect",
    "devices",
    "distance_breakdown",
    "filter_trace",
    "FirstLevel",
    "generate",
    "generators",
    "mrc",
    "OPTION_FIELDS",
    "Options",
    "partition_timeline",
    "plot_partition_timeline",
    "policies",
    "prefetchers",
    "registry",
    "Result",
    "RESULT_FIELDS",
    "run",
    "simulate",
    "SkippedRecordsWarning",
    "SpecError",
    "sweep",
    "TraceFormatError",
]
